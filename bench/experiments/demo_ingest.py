"""What a channel adds to ingest, on the demo crawl: the crawl (make_demo_crawl) ingested
end to end on the embedded default (SQLite, eager tasks: every step, the database's work
included, runs in one process), each run in a fresh database, the channel off and on
interleaved and repeated; CPU (time.process_time) and wall time of the ingest command.
Used by bench/experiments/passage_ingest_cpu.py and bench/experiments/semantic_ingest_cpu.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def demo_warc(tmp: Path) -> Path:
    """The demo crawl written to `tmp`."""
    warc = tmp / "demo.warc.gz"
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "make_demo_crawl", str(warc)],
        check=True,
        capture_output=True,
        env={**os.environ, "DATA_DIR": str(tmp)},
    )
    return warc


def ingest_once(
    warc: Path,
    env: Mapping[str, str],
    *,
    setup: str = "",
    counts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One ingest of `warc` in a fresh database, with these settings (environment).
    `setup`: statements run before the clock starts (after migrate); `counts`: name →
    expression, evaluated after the ingest, reported beside the documents and pairs."""
    with tempfile.TemporaryDirectory() as data:
        run_env = {
            k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")
        }
        run_env.update(env, DATA_DIR=data, PYTHONPATH=str(ROOT))
        reported = {
            "documents": "Document.objects.count()",
            "pairs": "CandidatePair.objects.count()",
            **(counts or {}),
        }
        code = "\n".join(
            [
                "import django, os, time, json",
                "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'dedup_site.settings')",
                "django.setup()",
                "from django.core.management import call_command",
                "call_command('migrate', verbosity=0)",
                "from ingest.models import CandidatePair, Document, Embedding",
                setup,
                "t = time.process_time(); w = time.perf_counter()",
                f"call_command('ingest', {str(warc)!r}, '--no-progress', verbosity=0)",
                "cpu = time.process_time() - t; wall = time.perf_counter() - w",
                "print(json.dumps({'cpu_s': cpu, 'wall_s': wall, "
                + ", ".join(f"{name!r}: {expr}" for name, expr in reported.items())
                + "}))",
            ]
        )
        out = subprocess.run(
            [sys.executable, "-c", code], env=run_env, capture_output=True, text=True, check=True
        )
        return json.loads(out.stdout.strip().splitlines()[-1])


def off_and_on(
    repeat: int,
    off: Mapping[str, str],
    on: Mapping[str, str],
    *,
    setup: str = "",
    counts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The demo crawl ingested with the `off` and the `on` settings, interleaved, `repeat`
    times each; medians and what the channel adds per page."""
    with tempfile.TemporaryDirectory() as tmp:
        warc = demo_warc(Path(tmp))
        runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
        for _ in range(repeat):
            for name, env in (("off", off), ("on", on)):
                runs[name].append(ingest_once(warc, env, setup=setup, counts=counts))
    cpu = {k: sorted(r["cpu_s"] for r in v)[len(v) // 2] for k, v in runs.items()}
    wall = {k: sorted(r["wall_s"] for r in v)[len(v) // 2] for k, v in runs.items()}
    docs = runs["on"][0]["documents"]
    return {
        "runs": runs,
        "median_cpu_s": cpu,
        "median_wall_s": wall,
        "documents": docs,
        "added_cpu_ms_per_page": round(1000 * (cpu["on"] - cpu["off"]) / docs, 2),
        "added_wall_ms_per_page": round(1000 * (wall["on"] - wall["off"]) / docs, 2),
        "load_avg": os.getloadavg(),
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
