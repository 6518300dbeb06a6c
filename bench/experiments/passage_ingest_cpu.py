"""Ingest CPU added by the passage channel: the demo crawl (make_demo_crawl, 66 pages)
ingested end to end on the embedded default (SQLite, eager tasks: every step runs in
this process, the database's work included), once with PASSAGE_CHANNEL off and once on,
each in a fresh database, repeated; CPU time of the process (time.process_time).

    .venv/bin/python bench/experiments/passage_ingest_cpu.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_ingest import off_and_on  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    result = off_and_on(args.repeat, {"PASSAGE_CHANNEL": "0"}, {"PASSAGE_CHANNEL": "1"})
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
