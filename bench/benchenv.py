"""What every benchmark prints about where it ran: the machine, the commit, and a commit's
source tree exported for A/B runs. A leaf module: benchmarks import it, it imports none."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tarfile
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"


def _cpuinfo_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def git_describe() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return f"{rev}{' (uncommitted changes)' if dirty else ''}" if rev else "unknown"
    except OSError:
        return "unknown"


def export_rev(rev: str) -> tuple[Path, str]:
    """`git archive` of a commit into bench/out/src-<sha>/ (reused when present)."""
    sha = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dest = OUT / f"src-{sha[:12]}"
    if not (dest / "manage.py").exists():
        tmp = dest.with_name(dest.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.Popen(["git", "archive", sha], cwd=ROOT, stdout=subprocess.PIPE)
        with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
            tar.extractall(tmp, filter="data")
        if archive.wait() != 0:
            raise RuntimeError(f"git archive {sha} failed")
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
    return dest, sha


def machine() -> dict:
    return {
        "cpu": _cpuinfo_model(),
        "nproc": os.cpu_count(),
        "ram_gb": round(_mem_total_gb(), 1),
        "python": platform.python_version(),
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        "commit": git_describe(),
    }
