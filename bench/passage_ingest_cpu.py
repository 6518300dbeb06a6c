"""Ingest CPU added by the passage channel: the demo crawl (make_demo_crawl, 66 pages)
ingested end to end on the embedded default (SQLite, eager tasks: every step runs in
this process, the database's work included), once with PASSAGE_CHANNEL off and once on,
each in a fresh database, repeated; CPU time of the process (time.process_time).

    .venv/bin/python bench/passage_ingest_cpu.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one(channel: bool, warc: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as data:
        env = {
            k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")
        }
        env.update(DATA_DIR=data, PASSAGE_CHANNEL="1" if channel else "0", PYTHONPATH=str(ROOT))
        code = (
            "import django, os, time, json; "
            "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'dedup_site.settings'); "
            "django.setup(); from django.core.management import call_command; "
            "call_command('migrate', verbosity=0); "
            "from ingest.models import Document, CandidatePair; "
            "t = time.process_time(); "
            f"call_command('ingest', '{warc}', '--no-progress', verbosity=0); "
            "cpu = time.process_time() - t; "
            "print(json.dumps({'cpu_s': cpu, 'documents': Document.objects.count(), "
            "'pairs': CandidatePair.objects.count()}))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        warc = Path(tmp) / "demo.warc.gz"
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "make_demo_crawl", str(warc)],
            check=True,
            capture_output=True,
            env={**os.environ, "DATA_DIR": tmp},
        )
        runs: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
        for _ in range(args.repeat):
            for name in ("off", "on"):
                runs[name].append(one(name == "on", warc))
    med = {k: sorted(r["cpu_s"] for r in v)[len(v) // 2] for k, v in runs.items()}
    docs = runs["on"][0]["documents"]
    print(
        json.dumps(
            {
                "runs": runs,
                "median_cpu_s": med,
                "documents": docs,
                "added_cpu_ms_per_page": round(1000 * (med["on"] - med["off"]) / docs, 2),
                "load_avg": os.getloadavg(),
                "at": time.strftime("%Y-%m-%d %H:%M:%S"),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
