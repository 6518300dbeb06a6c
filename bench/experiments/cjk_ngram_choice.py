"""Which tokens should the mixed-script method read in CJK runs, and does Vietnamese
word segmentation help? Measured on the labelled zh-vi-dev pairs.

For every labelled pair the product's extractor gives both main texts; each choice
tokenizes them after the mixed-script normalization (ingest.core.normalize:
``normalize_mixed_v1``) and the SimHash distance of the pair is computed. Reported per
choice: the positives' (duplicate, near-duplicate, revision) distances against the hard
negatives' (label ``different``, same template or same site), and against every pair of
two different articles of the language (pages of one positive component are one
article):

- ``rec@neg2%``: recall of positives at the largest distance where at most 2% of the
  negatives fall (hard negatives, then all cross-article pairs);
- ``rec@3``: recall at the shipped threshold (3 bits), with the negatives at ≤ 3 bits;
- ``AUC``: the chance that a positive is nearer than a negative (ties count half).

Pairs where a text has fewer than 3 tokens (empty extractions, JavaScript shells) are
left out and counted. Then CPU per page of fingerprint (SimHash + SHA-256) and
passages, old (reference) and new (mixed) method, for Chinese and English texts.

    .venv/bin/python bench/experiments/cjk_ngram_choice.py [--data ../shared/data] [--skip-timing]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ingest.core import passages as passages_core  # noqa: E402
from ingest.core.extract import extract  # noqa: E402
from ingest.core.methods import fingerprint_text  # noqa: E402
from ingest.core.normalize import (  # noqa: E402
    mixed_tokens,
    normalize_mixed_v1,
    normalize_nfc_v1,
    normalize_nfkc_v1,
    recent_clear,
    tokens_cjk_bigrams,
    tokens_words,
)
from ingest.core.simhash import cache_clear, hamming, simhash64_fast  # noqa: E402

POSITIVE = {"duplicate", "near-duplicate", "revision"}
# Negatives that are the same text on both sides (empty extractions, list pages): a
# crawl-quality matter no tokenizer separates; left out of the hard negatives here.
CRAWL_QUALITY_KINDS = {"vi_empty_extraction", "zh_list_pages_same_site"}
MIN_TOKENS = 3

Tokenize = Callable[[str], list[str]]


def _zh_choices() -> dict[str, Tokenize]:
    return {
        "words (reference)": lambda t: tokens_words(normalize_nfc_v1(t)),
        "words, mixed normalization": lambda t: tokens_words(normalize_mixed_v1(t)),
        "cjkbigram-v1 (NFKC all)": lambda t: tokens_cjk_bigrams(normalize_nfkc_v1(t)),
        "unigram": lambda t: mixed_tokens(normalize_mixed_v1(t), 1),
        "bigram": lambda t: mixed_tokens(normalize_mixed_v1(t), 2),
        "unigram+bigram": lambda t: mixed_tokens(normalize_mixed_v1(t), 2, unigrams=True),
        "trigram": lambda t: mixed_tokens(normalize_mixed_v1(t), 3),
        "bigram, no t2s": lambda t: mixed_tokens(normalize_nfkc_v1(t), 2),
    }


def _vi_choices() -> dict[str, Tokenize]:
    from pyvi import ViTokenizer

    return {
        "syllables (reference \\w+)": lambda t: tokens_words(normalize_mixed_v1(t)),
        "pyvi words": lambda t: tokens_words(ViTokenizer.tokenize(normalize_mixed_v1(t))),
    }


def _load(data: Path) -> tuple[dict[str, dict[str, str]], list[dict[str, object]]]:
    pairs = [json.loads(line) for line in (data / "zh-vi-dev" / "pairs.jsonl").open()]
    pages: dict[str, dict[str, str]] = {}
    with gzip.open(data / "zh-vi-dev" / "pages.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            page = json.loads(line)
            got = extract(page["html"], url=page["url"] or "")
            pages[page["id"]] = {"lang": page["lang"], "text": got.main_text}
    return pages, pairs


def _components(pairs: list[dict[str, object]]) -> dict[str, str]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        if p["label"] in POSITIVE:
            parent[find(str(p["a"]))] = find(str(p["b"]))
    return {x: find(x) for x in parent}


def _auc(pos: list[int], neg: list[int]) -> float:
    if not pos or not neg:
        return float("nan")
    wins = sum((p < n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def _recall_at_neg_share(pos: list[int], neg: list[int], share: float = 0.02) -> tuple[float, int]:
    """Recall of positives at the largest distance d with ≤ share of negatives at ≤ d."""
    best = -1
    for d in range(65):
        if sum(n <= d for n in neg) <= share * len(neg):
            best = d
        else:
            break
    return (sum(p <= best for p in pos) / len(pos) if pos else 0.0), best


def _variants(lang: str, text: str, seed: int) -> dict[str, str]:
    """Transformations of our own (the guides' list), each a copy of the text."""
    rng = random.Random(seed)
    paras = [p for p in text.split("\n") if p.strip()]
    if len(paras) < 4:
        return {}
    cut = rng.sample(range(1, len(paras)), 2)
    kept = [p for i, p in enumerate(paras) if i not in cut]
    if lang == "zh":
        head, tail = "转载：" + paras[0][:20], "本文来源：新华网 责任编辑：王伟 版权归原作者所有"
    else:
        head, tail = "Tin mới: " + paras[0][:40], "Theo Báo Mới. Nguồn: baomoi.com"
    shuffled = paras[:]
    rng.shuffle(shuffled)
    out = {
        "retitle-del2-source": "\n".join([head, *kept, tail]),
        "shuffle": "\n".join(shuffled),
    }
    if lang == "zh":
        out["simplified->traditional"] = _s2t(text)
    return out


def _s2t(text: str) -> str:
    import opencc

    return str(opencc.OpenCC("s2t").convert(text))


def evaluate(lang: str, choices: dict[str, Tokenize], pages, pairs) -> None:  # type: ignore[no-untyped-def]
    comp = _components(pairs)
    labelled = [p for p in pairs if p["lang"] == lang and p["kind"] not in CRAWL_QUALITY_KINDS]
    ids = sorted({i for i, pg in pages.items() if pg["lang"] == lang})
    variants = {i: _variants(lang, pages[i]["text"], n) for n, i in enumerate(ids)}
    kinds = sorted({k for v in variants.values() for k in v})
    print(f"\n== {lang}: {len(labelled)} labelled pairs, {len(ids)} pages ==")
    print(
        "rec@K: share of positives within K bits; neg@K: negatives within K bits (of n);"
        " rec@neg2%: recall at the largest distance with <= 2% of the negatives"
    )
    head = f"{'choice':26} {'pos':>3} {'rec@3':>5} {'rec@6':>5} "
    head += "".join(f"{k[:18]:>19}" for k in kinds)
    head += f" {'hard':>4} {'neg@6':>5} {'cross':>5} {'neg@6':>5} {'rec@hard2%':>10}"
    head += f" {'rec@cross2%':>11} {'AUC':>5} {'tok/pg':>6}"
    print(head + "   (generated: rec@6 of n)")
    for name, tokenize in choices.items():
        tokens = {i: tokenize(pages[i]["text"]) for i in ids}
        value = {i: simhash64_fast(t) for i, t in tokens.items() if len(t) >= MIN_TOKENS}
        pos, hard, skipped = [], [], 0
        for p in labelled:
            a, b = str(p["a"]), str(p["b"])
            if a not in value or b not in value:
                skipped += 1
                continue
            d = hamming(value[a], value[b])
            (pos if p["label"] in POSITIVE else hard).append(d)
        kept = [i for i in ids if i in value]
        cross = [
            hamming(value[x], value[y])
            for n, x in enumerate(kept)
            for y in kept[n + 1 :]
            if comp.get(x, x) != comp.get(y, y)
        ]
        generated: dict[str, list[int]] = {k: [] for k in kinds}
        for i in kept:
            for kind, text in variants[i].items():
                generated[kind].append(hamming(value[i], simhash64_fast(tokenize(text))))
        r_hard, d_hard = _recall_at_neg_share(pos, hard)
        r_cross, d_cross = _recall_at_neg_share(pos, cross)
        per_page = sum(map(len, tokens.values())) / len(ids)
        line = f"{name:26} {len(pos):3} {_at(pos, 3):5.2f} {_at(pos, 6):5.2f} "
        line += "".join(f"{_at(generated[k], 6):12.2f} of {len(generated[k]):3}" for k in kinds)
        line += f" {len(hard):4} {sum(d <= 6 for d in hard):5} {len(cross):5}"
        line += f" {sum(d <= 6 for d in cross):5} {r_hard:5.2f} @{d_hard:<3}"
        line += f" {r_cross:6.2f} @{d_cross:<3} {_auc(pos, cross):5.3f} {per_page:6.0f}"
        print(line)
    print(f"(pairs left out, a text under {MIN_TOKENS} tokens: {skipped})")


def _at(distances: list[int], k: int) -> float:
    return sum(d <= k for d in distances) / len(distances) if distances else float("nan")


def _english_texts(data: Path, limit: int = 120) -> list[str]:
    manifest = data / "extraction-dev" / "manifest.jsonl"
    rows = [json.loads(line) for line in manifest.open()]
    return [r["gold_text"] for r in rows if r["set"] == "aeb" and r["gold_text"]][:limit]


def timing(pages: dict[str, dict[str, str]], data: Path, repeat: int = 5) -> None:
    """CPU per page (process time) of the fingerprint step (SimHash and SHA-256 of the
    normalized text, one branch) and of the passages, per method: ``cold`` with every
    cache emptied before each run (a page of words never seen), ``warm`` the best run
    with the caches kept (a worker's steady state)."""
    zh = [p["text"] for p in pages.values() if p["lang"] == "zh" and p["text"]]
    vi = [p["text"] for p in pages.values() if p["lang"] == "vi" and p["text"]]
    en = _english_texts(data)
    from ingest.core.methods import CURRENT_REFERENCE_KEY, DEFAULT_KEY, passage_method_for

    print("\n== CPU per page, ms: fingerprint (SimHash + SHA-256) and passages ==")
    print(
        f"{'texts':5} {'pages':>5} {'chars':>6} {'method':50} {'fp cold':>7} {'fp warm':>7} "
        f"{'pas cold':>8} {'pas warm':>8}"
    )
    for label, texts in (("zh", zh), ("vi", vi), ("en", en)):
        chars = sum(map(len, texts)) // len(texts)
        for key in (CURRENT_REFERENCE_KEY, DEFAULT_KEY):
            method = passage_method_for(key)
            best = {"fp cold": 1e9, "fp warm": 1e9, "pas cold": 1e9, "pas warm": 1e9}
            for run in range(2 * repeat):
                kind = "cold" if run % 2 == 0 else "warm"
                if kind == "cold":
                    cache_clear()
                    passages_core.cache_clear()
                recent_clear()  # the normalized texts: each page is read once
                t0 = time.process_time()
                for t in texts:
                    fingerprint_text(key, t, min_tokens=3)
                t1 = time.process_time()
                for t in texts:
                    passages_core.passages(t, method=method)
                t2 = time.process_time()
                best[f"fp {kind}"] = min(best[f"fp {kind}"], (t1 - t0) * 1000 / len(texts))
                best[f"pas {kind}"] = min(best[f"pas {kind}"], (t2 - t1) * 1000 / len(texts))
            print(
                f"{label:5} {len(texts):5} {chars:6} {key:50} {best['fp cold']:7.3f} "
                f"{best['fp warm']:7.3f} {best['pas cold']:8.3f} {best['pas warm']:8.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--timing-only", action="store_true")
    args = parser.parse_args()
    data = args.data if args.data.exists() else Path("/work/shared/data")
    pages, pairs = _load(data)
    if not args.timing_only:
        evaluate("zh", _zh_choices(), pages, pairs)
        evaluate("vi", _vi_choices(), pages, pairs)
    if not args.skip_timing:
        timing(pages, data)


if __name__ == "__main__":
    main()
