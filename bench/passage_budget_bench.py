"""Passage storage variants side by side: recall first, stored passages second.

For each storage (``--storage``, repeatable; ingest/core/passages.py ``Storage``, or a
variant written ``mod=M,whole=N,limit=L,lookup=S,window=W`` as bench/passages_bench.py
reads it), in one process on the same corpora:

- bench/passages_bench.py's partial copies (recall per channel and combined, the
  same-template negatives nominated, stored passages a document);
- bench/short_copies_bench.py's short copies (recall with the short-copy rule, the
  negatives nominated, the pairs the index found);
- the stored passages a document on the scale bench's distribution (bench/scale_bench.py:
  articles of 200-1,500 words, one passage per 18 words, hashes uniform) and the bytes
  they would take at the measured cost of a stored passage and of a row (``--passage-b``,
  ``--row-b``; the scale bench itself measures them).

    .venv/bin/python bench/passage_budget_bench.py --data ../shared/data \\
        --storage smallest64-v1 --storage mod=8,whole=12,lookup=1 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import passages_bench  # noqa: E402
import short_copies_bench  # noqa: E402

from ingest.core import passages as P  # noqa: E402


def scale_stored(storage: P.Storage, n: int = 5_000, seed: int = 1) -> float:
    """Mean stored passages a document on the scale bench's distribution: articles of
    200-1,500 words of random words, winnowed by the product."""
    rng = np.random.default_rng(seed)
    words = rng.integers(200, 1500, size=n)
    total = 0
    for w in words:
        tokens = [f"w{x}" for x in rng.integers(0, 50_000, size=int(w)).tolist()]
        total += len(storage.stored(P.passages_of(tokens)))
    return total / n


def run(spec: str, data: Path, passage_b: float, row_b: float) -> dict[str, Any]:
    storage = passages_bench.parse_storage(spec)
    passages_bench.STORAGE = storage
    t = time.process_time()
    partial = passages_bench.partial_copy(passages_bench.build_corpus(data=data))
    short_docs = short_copies_bench.build_corpus(data, 12, 7)
    short = short_copies_bench.evaluate(short_docs)
    stored = scale_stored(storage)
    rule = short["short_rule_shipped"]  # type: ignore[index]
    return {
        "storage": spec,
        "lookup_min": passages_bench.lookup_min(),
        "partial_recall_passages": partial["recall"]["passages"],  # type: ignore[index]
        "partial_recall_combined": partial["recall"]["combined"],  # type: ignore[index]
        "partial_recall_by_kind": {
            k: v["combined"]
            for k, v in partial["recall_by_kind"].items()  # type: ignore[union-attr]
        },
        "partial_negatives": partial["negatives_nominated"]["passages"],  # type: ignore[index]
        "partial_stored_mean": partial["passages_per_doc_mean"],
        "short_recall": rule["recall"],
        "short_recall_by_kind": rule["recall_by_kind"],
        "short_negatives": rule["negatives_nominated"],
        "short_index_pairs": short["pairs_found_by_index"],  # type: ignore[index]
        "scale_stored_mean": round(stored, 2),
        "scale_bytes_estimate": round(row_b + passage_b * stored, 1),
        "cpu_s": round(time.process_time() - t, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=passages_bench.DATA)
    parser.add_argument("--storage", action="append", default=[])
    parser.add_argument("--passage-b", type=float, default=44.0, help="bytes a stored passage")
    parser.add_argument("--row-b", type=float, default=85.0, help="bytes a row and its key")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out = {
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "runs": [run(s, args.data, args.passage_b, args.row_b) for s in args.storage],
    }
    for r in out["runs"]:
        print(
            f"{r['storage']:<40} partial {r['partial_recall_passages']:.3f}/"
            f"{r['partial_recall_combined']:.3f} neg {r['partial_negatives']:>3} "
            f"short {r['short_recall']:.3f} neg {r['short_negatives']} "
            f"stored(real) {r['partial_stored_mean']:>5} stored(scale) {r['scale_stored_mean']:>6}"
            f" ~{r['scale_bytes_estimate']:.0f} B",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
