"""MinHash-LSH channel benchmark: recall against brute-force Jaccard, lookup cost and
signature CPU (ingest/core/minhash.py, the product's pure functions; no database).

1. Recall. The real article texts of ../shared/data/extraction-dev (gold_text, at least
   120 words), each with three edited copies (1–8% of the words replaced by other words
   of the corpus): every pair's exact Jaccard similarity of token 5-shingles by brute
   force; the pairs at or above the threshold; how many share an LSH band, and how many
   a lookup returns (band shared, estimate at least threshold - MARGIN), the channel's
   recall (the pair builder then verifies by the exact Jaccard similarity).
2. Chinese and Vietnamese. The labelled pairs of ../shared/data/zh-vi-dev (pages
   extracted by the product's extractor): the share of each label the channel nominates
   (exact Jaccard at or above the threshold) and the estimate's error.
3. CPU: shingles + signature per document (median ms), bands per document.

    PYTHONPATH=. .venv/bin/python bench/minhash_bench.py [--data DIR] [--threshold 0.7]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path

from benchenv import ROOT, machine

from ingest.core import minhash
from ingest.core.extract import extract

MARGIN = 0.15  # ingest.channels.minhash.MARGIN (that module needs Django)


def edited(rng: random.Random, text: str, share: float, vocab: list[str]) -> str:
    words = text.split()
    for _ in range(max(1, round(len(words) * share))):
        words[rng.randrange(len(words))] = rng.choice(vocab)
    return " ".join(words)


def recall_part(data: Path, threshold: float, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    with open(data / "extraction-dev" / "manifest.jsonl") as f:
        golds = [r["gold_text"] for r in map(json.loads, f) if len(r["gold_text"].split()) >= 120]
    vocab = sorted({w for g in golds[:40] for w in re.findall(r"[a-z]{4,9}", g)})
    texts: list[str] = []
    for g in golds:
        texts.append(g)
        texts += [edited(rng, g, rng.uniform(0.01, 0.08), vocab) for _ in range(3)]
    cpu: list[float] = []
    features: dict[int, set[str]] = {}
    for i, t in enumerate(texts):
        start = time.process_time()
        features[i] = minhash.shingles(t)
        minhash.signature(features[i])
        cpu.append((time.process_time() - start) * 1000)
    start = time.process_time()
    r = minhash.recall(features, threshold, MARGIN)
    brute_s = time.process_time() - start
    n = len(texts)
    return {
        "documents": n,
        "pairs_compared": n * (n - 1) // 2,
        "pairs_at_threshold": r.pairs,
        "band_recall": round(r.band_recall, 4),
        "recall": round(r.recall, 4),
        "returned_pairs": r.candidates,
        "returned_per_true_pair": round(r.candidates / r.pairs, 3) if r.pairs else None,
        "signature_ms_median": round(statistics.median(cpu), 3),
        "signature_ms_p95": round(sorted(cpu)[int(0.95 * len(cpu))], 3),
        "shingles_median": statistics.median(len(f) for f in features.values()),
        "brute_force_and_lsh_cpu_s": round(brute_s, 1),
    }


def zh_vi_part(data: Path, threshold: float) -> dict[str, object]:
    base = data / "zh-vi-dev"
    texts: dict[str, str] = {}
    with gzip.open(base / "pages.jsonl.gz", "rt") as f:
        for row in map(json.loads, f):
            texts[row["id"]] = extract(row["html"], url=row.get("url", "")).main_text
    by_label: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    with open(base / "pairs.jsonl") as f:
        for row in map(json.loads, f):
            fa, fb = minhash.shingles(texts[row["a"]]), minhash.shingles(texts[row["b"]])
            sa, sb = minhash.signature(fa), minhash.signature(fb)
            if sa is None or sb is None:
                continue
            by_label[(row["lang"], row["label"])].append(
                (minhash.jaccard(fa, fb), minhash.estimate(sa, sb))
            )
    out: dict[str, object] = {}
    for (lang, label), rows in sorted(by_label.items()):
        out[f"{lang}/{label}"] = {
            "pairs": len(rows),
            "nominated": sum(j >= threshold for j, _ in rows),
            "jaccard_median": round(statistics.median(j for j, _ in rows), 3),
            "max_estimate_error": round(max(abs(j - e) for j, e in rows), 3),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data", help="data sets directory"
    )
    parser.add_argument("--threshold", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(machine()))
    print(f"method {minhash.METHOD}, threshold {args.threshold}, lookup margin {MARGIN}")
    print(json.dumps({"recall": recall_part(args.data, args.threshold, args.seed)}, indent=2))
    print(json.dumps({"zh_vi_pairs": zh_vi_part(args.data, args.threshold)}, indent=2))


if __name__ == "__main__":
    main()
