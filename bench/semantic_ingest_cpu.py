"""Ingest CPU added by the semantic channel: the demo crawl (make_demo_crawl) ingested end
to end on the embedded default (SQLite, eager tasks: every step, the embeddings and the
nomination included, runs in this process), once with EMBEDDING_MODEL empty (off) and
once set (on), each in a fresh database, interleaved and repeated; CPU time of the
process (time.process_time). The model is loaded before the clock starts (a worker loads
it once). Texts are cut by the text rule: the first max_seq_length (256) words, then the
tokenizer's truncation at 256 tokens.

    .venv/bin/python bench/semantic_ingest_cpu.py --model var/models/all-MiniLM-L6-v2 \
        [--repeat 3] [--threads 2]
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


def one(model: str, warc: Path, threads: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as data:
        env = {
            k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")
        }
        env.update(
            DATA_DIR=data,
            EMBEDDING_MODEL=model,
            HF_HUB_OFFLINE="1",
            PYTHONPATH=str(ROOT),
            OMP_NUM_THREADS=str(threads),
        )
        code = (
            "import django, os, time, json; "
            "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'dedup_site.settings'); "
            "django.setup(); from django.core.management import call_command; "
            "import torch; torch.set_num_threads(int(os.environ['OMP_NUM_THREADS'])) "
            "if os.environ['EMBEDDING_MODEL'] else None; "
            "call_command('migrate', verbosity=0); "
            "from ingest import embedder; "
            "embedder.model_limits() if os.environ['EMBEDDING_MODEL'] else None; "
            "from ingest.models import Document, CandidatePair, Embedding; "
            "t = time.process_time(); w = time.perf_counter(); "
            f"call_command('ingest', '{warc}', '--no-progress', verbosity=0); "
            "cpu = time.process_time() - t; wall = time.perf_counter() - w; "
            "print(json.dumps({'cpu_s': cpu, 'wall_s': wall, "
            "'documents': Document.objects.count(), "
            "'embedded': Embedding.objects.filter(status='covered').count(), "
            "'pairs': CandidatePair.objects.count(), "
            "'semantic_pairs': CandidatePair.objects.filter(channels__gte=8).count()}))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="model directory (make semantic)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    model = str(Path(args.model).resolve())
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
                runs[name].append(one(model if name == "on" else "", warc, args.threads))
    med = {k: sorted(r["cpu_s"] for r in v)[len(v) // 2] for k, v in runs.items()}
    wall = {k: sorted(r["wall_s"] for r in v)[len(v) // 2] for k, v in runs.items()}
    docs = runs["on"][0]["documents"]
    print(
        json.dumps(
            {
                "runs": runs,
                "median_cpu_s": med,
                "median_wall_s": wall,
                "documents": docs,
                "added_cpu_ms_per_page": round(1000 * (med["on"] - med["off"]) / docs, 2),
                "added_wall_ms_per_page": round(1000 * (wall["on"] - wall["off"]) / docs, 2),
                "threads": args.threads,
                "load_avg": os.getloadavg(),
                "at": time.strftime("%Y-%m-%d %H:%M:%S"),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
