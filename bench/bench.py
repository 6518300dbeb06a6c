"""Dedup Desk benchmark (`make bench`): fingerprint throughput, ingest end to end and
the candidate index.

    .venv/bin/python bench/bench.py                   # everything (~10-20 minutes)
    .venv/bin/python bench/bench.py --fingerprint-only
    .venv/bin/python bench/bench.py --ingest-only --pages 2000
    .venv/bin/python bench/bench.py --candidates-only  # bench/candidates_bench.py
    .venv/bin/python bench/bench.py --rev HEAD         # a commit, not the working tree

Prints the figures with the fingerprint and candidate-index targets next to them and writes the same
data as JSON to bench/out/bench-<date>.json (the candidates section also to
bench/out/candidates-<date>.json). Needs PostgreSQL (127.0.0.1:5432, user postgres)
for the ingest and candidates parts, and Redis (127.0.0.1:6379, db 13 is flushed) for
the ingest part.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
sys.path.insert(0, str(BENCH))

from benchenv import export_rev, machine  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Dedup Desk benchmark")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--fingerprint-only", action="store_true")
    only.add_argument("--ingest-only", "--ingest", dest="ingest_only", action="store_true")
    only.add_argument(
        "--candidates-only",
        action="store_true",
        help="only the candidate index section (bench/candidates_bench.py)",
    )
    only.add_argument(
        "--extraction-only",
        action="store_true",
        help="only extraction and decoding on real pages (bench/extraction_bench.py)",
    )
    parser.add_argument(
        "--real-pages",
        type=int,
        default=0,
        help="ingest section on N records of real pages instead of generated ones",
    )
    parser.add_argument(
        "--data",
        type=Path,
        help="the extraction-dev data set (default ../shared/data/extraction-dev): the"
        " extraction section and --real-pages",
    )
    parser.add_argument("--pages", type=int, default=10_000, help="pages in the ingest WARC")
    parser.add_argument("--docs", type=int, default=300, help="300-1,500-word fingerprint docs")
    parser.add_argument(
        "--rev", help="benchmark this commit (exported with git archive), not the working tree"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    OUT.mkdir(parents=True, exist_ok=True)
    info = machine()
    if args.rev:
        project, sha = export_rev(args.rev)
        os.environ["BENCH_PROJECT_ROOT"] = str(project)
        info["commit"] = f"{sha[:12]} ({args.rev}, exported to {project.relative_to(ROOT)})"
    import candidates_bench
    import extraction_bench
    import fingerprint_bench
    import ingest_bench

    data: Path = args.data or extraction_bench.DEFAULT_DATA
    result: dict = {"machine": info}
    print("Dedup Desk benchmark")
    print(
        f"machine: {info['cpu']}, {info['nproc']} CPUs, {info['ram_gb']:g} GB RAM, Python "
        f"{info['python']}, {info['date']}, load average at start "
        f"{' '.join(str(x) for x in info['load_avg_at_start'])}\ncode under test: commit "
        f"{info['commit']}"
    )
    if info["load_avg_at_start"][0] > 0.5:
        print(
            "  note: the machine was not idle at start (load average above); figures below "
            "share the CPUs with whatever else runs"
        )

    chosen = (
        args.fingerprint_only or args.ingest_only or args.candidates_only or args.extraction_only
    )
    if args.fingerprint_only or not chosen:
        print("\n== 1. Fingerprint throughput (same documents, same process) ==", flush=True)
        res = fingerprint_bench.run(args.docs)
        result["fingerprint"] = res
        print("\n".join(fingerprint_bench.report(res)), flush=True)

    if args.ingest_only or not chosen:
        kind = f"{args.real_pages} real" if args.real_pages else f"{args.pages} generated"
        print(
            f"\n== 2. Ingest end to end ({kind} pages, PostgreSQL, 2 Celery workers) ==",
            flush=True,
        )
        if args.real_pages:
            res = ingest_bench.run(args.real_pages, real=True, data=data)
        else:
            res = ingest_bench.run(args.pages)
        result["ingest"] = res
        print("\n".join(ingest_bench.report(res)), flush=True)

    if args.candidates_only or not chosen:
        print(
            "\n== 3. Candidate index (PostgreSQL, 100,000 and 1,000,000 fingerprints) and "
            "/api/v1/check ==",
            flush=True,
        )
        res = candidates_bench.run(machine=info)
        result["candidates"] = res
        print("\n".join(candidates_bench.report(res)), flush=True)

    if args.extraction_only or not chosen:
        print("\n== 4. Extraction and decoding on real pages (extraction-dev) ==", flush=True)
        if (data / "manifest.jsonl").exists():
            pages = extraction_bench.load(data, None)
            result["extraction"] = extraction_bench.report(extraction_bench.run_main(pages))
        else:
            print(f"  skipped: no data at {data}")

    result["bench_s"] = time.perf_counter() - started
    stamp = datetime.now().strftime("%Y-%m-%d-%H%M%S")
    path = OUT / f"bench-{stamp}.json"
    path.write_text(json.dumps(result, indent=2, default=str))
    print(f"\n(benchmark took {result['bench_s']:.0f}s; JSON: {path.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
