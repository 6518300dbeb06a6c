"""Fingerprints of real-looking generated text, for the candidate index benchmark.

Uniform random 64-bit numbers flatter any band index: real SimHash bits are biased
(a handful of very frequent words and shared page templates dominate every document's
bit sums), so real fingerprints crowd together and band buckets are skewed. This module
generates documents that behave like crawled text and fingerprints them with the locked
reference method (simhash64-words-sha256-v1, via `simhash64_fast` over `tokens_words`):

- a 50,000-word vocabulary drawn with a Zipf-Mandelbrot law (s = 1.0, q = 2.7), as in
  natural language, so function words carry most of the weight;
- bursty topics: each document draws a share of its words from one of 2,000 topics
  (200 mid-frequency words each), so documents are individual, not just Zipf samples;
- page templates: 60 sites with 30-250 template words each (menus, footers, cookie
  banners) drawn from 400 template words; 65% of the documents carry their site's
  template, 35% none;
- lengths log-uniform in 150-1500 words;
- about 10% near-copies: an earlier document with 1-12 words replaced, inserted or
  deleted (small Hamming distances, as syndicated and re-crawled pages have).

That is the `default` profile. The `dense` profile is a stress test: 20 sites, 90% of
pages with templates of 100-400 words, 2-10% topic words, so that unrelated pages
crowd together much more (closer to the 16% of unrelated documents with a neighbour
within 3 bits reported from a real 1M crawl; `default` gives about 3%).

Speed: words are generated as vocabulary ids and the SimHash is computed from the bag
of ids with numpy. Every vocabulary word is a single casefolded `\\w+` token, so
`tokens_words(" ".join(words)) == words` and the result is bit-identical to
`simhash64_fast(tokens_words(text))`; `_check_against_text` re-fingerprints a sample of
documents from their real text with `simhash64_fast` and fails loudly on any mismatch.

`real_looking_fingerprints(n, seed)` returns a numpy uint64 array and caches it (with
the near-copy sources) under bench/out/. Run as a script for the bias report:

    .venv/bin/python bench/corpus.py --n 1000000 --seed 1 [--profile dense]
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ingest.core.normalize import tokens_words  # noqa: E402
from ingest.core.simhash import hamming, simhash64_fast  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"

VOCAB = 50_000
TEMPLATE_VOCAB = 400
TOPICS = 2_000
TOPIC_WORDS = 200
NEAR_COPY_SHARE = 0.10
MIN_WORDS, MAX_WORDS = 150, 1500
CHUNK = 20_000  # documents per worker task; near-copies refer back within a chunk
BATCH = 200  # documents fingerprinted together in one numpy pass
RECENT = 4_000  # how far back a near-copy may reach (documents of the same chunk)
VERSION = "v1"  # bump when the generator changes: it is part of the cache file name


@dataclass(frozen=True)
class Profile:
    """How much documents share: page templates and topic vocabulary."""

    name: str
    sites: int = 60
    template_share: float = 0.65  # documents carrying their site's template
    template_words: tuple[int, int] = (30, 251)  # template length, [low, high)
    topic_share: tuple[float, float] = (0.1, 0.4)  # share of a document's topic words


PROFILES = {
    p.name: p
    for p in (
        Profile("default"),
        # A stress test: fewer sites, longer templates on nearly every page, little
        # topic vocabulary, so unrelated pages crowd together far more.
        Profile(
            "dense",
            sites=20,
            template_share=0.9,
            template_words=(100, 401),
            topic_share=(0.02, 0.1),
        ),
    )
}

_CONSONANTS = "bcdfghjklmnprstvwz"  # 18
_VOWELS = "aeiou"  # 5
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]  # 90, all end in a vowel


def _word(index: int) -> str:
    """A unique pseudo-word: short for frequent ranks (1, 2 or 3 syllables)."""
    n = len(_SYLLABLES)
    if index < n:
        return _SYLLABLES[index]
    index -= n
    if index < n * n:
        return _SYLLABLES[index // n] + _SYLLABLES[index % n]
    index -= n * n
    return _SYLLABLES[index // (n * n) % n] + _SYLLABLES[index // n % n] + _SYLLABLES[index % n]


def vocabulary() -> list[str]:
    """General words (ids 0..VOCAB-1, by frequency rank), then template words.

    Template words end in "q", which no general word does (syllables end in vowels).
    """
    words = [_word(i) for i in range(VOCAB)]
    words += [_word(i) + "q" for i in range(TEMPLATE_VOCAB)]
    assert len(set(words)) == len(words)
    return words


def _value_bits(words: list[str]) -> np.ndarray:
    """Row i: the 64 bits of word i's token value (SHA-256, first 8 bytes, big-endian),
    most significant bit first, exactly as `simhash64_fast` lays them out."""
    raw = b"".join(hashlib.sha256(w.encode("utf-8")).digest()[:8] for w in words)
    values = np.frombuffer(raw, dtype=">u8")
    return np.unpackbits(values.view(np.uint8).reshape(-1, 8), axis=1).astype(np.float32)


def _zipf_cdf(size: int, s: float = 1.0, q: float = 2.7) -> np.ndarray:
    weights = 1.0 / (np.arange(size, dtype=np.float64) + 1.0 + q) ** s
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


class _World:
    """Everything shared by all chunks of one seed: vocabulary, topics, templates."""

    def __init__(self, seed: int, profile: Profile) -> None:
        rng = np.random.default_rng([seed, 0xC0FFEE])
        self.profile = profile
        self.words = vocabulary()
        self.bits = _value_bits(self.words)
        self.cdf = _zipf_cdf(VOCAB)
        self.template_cdf = _zipf_cdf(TEMPLATE_VOCAB, s=0.8)
        # Topic words come from the middle of the vocabulary (not function words).
        self.topics = rng.integers(300, VOCAB, size=(TOPICS, TOPIC_WORDS), dtype=np.int32)
        self.topic_cdf = _zipf_cdf(TOPIC_WORDS, s=0.9, q=1.0)
        self.templates = [
            VOCAB
            + np.searchsorted(
                self.template_cdf,
                rng.random(int(rng.integers(*profile.template_words))),
                side="right",
            ).astype(np.int32)
            for _ in range(profile.sites)
        ]
        self.site_cdf = _zipf_cdf(profile.sites, s=1.1, q=1.0)


_WORLDS: dict[tuple[int, str], _World] = {}


def _world(seed: int, profile: str = "default") -> _World:
    if (seed, profile) not in _WORLDS:
        _WORLDS[seed, profile] = _World(seed, PROFILES[profile])
    return _WORLDS[seed, profile]


def _new_document(world: _World, rng: np.random.Generator) -> np.ndarray:
    length = int(np.exp(rng.uniform(np.log(MIN_WORDS), np.log(MAX_WORDS + 1))))
    topic_share = rng.uniform(*world.profile.topic_share)
    n_topic = int(length * topic_share)
    general = np.searchsorted(world.cdf, rng.random(length - n_topic), side="right")
    topic = world.topics[int(rng.integers(TOPICS))]
    topical = topic[np.searchsorted(world.topic_cdf, rng.random(n_topic), side="right")]
    parts = [general.astype(np.int32), topical]
    if rng.random() < world.profile.template_share:
        site = int(np.searchsorted(world.site_cdf, rng.random(), side="right"))
        parts.append(world.templates[site])
    doc = np.concatenate(parts)
    rng.shuffle(doc)
    return doc


def _near_copy(world: _World, rng: np.random.Generator, source: np.ndarray) -> np.ndarray:
    doc = source.copy()
    for _ in range(int(rng.integers(1, 13))):
        kind = rng.integers(3)
        at = int(rng.integers(len(doc)))
        word = np.int32(np.searchsorted(world.cdf, rng.random(), side="right"))
        if kind == 0:
            doc[at] = word
        elif kind == 1:
            doc = np.insert(doc, at, word)
        elif len(doc) > MIN_WORDS // 2:
            doc = np.delete(doc, at)
    return doc


def _fingerprint_batch(world: _World, docs: list[np.ndarray]) -> np.ndarray:
    """SimHash of each bag of word ids, bit-identical to simhash64_fast (see module doc)."""
    total_vocab = len(world.words)
    lengths = np.array([len(d) for d in docs], dtype=np.int64)
    doc_of = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
    pairs, counts = np.unique(doc_of * total_vocab + np.concatenate(docs), return_counts=True)
    doc_ids, word_ids = np.divmod(pairs, total_vocab)
    starts = np.searchsorted(doc_ids, np.arange(len(docs)))
    ones = np.add.reduceat(world.bits[word_ids] * counts[:, None].astype(np.float32), starts)
    set_bits = 2 * ones > lengths[:, None]  # ties are 0, as in the reference
    packed = np.packbits(set_bits, axis=1)
    return packed.view(">u8").ravel().astype(np.uint64)


def _check_against_text(world: _World, doc: np.ndarray, value: int) -> None:
    text = " ".join(world.words[i] for i in doc)
    expected = simhash64_fast(tokens_words(text))
    if expected != value:
        raise AssertionError(f"generator drift: {value:016x} != {expected:016x}")


def _chunk(args: tuple[int, int, int, str]) -> tuple[np.ndarray, np.ndarray]:
    """Documents [start, start + size) of one seed: fingerprints and near-copy sources
    (global index of the copied document, -1 for an original)."""
    seed, start, size, profile = args
    world = _world(seed, profile)
    rng = np.random.default_rng([seed, start])
    recent: list[np.ndarray] = []
    sources = np.full(size, -1, dtype=np.int64)
    values = np.empty(size, dtype=np.uint64)
    batch: list[np.ndarray] = []
    to_check = {0, size // 2, size - 1}
    checks: dict[int, np.ndarray] = {}
    for i in range(size):
        if recent and rng.random() < NEAR_COPY_SHARE:
            back = int(rng.integers(1, len(recent) + 1))
            doc = _near_copy(world, rng, recent[-back])
            sources[i] = start + i - back
            if len(checks) < 6:
                to_check.add(i)
        else:
            doc = _new_document(world, rng)
        recent.append(doc)
        if len(recent) > RECENT:
            # Keep recent[-back] == document i - back: drop from the front in one go.
            del recent[: len(recent) - RECENT]
        if i in to_check:
            checks[i] = doc
        batch.append(doc)
        if len(batch) == BATCH or i == size - 1:
            first = i + 1 - len(batch)
            values[first : i + 1] = _fingerprint_batch(world, batch)
            batch = []
    for i, doc in checks.items():
        _check_against_text(world, doc, int(values[i]))
    return values, sources


def _paths(n: int, seed: int, profile: str) -> tuple[Path, Path]:
    stem = f"fp_{n}_{seed}" if profile == "default" else f"fp_{n}_{seed}_{profile}"
    return OUT / f"{stem}.npy", OUT / f"{stem}_{VERSION}_src.npy"


def real_looking_fingerprints(
    n: int,
    seed: int = 1,
    *,
    processes: int = 2,
    with_sources: bool = False,
    profile: str = "default",
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """n fingerprints (numpy uint64) of generated real-looking documents, cached.

    With `with_sources`, also the near-copy source of each document (index of the
    document it was copied from, -1 for an original). The first m fingerprints of a
    corpus of n > m are the corpus of m (same seed and profile).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {sorted(PROFILES)}")
    fp_path, src_path = _paths(n, seed, profile)
    if fp_path.exists() and src_path.exists():
        values, sources = np.load(fp_path), np.load(src_path)
    else:
        tasks = [(seed, start, min(CHUNK, n - start), profile) for start in range(0, n, CHUNK)]
        if processes > 1 and len(tasks) > 1:
            with multiprocessing.get_context("fork").Pool(processes) as pool:
                parts = pool.map(_chunk, tasks, chunksize=1)
        else:
            parts = [_chunk(t) for t in tasks]
        values = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.uint64)
        sources = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int64)
        OUT.mkdir(parents=True, exist_ok=True)
        np.save(fp_path, values)
        np.save(src_path, sources)
    return (values, sources) if with_sources else values


def family_roots(sources: np.ndarray) -> np.ndarray:
    """The original each document descends from (itself for an original)."""
    roots = np.arange(len(sources))
    copied = sources >= 0
    roots[copied] = sources[copied]
    # Sources always point backwards, so one pass in order resolves chains.
    for i in np.flatnonzero(copied):
        roots[i] = roots[roots[i]]
    return roots


def bias_report(
    values: np.ndarray, sources: np.ndarray, *, sample: int = 2000, seed: int = 0
) -> dict:
    """Share of ones per bit, and how many documents have a neighbour within 3 bits."""
    bits = np.unpackbits(values.astype(">u8").view(np.uint8).reshape(-1, 8), axis=1)
    ones = bits.mean(axis=0)[::-1]  # index = bit position, 0 = least significant
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(values), size=min(sample, len(values)), replace=False)
    roots = family_roots(sources)
    any_within3 = unrelated_within3 = 0
    for i in picks:
        dist = np.bitwise_count(values ^ values[i])
        dist[i] = 99
        any_within3 += bool((dist <= 3).any())
        dist[roots == roots[i]] = 99
        unrelated_within3 += bool((dist <= 3).any())
    uniform = ((1 + 64 + 2016 + 41664) * len(values)) / 2.0**64
    return {
        "n": int(len(values)),
        "near_copies": int((sources >= 0).sum()),
        "bit_ones_min": float(ones.min()),
        "bit_ones_max": float(ones.max()),
        "bits_outside_40_60": int(((ones < 0.4) | (ones > 0.6)).sum()),
        "sample": int(len(picks)),
        "share_with_neighbour_within_3": any_within3 / len(picks),
        "share_with_unrelated_neighbour_within_3": unrelated_within3 / len(picks),
        "uniform_expectation_within_3": uniform,
        "distinct_values": int(len(np.unique(values))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--profile", default="default", choices=sorted(PROFILES))
    args = parser.parse_args()
    started = time.perf_counter()
    values, sources = real_looking_fingerprints(
        args.n, args.seed, with_sources=True, profile=args.profile
    )
    print(f"{args.n} fingerprints in {time.perf_counter() - started:.1f}s")
    report = bias_report(values, sources, sample=args.sample)
    for key, value in report.items():
        print(f"{key:42} {value}")
    a, b = int(values[0]), int(values[1])
    print(f"example: {a:016x} {b:016x} distance {hamming(a, b)}")


if __name__ == "__main__":
    main()
