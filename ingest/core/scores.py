"""Score descriptors: what a calibration needs to know about one channel's score.

Pure: no Django. Each candidate channel (ingest/channels) names its score here, and the
desk's calibration sweeps it (reviews/core/scores.py names them for the desk's core). A
score (SimHash distance, token-set ratio, passage containment, embedding cosine, …)
plugs into the action sweep and the pre-label histogram by one ``Score``: its name,
which direction is closer, its range and its histogram bins.
Thresholds are read the same way for every score: a pair is "same" at threshold t when
its score is at least as close as t (``score <= t`` when lower is closer, ``score >= t``
when higher is closer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def gettext_noop(message: str) -> str:
    """Mark a score's words for the desk's catalogues (makemessages finds the name); the
    desk translates them where it shows them (the desk_words template filter)."""
    return message


LOWER = "lower"  # lower is closer: a distance
HIGHER = "higher"  # higher is closer: a similarity
DIRECTIONS = (LOWER, HIGHER)


@dataclass(frozen=True)
class Score:
    name: str  # stable key, e.g. "simhash_distance"
    label: str  # for people, e.g. "SimHash distance, main text (bits)"
    closer: str  # LOWER or HIGHER
    lo: float  # smallest possible value
    hi: float  # largest possible value
    bin_width: float  # histogram bin width; with ``integer`` each bin holds whole values
    integer: bool = False  # integer scores: bin i holds lo + i*w … lo + (i+1)*w - 1

    def __post_init__(self) -> None:
        if self.closer not in DIRECTIONS:
            raise ValueError(f"closer must be one of {DIRECTIONS}, got {self.closer!r}")
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"bad range {self.lo}..{self.hi}")
        if not (math.isfinite(self.bin_width) and self.bin_width > 0):
            raise ValueError(f"bin_width must be > 0, got {self.bin_width}")

    @property
    def bins(self) -> int:
        span = (self.hi - self.lo) / self.bin_width
        # Integer scores include hi itself (0..64 bits is 65 values).
        return int(math.floor(span)) + 1 if self.integer else max(1, math.ceil(span))

    def bin_of(self, value: float) -> int:
        """The bin of a value; values outside the range go to the nearest end bin."""
        i = math.floor((value - self.lo) / self.bin_width)
        return min(max(i, 0), self.bins - 1)

    def bin_start(self, i: int) -> float:
        return self.lo + i * self.bin_width

    def bin_label(self, i: int) -> str:
        start = self.bin_start(i)
        if self.integer and self.bin_width == 1:
            return f"{start:g}"
        end = start + self.bin_width - (1 if self.integer else 0)
        return f"{start:g}–{min(end, self.hi):g}"

    def bin_centre(self, i: int) -> float:
        """The value a threshold at bin i takes: for whole-value bins of width 1 the
        value itself, otherwise the middle of the bin."""
        start = self.bin_start(i)
        if self.integer:
            return start + (self.bin_width - 1) / 2
        return start + self.bin_width / 2

    def within(self, value: float, threshold: float) -> bool:
        """Is a pair with this score "same" at this threshold?"""
        return value <= threshold if self.closer == LOWER else value >= threshold

    def closer_first(self, value: float) -> float:
        """A sort key: smaller is closer."""
        return value if self.closer == LOWER else -value

    def rule_text(self) -> str:
        return gettext_noop("score ≤ t") if self.closer == LOWER else gettext_noop("score ≥ t")


SIMHASH_DISTANCE = Score(
    name="simhash_distance",
    label=gettext_noop("SimHash distance, main text (bits)"),
    closer=LOWER,
    lo=0,
    hi=64,
    bin_width=1,
    integer=True,
)
TOKEN_SET_RATIO = Score(
    name="token_set_ratio",
    label=gettext_noop("token-set ratio, main text (0–100)"),
    closer=HIGHER,
    lo=0,
    hi=100,
    bin_width=5,
)
PASSAGE_CONTAINMENT = Score(
    name="passage_containment",
    label=gettext_noop("passage containment, the larger direction (0–1)"),
    closer=HIGHER,
    lo=0,
    hi=1,
    bin_width=0.05,
)
# The semantic channel's cosine of two main-text embeddings. Rewritten copies and
# same-topic pages both sit high (MiniLM gives 0.5–0.8 to unrelated news on one
# topic), so the bins cover the top half finely; lower values fall in the first bin.
COSINE = Score(
    name="cosine",
    label=gettext_noop("embedding cosine, main text (semantic channel)"),
    closer=HIGHER,
    lo=0.5,
    hi=1,
    bin_width=0.025,
)
