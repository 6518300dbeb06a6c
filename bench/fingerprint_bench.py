"""Fingerprint throughput: the fast SimHash vs the locked reference, the tokenize-only
floor and the PyPI `simhash` package, on the same generated documents, in one process.

Also home of the text generator the ingest benchmark builds its pages from
(`TextGen`): pseudo-English with a Zipf-Mandelbrot word law (s=1.12) over a ~40,000-word
vocabulary (function words on top, a few accented and capitalized words, numbers),
bursty per-document topics, sentences and paragraphs.

Run alone: .venv/bin/python bench/fingerprint_bench.py [--docs 300] [--json OUT]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import inspect
import json
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# The code under test: this checkout, or an export of a commit (bench.py --rev).
PROJECT = Path(os.environ.get("BENCH_PROJECT_ROOT") or ROOT).resolve()
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

from ingest.core import simhash as simhash_mod  # noqa: E402
from ingest.core.normalize import tokens_words  # noqa: E402
from ingest.core.simhash import simhash64_fast, simhash64_reference  # noqa: E402

WORD_RE = re.compile(r"\w+")

# Targets (on 300-1,500-word documents).
TARGET_REF_OVER_FAST = 20.0
TARGET_FAST_OVER_FLOOR = 1.5
LOW_WORDS, HIGH_WORDS = 300, 1500

# --- text generator ------------------------------------------------------------------

FUNCTION_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "they",
    "you",
    "were",
    "her",
    "she",
    "there",
    "been",
    "one",
    "all",
    "we",
    "their",
    "has",
    "would",
    "when",
    "if",
    "so",
    "no",
    "will",
    "more",
    "can",
    "its",
    "also",
    "who",
    "our",
    "them",
    "than",
    "some",
    "these",
    "into",
    "other",
    "what",
    "up",
    "out",
    "about",
    "time",
    "only",
    "new",
    "could",
    "may",
    "after",
    "first",
    "two",
    "over",
    "any",
    "most",
    "said",
    "people",
    "then",
    "do",
    "how",
    "made",
    "over",
    "such",
    "where",
    "many",
    "just",
    "while",
    "very",
    "through",
    "back",
    "years",
    "even",
    "because",
    "those",
    "well",
    "before",
    "much",
    "should",
    "between",
    "each",
    "under",
    "same",
    "last",
    "since",
    "both",
    "against",
    "still",
    "during",
    "own",
    "without",
    "another",
    "around",
    "among",
    "being",
    "here",
    "however",
    "three",
    "city",
    "year",
    "report",
    "week",
    "market",
    "company",
    "government",
    "public",
    "local",
    "service",
    "group",
    "plan",
    "number",
    "part",
    "world",
    "home",
    "water",
    "team",
    "school",
    "system",
    "program",
    "question",
    "work",
    "day",
]
_ONSETS = [
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "cr",
    "dr",
    "fl",
    "gr",
    "pl",
    "pr",
    "sl",
    "st",
    "tr",
    "ch",
    "sh",
    "th",
]
_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ai", "ou", "io"]
_CODAS = ["", "", "", "n", "r", "l", "s", "t", "nd", "rt", "st", "m", "ck", "ng"]
_ACCENTED = ["é", "è", "á", "ö", "ü", "ñ", "ç"]


def _vocabulary(size: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    seen = set(FUNCTION_WORDS)
    words = list(FUNCTION_WORDS)
    while len(words) < size:
        syllables = rng.choices((1, 2, 3, 4), weights=(4, 5, 2, 0.4))[0]
        word = "".join(
            rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)
        )
        if rng.random() < 0.01:  # the odd loanword: café, señor, naïve
            i = rng.randrange(len(word))
            word = word[:i] + rng.choice(_ACCENTED) + word[i + 1 :]
        if rng.random() < 0.04:  # proper nouns
            word = word.capitalize()
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class TextGen:
    """Deterministic pseudo-English. `words(n, rng)` draws n words with a Zipf-Mandelbrot
    law (s=1.12, q=2.7) plus a bursty topic (~530 distinct in 925 tokens, ~5.6 letters a
    token: news-like; legal text has ~320, uniform random words ~900); `article(n, rng)`
    shapes them into paragraphs of sentences (a list of paragraph strings)."""

    def __init__(
        self, vocab_size: int = 40_000, seed: int = 7, topics: int = 1500, zipf_s: float = 1.12
    ) -> None:
        self.vocab = _vocabulary(vocab_size, seed)
        ranks = np.arange(1, len(self.vocab) + 1, dtype=np.float64)
        p = 1.0 / (ranks + 2.7) ** zipf_s
        self.cdf = np.cumsum(p / p.sum())
        rng = np.random.default_rng(seed)
        # Topics: 120 mid-frequency words each (rank 300-20,000).
        self.topics = [
            rng.choice(np.arange(300, 20_000), size=120, replace=False) for _ in range(topics)
        ]

    def word_ids(self, n: int, rng: random.Random) -> np.ndarray:
        nrng = np.random.default_rng(rng.getrandbits(63))
        ids = np.searchsorted(self.cdf, nrng.random(n))
        ids = np.minimum(ids, len(self.vocab) - 1)
        topic = self.topics[rng.randrange(len(self.topics))]
        bursty = nrng.random(n) < 0.12
        ids[bursty] = nrng.choice(topic, size=int(bursty.sum()))
        return ids

    def words(self, n: int, rng: random.Random) -> list[str]:
        vocab = self.vocab
        out = [vocab[i] for i in self.word_ids(n, rng)]
        for _ in range(n // 120):  # numbers: years, counts, prices, scores
            k = rng.randrange(n)
            out[k] = rng.choice(
                (
                    str(rng.randint(1990, 2026)),
                    str(rng.randint(2, 500)),
                    f"{rng.randint(1, 99)}.{rng.randint(0, 99):02d}",
                    f"{rng.randint(1, 9)},{rng.randint(100, 999)}",
                )
            )
        return out

    def sentences(self, words: list[str], rng: random.Random) -> list[str]:
        out, i = [], 0
        while i < len(words):
            n = rng.randint(6, 28)
            chunk = words[i : i + n]
            i += n
            if len(chunk) > 8 and rng.random() < 0.5:
                k = rng.randrange(3, len(chunk) - 2)
                chunk[k] = chunk[k] + ","
            text = " ".join(chunk)
            end = rng.choices((".", "?", "!", ":"), weights=(90, 4, 2, 4))[0]
            out.append(text[:1].upper() + text[1:] + end)
        return out

    def article(self, n_words: int, rng: random.Random) -> list[str]:
        sentences = self.sentences(self.words(n_words, rng), rng)
        paragraphs, i = [], 0
        while i < len(sentences):
            k = rng.randint(2, 7)
            paragraphs.append(" ".join(sentences[i : i + k]))
            i += k
        return paragraphs

    def title(self, rng: random.Random) -> str:
        words = self.words(rng.randint(5, 11), rng)
        return " ".join(w.capitalize() if j == 0 or len(w) > 3 else w for j, w in enumerate(words))


def fingerprint_docs(n: int = 300, seed: int = 1) -> list[str]:
    """n documents of 300-1,500 words (spread evenly in length), plus 30 shorter and 30
    longer ones (for the restricted figures), plus one of exactly 925 tokens (last)."""
    gen = TextGen()
    rng = random.Random(seed)
    lengths = [round(x) for x in np.linspace(LOW_WORDS, HIGH_WORDS - 20, n)]
    lengths += [rng.randint(80, LOW_WORDS - 20) for _ in range(30)]
    lengths += [rng.randint(HIGH_WORDS + 50, 3000) for _ in range(30)]
    docs = []
    for n_words in lengths:
        docs.append(gen.title(rng) + "\n" + "\n".join(gen.article(n_words, rng)))
    for attempt in range(500):
        r = random.Random(10_000 + attempt)
        text = gen.title(r) + "\n" + "\n".join(gen.article(915, r))
        if len(tokens_words(text)) == 925:
            docs.append(text)
            break
    else:
        raise RuntimeError("no 925-token document found")
    return docs


# --- timing --------------------------------------------------------------------------


def _time_ns(
    fn: Callable[[], object], repeats: int, before: Callable[[], None] | None = None
) -> int:
    """Median of `repeats` runs of fn (ns); `before` runs untimed before each run."""
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    return int(statistics.median(times))


def _pypi_simhash() -> Callable[[str], object] | None:
    try:
        from simhash import Simhash
    except ImportError:
        return None
    return Simhash


def _fast_breakdown(tokens: list[str], repeats: int) -> dict[str, float] | None:
    """Per-step time (µs) of simhash64_fast: token ids from the cache, then one
    gather-and-sum of the cached bit rows (numpy/BLAS), then packing the sign bits."""
    ids_of = simhash_mod._IDS.__getitem__
    simhash64_fast(tokens)  # warm

    def ids() -> np.ndarray:
        return np.fromiter(map(ids_of, tokens), dtype=np.intp, count=len(tokens))

    idx = ids()

    def bit_sum() -> np.ndarray:
        return np.ones(len(idx), dtype=np.float32) @ simhash_mod._BITS[idx]

    ones = bit_sum()
    distinct = list(dict.fromkeys(tokens))
    return {
        "ids_us": _time_ns(ids, repeats) / 1e3,
        "bit_sum_us": _time_ns(bit_sum, repeats) / 1e3,
        "pack_us": _time_ns(lambda: simhash_mod._from_bit_sums(ones, len(tokens)), repeats) / 1e3,
        "sha256_only_us": _time_ns(
            lambda: [hashlib.sha256(t.encode()).digest() for t in distinct], repeats
        )
        / 1e3,
        "distinct_tokens": len(distinct),
    }


def run(n_docs: int = 300, quick: bool = False) -> dict:
    docs = fingerprint_docs(n_docs)
    r_slow = 1 if quick else 3
    r_fast = 3 if quick else 9
    cache_clear = simhash_mod.cache_clear
    pypi = _pypi_simhash()

    def ref(text: str) -> int:
        return simhash64_reference(tokens_words(text))

    def fast(text: str) -> int:
        return simhash64_fast(tokens_words(text))

    def floor(text: str) -> list[str]:
        return WORD_RE.findall(text.casefold())

    rows = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for text in docs:
            tokens = tokens_words(text)
            if ref(text) != fast(text):
                raise AssertionError("simhash64_fast differs from the reference")
            row = {
                "tokens": len(tokens),
                "chars": len(text),
                "ref": _time_ns(lambda t=text: ref(t), r_slow),
                "fast_cold": _time_ns(lambda t=text: fast(t), r_fast, cache_clear),
                "fast_warm": _time_ns(lambda t=text: fast(t), r_fast),  # cache now holds t
                "floor": _time_ns(lambda t=text: floor(t), r_fast),
            }
            if pypi is not None:
                row["pypi"] = _time_ns(lambda t=text: pypi(t), r_slow)
            rows.append(row)
            gc.collect()
        # Worker-like: one pass in order, the cache carried from document to document.
        cache_clear()
        for row, text in zip(rows, docs, strict=True):
            start = time.perf_counter_ns()
            fast(text)
            row["fast_stream"] = time.perf_counter_ns() - start
        doc925 = docs[-1]
        breakdown = _fast_breakdown(tokens_words(doc925), r_fast * 3)
        floor925 = rows[-1]["floor"] / 1e3
    finally:
        if gc_was:
            gc.enable()

    cpu_share = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    variants = ["ref", "fast_cold", "fast_warm", "fast_stream", "floor"]
    if pypi is not None:
        variants.append("pypi")

    def summary(sel: list[dict]) -> dict:
        out = {"docs": len(sel)}
        for v in variants:
            per_doc = [r[v] for r in sel]
            out[v] = {
                "median_us": statistics.median(per_doc) / 1e3,
                "docs_per_s": len(sel) / (sum(per_doc) / 1e9),
            }
        for a, b in (
            ("ref", "fast_cold"),
            ("ref", "fast_warm"),
            ("ref", "fast_stream"),
            ("fast_cold", "floor"),
            ("fast_warm", "floor"),
            ("fast_stream", "floor"),
        ) + ((("pypi", "fast_cold"), ("pypi", "fast_warm")) if pypi else ()):
            out[f"{a}/{b}"] = {
                "throughput": sum(r[a] for r in sel) / sum(r[b] for r in sel),
                "median_per_doc": statistics.median(r[a] / r[b] for r in sel),
            }
        return out

    in_range = [r for r in rows if LOW_WORDS <= r["tokens"] <= HIGH_WORDS]
    result = {
        "docs_total": len(rows),
        "repeats": {"ref_and_pypi": r_slow, "fast_and_floor": r_fast},
        "all": summary(rows),
        "in_range": summary(in_range),
        "doc925": {
            "tokens": rows[-1]["tokens"],
            "distinct_tokens": len(set(tokens_words(doc925))),
            **{f"{v}_us": rows[-1][v] / 1e3 for v in variants},
        },
        "fast_breakdown_925": breakdown,
        "fast_source_sha1": hashlib.sha1(inspect.getsource(simhash64_fast).encode()).hexdigest()[
            :12
        ],
        "floor_925_us": floor925,
        "token_range": [min(r["tokens"] for r in rows), max(r["tokens"] for r in rows)],
        "pypi_simhash": pypi is not None,
        "cpu_share": cpu_share,
        "seconds": time.perf_counter() - wall0,
    }
    return result


LABELS = {
    "ref": "(a) reference simhash64_reference  ",
    "fast_cold": "(b) fast, cold cache (cleared/doc) ",
    "fast_warm": "(c) fast, warm cache (same doc)    ",
    "fast_stream": "    fast, one pass, cache carried  ",
    "floor": "(d) floor re.findall(\\w+, casefold)",
    "pypi": "(e) PyPI simhash Simhash(text)     ",
}


def _verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def report(res: dict) -> list[str]:
    lines = []
    rng = res["in_range"]
    lines.append(
        f"{res['docs_total']} documents ({res['token_range'][0]}-{res['token_range'][1]} tokens; "
        f"{rng['docs']} of {LOW_WORDS}-{HIGH_WORDS}), medians of "
        f"{res['repeats']['ref_and_pypi']} (ref, PyPI) / {res['repeats']['fast_and_floor']} "
        "(others) runs per document; tokenizing included in every figure"
    )
    lines.append(
        f"  this process got {res['cpu_share']:.0%} of a CPU while timing ({res['seconds']:.0f}s;"
        " below ~95% means other processes competed for the cores)"
    )
    for scope, title in (("in_range", f"{LOW_WORDS}-{HIGH_WORDS} words"), ("all", "all documents")):
        s = res[scope]
        lines.append(f"  [{title}, {s['docs']} docs]              median µs/doc     docs/s")
        for v, label in LABELS.items():
            if v in s:
                lines.append(f"  {label} {s[v]['median_us']:12.1f} {s[v]['docs_per_s']:10.0f}")
    d = res["doc925"]
    lines.append(
        f"  [the {d['tokens']}-token document, {d['distinct_tokens']} distinct tokens]  µs"
    )
    for v, label in LABELS.items():
        if f"{v}_us" in d:
            lines.append(f"  {label} {d[f'{v}_us']:12.1f}")
    if res["pypi_simhash"]:
        lines.append(
            "  note: PyPI simhash hashes differently (lowercased 4-character shingles, MD5):"
            " a speed comparison only, not the same fingerprint"
        )
    lines.append(
        "Ratios (throughput = total time over the set; per-doc = median of per-doc ratios)"
    )
    r = res["in_range"]
    a = res["all"]

    def ratio_line(key: str, target: str, ok: Callable[[float], bool]) -> str:
        x, y = r[key], a[key]
        num, den = key.split("/")
        dd = d[f"{num}_us"] / d[f"{den}_us"]
        return (
            f"  {key:<22} {LOW_WORDS}-{HIGH_WORDS}w: {x['throughput']:6.2f}x "
            f"(per-doc {x['median_per_doc']:6.2f}x)  925-token: {dd:6.2f}x  all: "
            f"{y['throughput']:6.2f}x   target {target}: {_verdict(ok(x['throughput']))}"
        )

    lines.append(ratio_line("ref/fast_cold", f">= {TARGET_REF_OVER_FAST:g}x", lambda v: v >= 20))
    lines.append(ratio_line("ref/fast_warm", f">= {TARGET_REF_OVER_FAST:g}x", lambda v: v >= 20))
    lines.append(ratio_line("ref/fast_stream", f">= {TARGET_REF_OVER_FAST:g}x", lambda v: v >= 20))
    lines.append(
        ratio_line("fast_cold/floor", f"<= {TARGET_FAST_OVER_FLOOR:g}x", lambda v: v <= 1.5)
    )
    lines.append(
        ratio_line("fast_warm/floor", f"<= {TARGET_FAST_OVER_FLOOR:g}x", lambda v: v <= 1.5)
    )
    lines.append(
        ratio_line("fast_stream/floor", f"<= {TARGET_FAST_OVER_FLOOR:g}x", lambda v: v <= 1.5)
    )
    if res["pypi_simhash"]:
        for key in ("pypi/fast_cold", "pypi/fast_warm"):
            x = r[key]
            lines.append(
                f"  {key:<22} {LOW_WORDS}-{HIGH_WORDS}w: {x['throughput']:6.2f}x "
                f"(per-doc {x['median_per_doc']:6.2f}x)  (fast is this many times faster)"
            )
    b = res["fast_breakdown_925"]
    if b:
        warm = b["ids_us"] + b["bit_sum_us"] + b["pack_us"]
        budget = TARGET_FAST_OVER_FLOOR * res["floor_925_us"] - res["floor_925_us"]
        lines.append(
            f"Where simhash64_fast spends its time on the 925-token document "
            f"({b['distinct_tokens']} distinct tokens), µs:"
        )
        lines.append(
            f"  tokenize (floor) {res['floor_925_us']:.1f} | token ids {b['ids_us']:.1f} | "
            f"bit sum {b['bit_sum_us']:.1f} | pack {b['pack_us']:.1f} | cold cache adds the "
            f"SHA-256 of each new token (bare sha256 calls {b['sha256_only_us']:.1f})"
        )
        lines.append(
            f"  budget above the floor at 1.5x: {budget:.1f} µs; warm cache spends {warm:.1f} µs"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    res = run(args.docs, quick=args.quick)
    print("\n".join(report(res)))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
