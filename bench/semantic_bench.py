"""The semantic channel's model, measured without Django: embedding cost per document and
how well the cosine separates human-judged duplicates (ingest/core/embeddings.py rules).

Needs the semantic extra (sentence-transformers and torch), not the desk's venv:

    PYTHONPATH=. /path/to/semantic-venv/bin/python bench/semantic_bench.py --model /path/to/model

- Cost: the gold main texts of ../shared/data/extraction-dev, cut by the text rule
  (`main-first-words-v1`, then the tokenizer's truncation at the model's token limit),
  embedded in batches with torch on 1 and then 2 threads; CPU ms (the process's CPU time,
  all threads) and wall ms per document, after one warm-up batch.
- Quality: ../shared/data/copycat-judgments, ROC AUC of the cosine for labels 2–3 against
  0.5 (the one "0.5s" typo counts as 0.5), with float32 vectors and with the stored float16
  packing, and the largest |cos32 - cos16| over every judged pair; beside it the AUC of
  the pairs' own CopyCat S3 score (word 8-gram overlap, in the data).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import torch
from sentence_transformers import SentenceTransformer

from ingest.core.embeddings import cosine, embedding_text, normalize, pack

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
POSITIVE = {"2", "3"}
NEGATIVE = {"0.5", "0.5s"}


def roc_auc(scores: list[float], labels: list[bool]) -> float:
    """Mann-Whitney: the chance a positive outscores a negative (ties count half)."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    pos, neg = s[y], s[~y]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def embed(model: SentenceTransformer, texts: list[str], batch: int) -> npt.NDArray[np.float32]:
    out = model.encode(texts, batch_size=batch, convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(out, dtype=np.float32)


def cost(model: SentenceTransformer, texts: list[str], batch: int, threads: int) -> dict:
    torch.set_num_threads(threads)
    embed(model, texts[:batch], batch)  # warm-up
    cpu0, wall0 = time.process_time(), time.perf_counter()
    embed(model, texts, batch)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {
        "threads": threads,
        "cpu_ms_per_doc": round(1000 * cpu / len(texts), 1),
        "wall_ms_per_doc": round(1000 * wall / len(texts), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="sentence-transformers model dir or name")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()

    t0 = time.perf_counter()
    model = SentenceTransformer(args.model, device="cpu")
    load_s = time.perf_counter() - t0
    max_tokens = int(model.max_seq_length)
    # sentence-transformers 6 renamed get_sentence_embedding_dimension.
    dims = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )()
    print(f"model {args.model}: {dims} dims, max {max_tokens} tokens, loaded in {load_s:.1f} s")
    print(f"stored vector: {2 * dims} bytes (float16)")

    manifest = args.data / "extraction-dev" / "manifest.jsonl"
    pages = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    texts = [embedding_text(p["gold_text"], max_tokens) for p in pages]
    texts = [t for t in texts if t]
    token_counts = [len(model.tokenizer(t)["input_ids"]) for t in texts]
    at_limit = sum(n >= max_tokens for n in token_counts)
    print(
        f"extraction-dev gold texts: {len(texts)}; {at_limit} reach the {max_tokens}-token limit "
        f"(median {int(np.median(token_counts))} tokens before the cut)"
    )
    for threads in (1, 2):
        print("cost", json.dumps(cost(model, texts, args.batch, threads)))

    torch.set_num_threads(2)
    path = args.data / "copycat-judgments" / "judgments.jsonl.gz"
    with gzip.open(path, "rt") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows = [r for r in rows if r["a_text"] and r["b_text"]]
    a = embed(model, [embedding_text(r["a_text"], max_tokens) for r in rows], args.batch)
    b = embed(model, [embedding_text(r["b_text"], max_tokens) for r in rows], args.batch)
    cos32: list[float] = []
    cos16: list[float] = []
    for va, vb in zip(a, b, strict=True):
        cos32.append(float(np.dot(normalize(va), normalize(vb))))
        cos16.append(cosine(pack(va), pack(vb)))
    judged = [i for i, r in enumerate(rows) if str(r["label"]) in POSITIVE | NEGATIVE]
    labels = [str(rows[i]["label"]) in POSITIVE for i in judged]
    auc32 = roc_auc([cos32[i] for i in judged], labels)
    auc16 = roc_auc([cos16[i] for i in judged], labels)
    auc_s3 = roc_auc([float(rows[i]["s3"]) for i in judged], labels)
    diff = max(abs(x - y) for x, y in zip(cos32, cos16, strict=True))
    print(
        f"copycat: {sum(labels)} pairs labelled 2-3, {len(labels) - sum(labels)} labelled 0.5; "
        f"ROC AUC float32 {auc32:.3f}, float16 {auc16:.3f}; "
        f"max |cos32 - cos16| {diff:.5f} over {len(rows)} pairs"
    )
    print(f"  beside it: the judgments' own CopyCat S3 (word 8-grams), ROC AUC {auc_s3:.3f}")
    for name, group in (("2-3", POSITIVE), ("0.5", NEGATIVE)):
        values = [cos16[i] for i, r in enumerate(rows) if str(r["label"]) in group]
        print(f"  cosine, label {name}: median {np.median(values):.3f}")


if __name__ == "__main__":
    main()
