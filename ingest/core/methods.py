"""Fingerprint methods: a key names every parameter that changes bits.

Distances are only ever computed between fingerprints of one method. A new tokenizer,
normalization or extractor is a new key beside the old ones, never an edit.
"""

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal
from unicodedata import is_normalized

from ingest.core.normalize import (
    MIXED_NORMALIZATION,
    MIXED_TOKENIZER,
    NORMALIZERS,
    TOKENIZERS,
    has_cjk,
    has_grams,
    has_han,
    nfc_words,
    shingles3,
    tokens_words,
)
from ingest.core.passages import METHOD as PASSAGES_WORDS
from ingest.core.passages import MIXED_METHOD as PASSAGES_MIXED
from ingest.core.simhash import simhash64_fast, simhash64_reference

REFERENCE_KEY = "simhash64-words-sha256-v1"
# The shipped default recipe: CJK runs as characters and character bigrams, every other
# script as the reference's words (bit-identical to the reference on such text).
MIXED_KEY = "simhash64-mixedscript-sha256-v1"


@dataclass(frozen=True)
class MethodSpec:
    key: str
    bits: int
    hash: str
    tokenizer: str
    weighting: str
    normalization: str
    tie_rule: str
    extractor_version: str
    description: str

    def params(self) -> dict[str, object]:
        data = asdict(self)
        data.pop("key")
        data.pop("description")
        return data


# Extractor versions (ingest/core/extract.py). Each method names the one whose text it
# fingerprints; a new extractor is new method keys beside the old ones.
EXTRACTOR_V1 = "trafilatura-2-fast-v1"
EXTRACTOR_V2 = "trafilatura-2-v2"
EXTRACTOR = "trafilatura-2-doctype-v3"  # what new extractions use


def method_key(base: str, extractor: str = EXTRACTOR) -> str:
    """The key of a fingerprint recipe over one extractor's text: the recipe's own key
    for the first extractor, ``recipe@extractor`` for later ones."""
    return base if extractor == EXTRACTOR_V1 else f"{base}@{extractor}"


# (key, tokenizer, normalization, description) of each fingerprint recipe; every recipe
# is a method per extractor version.
_RECIPES: tuple[tuple[str, str, str, str], ...] = (
    (
        REFERENCE_KEY,
        "words-casefold-v1",
        "nfc-spacefold-v1",
        "Locked reference: casefolded \\w+ words, SHA-256, NFC.",
    ),
    (
        "simhash64-shingle3-sha256-v1",
        "word-shingle3-v1",
        "nfc-spacefold-v1",
        "Order-aware: word 3-shingles.",
    ),
    (
        "simhash64-cjkbigram-sha256-v1",
        "cjk-bigram-words-v1",
        "nfkc-spacefold-v1",
        "For CJK text: NFKC, Han character bigrams, words elsewhere.",
    ),
    # The reference tokenizer after NFKC (full-width forms, ligatures and compatibility
    # characters fold), a key beside the locked reference.
    (
        "simhash64-words-nfkc-sha256-v1",
        "words-casefold-v1",
        "nfkc-spacefold-v1",
        "Casefolded \\w+ words after NFKC (full-width and ligatures fold).",
    ),
    (
        MIXED_KEY,
        MIXED_TOKENIZER,
        MIXED_NORMALIZATION,
        "Mixed scripts: Han, kana and hangul runs as characters and character bigrams "
        "(NFKC inside CJK runs and the full-width block, traditional folded to simplified), "
        "every other script as the reference's words; the reference's bits on text "
        "without CJK characters.",
    ),
)

METHODS: dict[str, MethodSpec] = {
    spec.key: spec
    for extractor in (EXTRACTOR_V1, EXTRACTOR_V2, EXTRACTOR)
    for base, tokenizer, normalization, description in _RECIPES
    for spec in (
        MethodSpec(
            key=method_key(base, extractor),
            bits=64,
            hash="sha256-first8-be",
            tokenizer=tokenizer,
            weighting="term-frequency",
            normalization=normalization,
            tie_rule="zero",
            extractor_version=extractor,
            description=description
            if extractor == EXTRACTOR_V1
            else f"{description} Text of extractor {extractor}.",
        ),
    )
}
# The locked reference recipe over the current extractor's text.
CURRENT_REFERENCE_KEY = method_key(REFERENCE_KEY)
# What a new database starts on (settings.ACTIVE_METHOD's default).
DEFAULT_KEY = method_key(MIXED_KEY)

Status = Literal["ok", "insufficient_features"]


@dataclass(frozen=True)
class FingerprintResult:
    status: Status
    simhash: int | None
    text_sha256: str
    token_count: int


def method_get(key: str) -> MethodSpec:
    try:
        return METHODS[key]
    except KeyError:
        raise KeyError(f"unknown fingerprint method {key!r}; known: {sorted(METHODS)}") from None


def passage_method_for(key: str) -> str:
    """The passage method a fingerprint method's passage channel reads: CJK characters
    under the mixed-script method, words under every other (their stored passage sets
    stay as they are until a switch to the mixed-script method re-indexes them)."""
    return PASSAGES_MIXED if method_get(key).tokenizer == MIXED_TOKENIZER else PASSAGES_WORDS


def normalize_for(key: str, text: str) -> str:
    normalization = method_get(key).normalization
    norm = _recent_get(normalization, text)
    if norm is None:
        norm = NORMALIZERS[normalization](text)
        _recent_put(normalization, text, norm)
    return norm


# The texts normalized last, by (normalization, text), oldest first: a worker
# fingerprints a task's documents, then builds their candidate pairs from the same main
# texts (normalize_for), and a family of exact copies brings its first member's text
# back task after task. Bounded in characters (text and normalized text counted).
RECENT_MAX_CHARS = 4_000_000
_recent: dict[tuple[str, str], str] = {}
_recent_chars = 0
_recent_lock = threading.Lock()


def _recent_get(normalization: str, text: str) -> str | None:
    return _recent.get((normalization, text))


def _recent_put(normalization: str, text: str, norm: str) -> None:
    global _recent_chars
    size = len(text) + len(norm)
    if size > RECENT_MAX_CHARS // 16:
        return  # a huge page would push out everything else
    with _recent_lock:
        if (normalization, text) in _recent:
            return
        _recent[(normalization, text)] = norm
        _recent_chars += size
        while _recent_chars > RECENT_MAX_CHARS:
            old_key, old_norm = next(iter(_recent.items()))
            del _recent[old_key]
            _recent_chars -= len(old_key[1]) + len(old_norm)


def tokens_for(key: str, normalized: str) -> list[str]:
    return TOKENIZERS[method_get(key).tokenizer](normalized)


# Tokens that repeat across documents are worth caching; shingles rarely repeat.
_UNCACHED_TOKENIZERS = {"word-shingle3-v1"}


def fingerprint_text(
    key: str, text: str, *, min_tokens: int = 1, reference: bool = False
) -> FingerprintResult:
    """Normalize, hash (exact layer) and SimHash (near layer) one text.

    Fewer than `min_tokens` tokens gives `insufficient_features` and no SimHash
    : empty text is never a duplicate of empty text.
    """
    return fingerprint_texts([key], text, min_tokens=min_tokens, reference=reference)[key]


def fingerprint_texts(
    keys: Sequence[str], text: str, *, min_tokens: int = 1, reference: bool = False
) -> dict[str, FingerprintResult]:
    """`fingerprint_text` for several methods at once, each step done once and shared
    where the methods' definitions make it give the same result:

    - each normalization once; NFKC of a text already in NFKC is its NFC, and two normalized
      texts that are equal share their SHA-256 and tokens;
    - the words once per normalized text; shingles are built from them;
    - the CJK tokenizer of a text without Han characters gives exactly the words
      (``[^\\W{Han}]+`` is ``\\w+`` there), and so does the mixed-script one of a text
      without Han, kana or hangul; the mixed-script normalization of a text without CJK
      characters is its NFC normalization;
    - one SimHash per distinct (text, tokens), so two methods that end up with the same
      tokens of the same text cost one.
    """
    # normalization -> (normalized text, SHA-256); equal texts share one tuple.
    normalized: dict[str, tuple[str, str]] = {}
    # (id of the normalized text's tuple, effective tokenizer) -> tokens, SimHash.
    tokens_memo: dict[tuple[int, str], list[str]] = {}
    simhash_memo: dict[tuple[int, str], int] = {}
    out: dict[str, FingerprintResult] = {}
    for key in keys:
        spec = method_get(key)
        entry = normalized.get(spec.normalization)
        if entry is None:
            entry = _normalized(spec.normalization, text, normalized, tokens_memo)
            normalized[spec.normalization] = entry
        norm, digest = entry
        tokenizer = spec.tokenizer
        # has_cjk(text) is remembered from the normalization: no second scan of a page
        # without CJK (NFC makes no CJK character of others).
        if (tokenizer == "cjk-bigram-words-v1" and not has_han(norm)) or (
            tokenizer == MIXED_TOKENIZER and not (has_cjk(text) and has_grams(norm))
        ):
            tokenizer = "words-casefold-v1"
        memo_key = (id(entry), tokenizer)
        tokens = tokens_memo.get(memo_key)
        if tokens is None:
            if tokenizer == "word-shingle3-v1":
                tokens = shingles3(_words(entry, tokens_memo))
            elif tokenizer == "words-casefold-v1":
                tokens = _words(entry, tokens_memo)
            else:
                tokens = TOKENIZERS[tokenizer](norm)
            tokens_memo[memo_key] = tokens
        if len(tokens) < max(min_tokens, 1):
            out[key] = FingerprintResult("insufficient_features", None, digest, len(tokens))
            continue
        simhash = simhash_memo.get(memo_key)
        if simhash is None:
            if reference:
                simhash = simhash64_reference(tokens)
            else:
                simhash = simhash64_fast(tokens, cache=tokenizer not in _UNCACHED_TOKENIZERS)
            simhash_memo[memo_key] = simhash
        out[key] = FingerprintResult("ok", simhash, digest, len(tokens))
    return out


def _normalized(
    normalization: str,
    text: str,
    done: dict[str, tuple[str, str]],
    memo: dict[tuple[int, str], list[str]],
) -> tuple[str, str]:
    """(normalized text, its SHA-256), the tuple of an equal text already normalized
    when there is one (so that its tokens are shared); the words of an NFC text are
    put in ``memo`` when they are already known."""
    if normalization in _NFKC_SAME and (text.isascii() or is_normalized("NFKC", text)):
        # A text already in NFKC is in NFC too: both normalizations leave it as it is,
        # so both are the text with spaces folded.
        for other in _NFKC_SAME:
            if other in done:
                return done[other]
    if normalization == MIXED_NORMALIZATION and not has_cjk(text):
        normalization = "nfc-spacefold-v1"  # the same text: nothing of it is CJK
    if normalization == "nfc-spacefold-v1":
        norm, words = nfc_words(text)  # extraction counted the tokens this way
    else:
        norm, words = NORMALIZERS[normalization](text), None
    for entry in done.values():
        if entry[0] == norm:
            return entry
    _recent_put(normalization, text, norm)
    entry = norm, hashlib.sha256(norm.encode("utf-8")).hexdigest()
    if words is not None:
        memo[(id(entry), "words-casefold-v1")] = words
    return entry


# Normalizations that give the same text for an input already in NFKC.
_NFKC_SAME = ("nfc-spacefold-v1", "nfkc-spacefold-v1")


def _words(entry: tuple[str, str], memo: dict[tuple[int, str], list[str]]) -> list[str]:
    key = (id(entry), "words-casefold-v1")
    words = memo.get(key)
    if words is None:
        words = memo[key] = tokens_words(entry[0])
    return words
