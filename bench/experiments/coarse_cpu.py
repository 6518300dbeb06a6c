"""CPU of the coarse passage storage's picks (ingest.core.passages.coarse) on the real
English gold texts of extraction-dev, against its implementation at another commit (the
scan of every window before the sliding minimum): the same picks for every text, and the
median over 5 runs of the CPU time a text (time.process_time).

    .venv/bin/python bench/experiments/coarse_cpu.py --before 2ddb58d
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ingest.core import passages as P  # noqa: E402


def module_at(commit: str) -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{commit}:ingest/core/passages.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("passages_before")
    module.__dict__["__name__"] = "passages_before"
    sys.modules["passages_before"] = module
    exec(compile(source, "passages_before.py", "exec"), module.__dict__)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="commit of the implementation to compare")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    before = module_at(args.before)
    texts = [
        row["gold_text"]
        for line in (args.data / "extraction-dev" / "manifest.jsonl").open()
        if (row := json.loads(line)).get("gold_text")
    ]
    found = [P.passages(t, method=P.MIXED_METHOD) for t in texts]
    long = [f for f in found if len(P.hash_set(f)) > P.COARSE.whole_max]
    for f in long:
        old = before.coarse([before.Passage(p.hash, p.start) for p in f], P.COARSE.window)
        assert P.coarse(f, P.COARSE.window) == old
    print(f"{len(texts)} texts, {len(long)} with more than {P.COARSE.whole_max} passages")
    medians = {}
    for name, fn in (("before", before.coarse), ("now", P.coarse)):
        runs = []
        for _ in range(5):
            t = time.process_time()
            for f in long:
                fn(f, P.COARSE.window)
            runs.append((time.process_time() - t) / len(long) * 1e6)
        medians[name] = statistics.median(runs)
        print(f"{name}: {medians[name]:.1f} CPU µs a text (runs {[round(r) for r in runs]})")
    t = time.process_time()
    for text in texts:
        P.passages(text, method=P.MIXED_METHOD)
    print(f"passages() itself: {(time.process_time() - t) / len(texts) * 1e6:.1f} CPU µs a text")
    print(f"before / now: {medians['before'] / medians['now']:.2f}")


if __name__ == "__main__":
    main()
