"""A site's boilerplate lines, learned from the full-page branch of its pages, and the
main text without them: what the passage channel (and the SimHash check of a pair)
compares, method boilerplate-lines-v2.

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
  other pages are other URLs, each read once (its latest fetch): a page recrawled three
  times is one page, so its own article is not taken for its site's lines. The
  share keeps an article republished at a few URLs of a large site (an aggregator) from
  being taken for its template.
- Only whole lines of the main text are dropped, never part of one.
- The main text is the extractor's text output, which marks list items and tables: a
  list item is ``- item`` (the marker is not part of the line's key, so ``- 首页`` is the
  block ``首页``), and a table row is ``| cell | cell |`` with its cells' blocks joined by
  spaces (a ``<br>`` or a ``<p>`` inside a cell is a block of its own in the full-page
  branch). A row is boilerplate when each of its cells is a run of boilerplate blocks
  (or has no key) and one at least has a key. ``boilerplate-lines-v1`` read neither
  mark: a sidebar list of headlines or a layout table stayed in the text of every page of
  its site.

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

VERSION = "boilerplate-lines-v2"
# Records of these versions stay in force for the documents they were made for (a
# document is read once; one read under v1 keeps its drop).
VERSIONS_IN_FORCE = ("boilerplate-lines-v1", VERSION)
MIN_CHARS = 2  # word characters a line needs to have a key
MIN_PAGES = 3  # other pages of the domain a line must be on (and a site must have)
SHARE = 0.3  # … and at least this share of the other pages sampled
SAMPLE = 24  # pages of a domain read to learn its boilerplate

CELL_PARTS_MAX = 48  # space-separated parts of a table cell read as a run of blocks

_SPACES_RE = re.compile(r"\s+")
_WORD_CHAR_RE = re.compile(r"\w")
_LIST_MARK_RE = re.compile(r"^- ")
# A table row of the extractor's text output: "| cell | cell |" ("\\|" inside a cell).
_ROW_RE = re.compile(r"^\|.*\|$")
_CELL_SPLIT_RE = re.compile(r"(?<!\\)\|")


def line_key(line: str) -> int | None:
    """The line's key, or None when it is too short to have one."""
    text = _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", line).casefold()).strip()
    text = _LIST_MARK_RE.sub("", text)
    if len(_WORD_CHAR_RE.findall(text)) < MIN_CHARS:
        return None
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def _cell_covered(cell: str, keys: set[int]) -> bool | None:
    """Whether a table cell is a run of lines whose keys are in ``keys`` (blocks joined
    by spaces), parts without a key counting as covered; None when the cell has no key
    at all (it neither makes nor keeps a row boilerplate)."""
    parts = cell.replace("\\|", "|").split()
    if not parts or line_key(cell) is None:
        return None
    if len(parts) > CELL_PARTS_MAX:
        return False
    covered = [True] + [False] * len(parts)  # covered[i]: parts[:i] is a run of blocks
    for i in range(1, len(parts) + 1):
        for j in range(i):
            if covered[j]:
                key = line_key(" ".join(parts[j:i]))
                if key is None or key in keys:
                    covered[i] = True
                    break
    return covered[-1]


def is_boilerplate(line: str, keys: set[int]) -> bool:
    """Whether a main-text line is boilerplate under ``keys``: its key is one of them,
    or it is a table row whose every cell with a key is a run of boilerplate blocks."""
    key = line_key(line)
    if key is None:
        return False
    if key in keys:
        return True
    text = line.strip()
    if not _ROW_RE.match(text) or len(text) < 2:
        return False
    cells = [_cell_covered(c, keys) for c in _CELL_SPLIT_RE.split(text[1:-1])]
    return any(c is True for c in cells) and all(c is not False for c in cells)


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


def strip(text: str, boilerplate: set[int], *, rows: bool = True) -> Stripped:
    """The text without its boilerplate lines under the keys `boilerplate`
    (``is_boilerplate``; ``rows=False``: only the lines whose own key is one of them)."""
    if not boilerplate or not text:
        return Stripped(text, [])
    kept: list[str] = []
    dropped: list[str] = []
    for line in text.split("\n"):
        drop = is_boilerplate(line, boilerplate) if rows else line_key(line) in boilerplate
        (dropped if drop else kept).append(line)
    if not dropped:
        return Stripped(text, [])
    return Stripped("\n".join(kept), dropped)


def strip_lines(text: str, dropped: Iterable[str]) -> str:
    """The text without the recorded lines (each recorded line drops every line of the
    text equal to it): a recorded drop applied again gives the same text."""
    keys = {k for k in map(line_key, dropped) if k is not None}
    return strip(text, keys, rows=False).text
