"""Ingest CPU added by the semantic channel: the demo crawl (make_demo_crawl) ingested end
to end on the embedded default (SQLite, eager tasks: every step, the embeddings and the
nomination included, runs in this process), once with EMBEDDING_MODEL empty (off) and
once set (on), each in a fresh database, interleaved and repeated; CPU time of the
process (time.process_time). The model is loaded before the clock starts (a worker loads
it once). Texts are cut by the text rule: the first max_seq_length (256) words, then the
tokenizer's truncation at 256 tokens.

    .venv/bin/python bench/experiments/semantic_ingest_cpu.py --model var/models/all-MiniLM-L6-v2 \
        [--repeat 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_ingest import off_and_on  # noqa: E402

# With the channel on: torch's threads set and the model loaded before the clock.
SETUP = """
if os.environ['EMBEDDING_MODEL']:
    import torch
    torch.set_num_threads(int(os.environ['OMP_NUM_THREADS']))
    from ingest import embedder
    embedder.model_limits()
"""
COUNTS = {
    "embedded": "Embedding.objects.filter(status='covered').count()",
    "semantic_pairs": "CandidatePair.objects.filter(channels__gte=8).count()",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="model directory (make semantic)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    common = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": str(args.threads)}
    model = str(Path(args.model).resolve())
    result = off_and_on(
        args.repeat,
        {**common, "EMBEDDING_MODEL": ""},
        {**common, "EMBEDDING_MODEL": model},
        setup=SETUP,
        counts=COUNTS,
    )
    print(json.dumps({**result, "threads": args.threads}, indent=2))


if __name__ == "__main__":
    main()
