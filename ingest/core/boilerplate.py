"""A site's boilerplate lines, learned from the full-page branch of its pages, and the
main text without them: what the passage channel (and the SimHash check of a pair)
compares, method boilerplate-lines-v1.

The extractor keeps a site's footer, menu or sidebar in the main text of some pages
("Browse | Feedback | About us … (c) 2008 Earthtimes.org"). Two different articles of
that site then share those lines, and when the articles are short the lines are most of
what the channels see. The full-page branch holds every visible block of a page, so a
block that recurs on many pages of one registrable domain is the site's, not an
article's.

Rules (all of them part of the version):

- A line is a block of the full-page branch or a paragraph of the main text. Its key is
  the first 8 bytes of the BLAKE2b of its text after NFKC, casefolding and folding runs
  of spaces; a line of fewer than MIN_CHARS word characters has no key (a "|" or a
  page number). Short lines count: a menu of thirty lines of four Han characters is 120
  tokens of the mixed method, six passages of template text.
- A line is boilerplate for a page when it is on at least ``max(MIN_PAGES,
  ceil(SHARE * n))`` of the n *other* pages sampled from the page's registrable domain,
  and n is at least MIN_PAGES: until a site has a few pages nothing is dropped. The
  share keeps an article republished at a few URLs of a large site (an aggregator) from
  being taken for its template.
- Only whole lines of the main text are dropped, never part of one.

No Django here.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

VERSION = "boilerplate-lines-v1"
MIN_CHARS = 2  # word characters a line needs to have a key
MIN_PAGES = 3  # other pages of the domain a line must be on (and a site must have)
SHARE = 0.3  # … and at least this share of the other pages sampled
SAMPLE = 24  # pages of a domain read to learn its boilerplate

_SPACES_RE = re.compile(r"\s+")
_WORD_CHAR_RE = re.compile(r"\w")


def line_key(line: str) -> int | None:
    """The line's key, or None when it is too short to have one."""
    text = _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", line).casefold()).strip()
    if len(_WORD_CHAR_RE.findall(text)) < MIN_CHARS:
        return None
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def line_keys(text: str) -> set[int]:
    """The keys of a text's lines."""
    return {k for k in map(line_key, text.split("\n")) if k is not None}


def pages_needed(others: int) -> int:
    """Other pages a line must be on to be boilerplate, among `others` sampled."""
    return max(MIN_PAGES, math.ceil(SHARE * others))


def learn(others: Sequence[set[int]]) -> set[int]:
    """The boilerplate keys for a page, given the line keys of the full-page branch of
    the other pages sampled from its domain (never the page itself: a page's own lines
    are not evidence that they are its site's)."""
    if len(others) < MIN_PAGES:
        return set()
    counts: Counter[int] = Counter()
    for keys in others:
        counts.update(keys)
    needed = pages_needed(len(others))
    return {k for k, n in counts.items() if n >= needed}


@dataclass(frozen=True)
class Stripped:
    text: str  # the main text without its boilerplate lines
    dropped: list[str]  # the lines dropped, in their order


def strip(text: str, boilerplate: set[int]) -> Stripped:
    """The text without the lines whose key is in `boilerplate`."""
    if not boilerplate or not text:
        return Stripped(text, [])
    kept: list[str] = []
    dropped: list[str] = []
    for line in text.split("\n"):
        (dropped if line_key(line) in boilerplate else kept).append(line)
    if not dropped:
        return Stripped(text, [])
    return Stripped("\n".join(kept), dropped)


def strip_lines(text: str, dropped: Iterable[str]) -> str:
    """The text without the recorded lines (each recorded line drops every line of the
    text equal to it): a recorded drop applied again gives the same text."""
    keys = {k for k in map(line_key, dropped) if k is not None}
    return strip(text, keys).text
