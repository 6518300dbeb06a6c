"""Business guards and similarity scores for candidate pairs: they annotate a
nomination, labels decide.

Guards never change the distance and never decide anything: they are shown to editors,
exported with labels, and block automatic merges. Two pages with identical SimHash
can still be two products at two prices.

Definitions (applied to NFKC-normalized text, so full-width digits and letters count
as ASCII ones):

- ID token: a run of ASCII letters and digits, optionally joined by "-" or "_"
  ("SKU-4411", "AB12-X9", "iPhone15", "x86_64"), with at least one letter, at least
  one digit and at least 4 characters, that is not a number with a short unit suffix
  ("10kg", "128GB", "1080p", "3rd": those are numbers). Compared as sets, casefolded:
  an ID repeated in a breadcrumb is the same ID.
- Numeric token: once ID tokens are removed, a run of digits with inner separators
  . , : / - between digit groups ("1.250.000", "19.99", "2026-05-01", "10:30"; "v2.3"
  gives "2.3", "199 元" gives "199"). Compared as multisets: the same numbers
  reordered are not a difference, one price changed is. No sign is kept.
- Title: NFC, spaces folded, casefolded; a difference counts only when both titles
  are non-empty.

`similarity` works on bounded excerpts (the first and last max_chars / 2 characters
of a longer text), so a 5 MB page costs what a 20,000-character page costs. Empty or
blank text is similar to nothing (empty is not a duplicate of empty).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from ingest.core.normalize import WORD_RE, is_blank, normalize_nfc_v1, tokens_words

MAX_SHOWN = 20  # differing tokens kept for display, per side

_ID_RE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*(?![A-Za-z0-9])")
_LETTER_RE = re.compile(r"[A-Za-z]")
_DIGIT_RE = re.compile(r"[0-9]")
_NUMBER_WITH_UNIT_RE = re.compile(r"[0-9]+(?:[.,][0-9]+)?[A-Za-z]{1,3}")
_NUMBER_RE = re.compile(r"\d+(?:[.,:/\-]\d+)*")


@dataclass(frozen=True)
class Guards:
    numbers_differ: bool
    ids_differ: bool
    title_differs: bool
    numbers_a: tuple[str, ...] = ()  # only the differing ones, for display
    numbers_b: tuple[str, ...] = ()
    ids_a: tuple[str, ...] = ()
    ids_b: tuple[str, ...] = ()

    def any(self) -> bool:
        return self.numbers_differ or self.ids_differ or self.title_differs

    def flags(self) -> list[str]:
        names = ("numbers_differ", "ids_differ", "title_differs")
        return [name for name in names if getattr(self, name)]


def _is_id(token: str) -> bool:
    return (
        len(token) >= 4
        and _LETTER_RE.search(token) is not None
        and _DIGIT_RE.search(token) is not None
        and _NUMBER_WITH_UNIT_RE.fullmatch(token) is None
    )


def _split(text: str) -> tuple[list[str], list[str]]:
    """(ID tokens, numeric tokens) of one text, in order of appearance."""
    text = unicodedata.normalize("NFKC", text)
    ids: list[str] = []
    rest: list[str] = []
    last = 0
    for match in _ID_RE.finditer(text):
        if _is_id(match.group()):
            ids.append(match.group())
            rest.append(text[last : match.start()])
            last = match.end()
    rest.append(text[last:])
    numbers = [m.group() for chunk in rest for m in _NUMBER_RE.finditer(chunk)]
    return ids, numbers


def id_tokens(text: str) -> list[str]:
    """SKU-like tokens, in order of appearance (see the module docstring)."""
    return _split(text)[0]


def numeric_tokens(text: str) -> list[str]:
    """Numbers (prices, dates, versions), outside ID tokens, in order of appearance."""
    return _split(text)[1]


def _only_in(first: list[str], second: Counter[str]) -> tuple[str, ...]:
    """Tokens of `first` not matched in the multiset `second`, in order, capped."""
    left = Counter(second)
    out: list[str] = []
    for token in first:
        if left[token] > 0:
            left[token] -= 1
        elif len(out) < MAX_SHOWN:
            out.append(token)
    return tuple(out)


def _title(title: str) -> str:
    return normalize_nfc_v1(title).casefold()


def guards_check(text_a: str, text_b: str, title_a: str = "", title_b: str = "") -> Guards:
    ta, tb = _title(title_a), _title(title_b)
    title_differs = bool(ta) and bool(tb) and ta != tb
    if text_a == text_b:
        # One text (exact copies are most pairs of a crawl): no number nor ID can differ,
        # and scanning it twice would only confirm that.
        return Guards(numbers_differ=False, ids_differ=False, title_differs=title_differs)
    return _guards(text_a, text_b, title_differs)


def _guards(text_a: str, text_b: str, title_differs: bool) -> Guards:
    """The number and ID guards of two texts scanned."""
    ids_a, numbers_a = _split(text_a)
    ids_b, numbers_b = _split(text_b)
    count_a, count_b = Counter(numbers_a), Counter(numbers_b)
    set_a = {t.casefold() for t in ids_a}
    set_b = {t.casefold() for t in ids_b}
    return Guards(
        numbers_differ=count_a != count_b,
        ids_differ=set_a != set_b,
        title_differs=title_differs,
        numbers_a=_only_in(numbers_a, count_b),
        numbers_b=_only_in(numbers_b, count_a),
        ids_a=_unique_capped(t for t in ids_a if t.casefold() not in set_b),
        ids_b=_unique_capped(t for t in ids_b if t.casefold() not in set_a),
    )


def _unique_capped(tokens: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    seen: set[str] = set()
    for token in tokens:
        if token.casefold() not in seen and len(out) < MAX_SHOWN:
            seen.add(token.casefold())
            out.append(token)
    return tuple(out)


@dataclass(frozen=True)
class Similarity:
    ratio: float  # rapidfuzz fuzz.ratio of the bounded texts, 0..100
    token_set_ratio: float  # rapidfuzz fuzz.token_set_ratio, 0..100
    length_ratio: float  # shorter / longer, in characters of the whole texts, 0..1
    containment: float  # share of the shorter text's word 3-shingles in the longer, 0..1


EMPTY = Similarity(0.0, 0.0, 0.0, 0.0)


def excerpt(text: str, max_chars: int) -> str:
    """At most max_chars characters: the text, or its head and tail halves."""
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return text[:half] + " " + text[len(text) - (max_chars - half) :]


def _shingles(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def similarity(a: str, b: str, *, max_chars: int = 20_000) -> Similarity:
    """Similarity of two (normalized) texts, bounded: O(max_chars) work per text."""
    if max_chars < 2:
        raise ValueError("max_chars must be at least 2")
    ea, eb = excerpt(a, max_chars), excerpt(b, max_chars)
    if is_blank(ea) or is_blank(eb):
        return EMPTY
    if a == b:
        # One text (exact copies are most pairs of a crawl): every score is at its top,
        # as the computation below would find in O(max_chars²) work.
        # (Whether it has a word at all: ``tokens_words(ea)`` is empty exactly when the
        # search finds none, and building the list is most of the cost.)
        return Similarity(100.0, 100.0, 1.0, 1.0 if WORD_RE.search(ea.casefold()) else 0.0)
    return _similarity(a, b, ea, eb)


def _similarity(a: str, b: str, ea: str, eb: str) -> Similarity:
    """The scores of two non-blank texts and their excerpts."""
    length_ratio = min(len(a), len(b)) / max(len(a), len(b))
    short, long = (ea, eb) if len(a) <= len(b) else (eb, ea)
    short_words = tokens_words(short)
    # Word 3-shingles; a shorter text of one or two words uses shingles of that size.
    size = min(3, len(short_words))
    if size:
        short_shingles = _shingles(short_words, size)
        long_shingles = _shingles(tokens_words(long), size)
        containment = len(short_shingles & long_shingles) / len(short_shingles)
    else:
        containment = 0.0
    return Similarity(
        ratio=float(fuzz.ratio(ea, eb)),
        token_set_ratio=float(fuzz.token_set_ratio(ea, eb)),
        length_ratio=length_ratio,
        containment=containment,
    )
