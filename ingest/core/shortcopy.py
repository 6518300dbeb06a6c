"""Short copies: the passage channel's second rule, for texts of a few hundred words.

A text of 100–300 words has few winnowed passages (about one per 18 words), so one
passage lost to an edit moves the winnowed containment by 5–10 points, and winnowed
containment runs below the true shingle containment near 0.5: a press statement
reprinted with a few words changed, or an agency story beside another site's paragraph
of context, stays under ``PASSAGE_CONTAINMENT_MIN``. For such a pair the channel also
asks what is robust on short texts: the containment of the shorter text's word
3-shingles in the longer one, computed exactly on the two texts (``guards.similarity``
already computes it for every pair), with shared passages still required as evidence
(template passages and stock phrases are not evidence: they never count).

Chinese and Japanese are written without spaces: a ``\\w+`` word is a whole clause, so
word 3-shingles say nothing there (two pages of one template share their template's
clauses). When the shorter text is mostly in such a script (``reads_as_words`` is
false), the rule reads characters instead: the shingles are runs of CHAR_N tokens of the
passage channel's mixed tokenizer (each CJK character after the fold of traditional Han
to simplified, every other script's words), computed on the texts the passage channel
reads (the site's boilerplate lines left out), and at least ``chars_min`` of the shorter
text's must be in the longer. A Chinese excerpt of 50–150 characters has three to eight
passages and shares one or two with its source, so the character reading asks for one
shared passage at least, as many as ``containment_min`` of the shorter side's passages
(its winnowed containment), not ``shared_min``. Text without CJK characters is read as
before, to the bit.

A text of up to a hundred and fifty words (a brief, a news lead, a page whose extractor
kept one paragraph of it) has two to eight passages; once an edit, a cut or another order
costs it one, a text of two or three can never share ``shared_min`` (3) passages with
anything, and a brief with light edits rarely does, however much of it is in the other
text. So the word reading, like the character reading, asks a short side for as many
shared passages as its containment floor implies (``containment_min`` of its passages),
two at least, never more than ``shared_min`` (``shared_needed``): one shared passage is
never its evidence, and the word 3-shingle share is still the test. A side of more than
eight passages is asked for ``shared_min`` as before (the floor implies it), and the
index lookup asks as few of a stored or a queried text that short
(``ingest/passages.py``), so that the pair is found whichever of the two arrives first.

Pure: no Django. The thresholds are settings (``PASSAGE_SHORT_*``); the figures that
chose them are in ``bench/short_copies_bench.py`` (words) and ``bench/language_bench.py``
(characters).
"""

import math
import re
from dataclasses import dataclass

from ingest.core.passages import MIXED_METHOD, Overlap, tokens

CHAR_N = 5  # tokens (CJK characters) per shingle of the character reading

# Han and kana: scripts written without spaces between words.
_UNSPACED_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD_CHAR_RE = re.compile(r"\w")


def reads_as_words(text: str) -> bool:
    """Whether the word 3-shingle containment says something of this text: not when most
    of its word characters are in scripts written without spaces (Chinese, Japanese),
    where a `\\w+` word is a whole clause and two pages of one template share their
    template's clauses whatever their articles. Such a pair is left to the passage
    channel's own rule, which reads those scripts by characters."""
    words = len(_WORD_CHAR_RE.findall(text))
    return words == 0 or 2 * len(_UNSPACED_RE.findall(text)) < words


@dataclass(frozen=True)
class ShortRule:
    """When a pair with a short side is a short copy.

    ``passages_max``: the shorter side (in passages, templates removed) has at most this
    many passages (24 passages is about 430 words); ``shingle_min``: at least this share
    of the shorter text's word 3-shingles is in the longer text; ``shared_min``: at least
    this many passages are shared (the evidence the passage index found the pair by;
    two when the shorter side has few passages: ``shared_needed``);
    ``containment_min``: the winnowed containment is at least this (a floor far under the
    channel's own threshold, so that a pair held together by shingles of one stock
    sentence is not nominated).
    """

    passages_max: int = 24
    shingle_min: float = 0.4
    shared_min: int = 3
    containment_min: float = 0.25
    chars_min: float = 0.5  # the character reading's shingle share (``short_copy(chars=True)``)


def shorter_passages(ov: Overlap) -> int:
    """Passages of the side with fewer (templates removed); 0 when a side has none."""
    return min(ov.size_a, ov.size_b)


def shared_needed(passages: int, shared_min: int, containment_min: float) -> int:
    """The fewest shared passages the word reading asks of a pair whose shorter side has
    ``passages`` passages: ``containment_min`` of them (what its containment floor
    implies), two at least (a single shared passage is never the word reading's
    evidence), never more than ``shared_min``. With the shipped 3 and 0.25: two for a
    side of up to eight passages, three beyond."""
    return min(shared_min, max(2, math.ceil(containment_min * passages)))


def short_copy(
    ov: Overlap, *, shingle_containment: float, rule: ShortRule, chars: bool = False
) -> bool:
    """Whether the pair is a short copy under ``rule``: its shorter side is short, it
    shares passages, and its shorter text's shingles are mostly in the other.
    ``chars``: ``shingle_containment`` is the character reading's (``char_containment``):
    one shared passage is enough, and ``rule.chars_min`` of the shingles are needed.
    Otherwise ``shared_needed`` passages are (``rule.shared_min``, two for a shorter side
    of at most eight passages)."""
    short = 0 < shorter_passages(ov) <= rule.passages_max
    if chars:
        return (
            short
            and ov.shared >= 1
            and ov.containment >= rule.containment_min
            and shingle_containment >= rule.chars_min
        )
    return (
        short
        and ov.shared >= shared_needed(shorter_passages(ov), rule.shared_min, rule.containment_min)
        and ov.containment >= rule.containment_min
        and shingle_containment >= rule.shingle_min
    )


def char_shingles(text: str, n: int = CHAR_N) -> frozenset[tuple[str, ...]]:
    """The text's shingles of ``n`` mixed tokens (the passage channel's tokenizer under
    the mixed method: CJK characters folded to simplified, other scripts' words)."""
    toks = tokens(text, method=MIXED_METHOD)
    return frozenset(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))


def char_containment(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """Share of the smaller shingle set found in the other (0 when one is empty)."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short & long) / len(short) if short else 0.0
