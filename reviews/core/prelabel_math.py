"""A starting threshold before any label exists: the valley between two score modes.

Pure: no Django. On a new corpus, per doc type and channel:

- **Random document pairs, stratified by site.** Each draw picks a site uniformly, then
  a document of it uniformly, twice (with replacement; the two documents must differ).
  Every site weighs the same whatever its size, so one large site (and its template)
  does not make the "unrelated pages" mode on its own. Seeded: the same documents and
  seed give the same pairs, whatever their input order.
- **Histograms.** The scores of the random pairs (mostly unrelated pages) and of the
  candidate pairs (the index's nominations: mostly copies) in the score's bins; for the
  suggestion each is scaled to the same total mass, so neither source drowns the other
  by its size alone.
- **Suggestion: minimum of the smoothed histogram between its two largest peaks.** The
  pooled histogram is smoothed with a [1, 2, 1] / 4 kernel; a peak is a bin higher than
  its left neighbour and at least as high as its right one. The modes are the highest
  peak and the highest other peak at least ``min_separation`` bins away with a valley
  between them lower than ``max_valley_ratio`` × the smaller of the two (so a mode that
  noise splits into two bumps stays one mode); the valley is the lowest smoothed bin
  between them (several equally low bins: the middle one). The suggested threshold is
  the valley bin's value (``Score.bin_centre``). No second mode: no suggestion, with the
  reason.

Limits (said on the page too): the valley is where the two populations separate, not
where an editor would draw the line for a purpose; candidate pairs exist only within the
index's current threshold, so the copies mode is cut there and the valley can lie above
the threshold the index can search; near-copies that are neither nominated nor drawn at
random are invisible; with few documents the random mode is noisy.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reviews.core.scores import Score
from reviews.core.words import Said, gettext_noop

METHOD_NAME = "minimum of the smoothed histogram between the two largest peaks"
UNLABELLED = "unlabelled"
LABELLED = "labels"


def stratified_document_pairs(
    documents: Iterable[tuple[int, str]], *, draws: int, seed: int | str
) -> list[tuple[int, int]]:
    """``draws`` random pairs (a < b) of documents given as (document id, site): site
    uniformly, then a document of the site uniformly, for each side. Pairs may repeat
    (sampling with replacement keeps the site weights exact). Fewer than two documents:
    no pair."""
    if draws < 0:
        raise ValueError(f"draws must be >= 0, got {draws}")
    by_site: dict[str, list[int]] = defaultdict(list)
    for doc, site in documents:
        by_site[site].append(doc)
    sites = sorted(by_site)
    for site in sites:
        by_site[site].sort()
    if sum(len(v) for v in by_site.values()) < 2:
        return []
    rng = random.Random(f"prelabel:{seed}")
    out: list[tuple[int, int]] = []
    attempts = 0
    while len(out) < draws and attempts < draws * 20 + 100:
        attempts += 1
        a = rng.choice(by_site[rng.choice(sites)])
        b = rng.choice(by_site[rng.choice(sites)])
        if a != b:
            out.append((min(a, b), max(a, b)))
    return out


def histogram(score: Score, values: Iterable[float]) -> list[int]:
    counts = [0] * score.bins
    for v in values:
        counts[score.bin_of(v)] += 1
    return counts


def smooth(counts: Sequence[float]) -> list[float]:
    """[1, 2, 1] / 4 kernel; the ends reuse their own value for the missing neighbour."""
    n = len(counts)
    out = []
    for i in range(n):
        left = counts[i - 1] if i > 0 else counts[i]
        right = counts[i + 1] if i < n - 1 else counts[i]
        out.append((left + 2 * counts[i] + right) / 4)
    return out


def _normalised(counts: Sequence[int]) -> list[float]:
    total = sum(counts)
    return [c / total for c in counts] if total else [0.0] * len(counts)


@dataclass(frozen=True)
class Suggestion:
    threshold: float | None  # None: no suggestion (see reason)
    valley_bin: int | None
    peaks: tuple[int, ...]  # the two modes' bins, closer first
    reason: str
    method: str = METHOD_NAME
    source: str = UNLABELLED


def suggest(
    score: Score,
    sample: Sequence[int],
    candidates: Sequence[int],
    *,
    min_separation: int = 2,
    max_valley_ratio: float = 0.5,
    documents: int | None = None,
    min_documents: int = 0,
) -> Suggestion:
    """The valley threshold from the two histograms (see the module rules). With fewer
    than ``min_documents`` documents behind the random pairs there is no suggestion: a
    handful of pages repeated over many draws makes modes out of noise."""
    if len(sample) != score.bins or len(candidates) != score.bins:
        raise ValueError(f"histograms must have {score.bins} bins")
    if documents is not None and documents < min_documents:
        return Suggestion(
            None,
            None,
            (),
            Said(
                gettext_noop(
                    "%(documents)s documents: fewer than %(min_documents)s, "
                    "too few to tell modes from noise"
                ),
                documents=documents,
                min_documents=min_documents,
            ),
        )
    parts = [_normalised(h) for h in (sample, candidates) if sum(h) > 0]
    if not parts:
        return Suggestion(None, None, (), Said(gettext_noop("no scores yet")))
    pooled = [sum(p[i] for p in parts) for i in range(score.bins)]
    s = smooth(pooled)
    n = len(s)
    peaks = [
        i
        for i in range(n)
        if s[i] > 0 and (i == 0 or s[i] > s[i - 1]) and (i == n - 1 or s[i] >= s[i + 1])
    ]
    ordered = sorted(peaks, key=lambda i: (-s[i], i))
    if not ordered:
        return Suggestion(None, None, (), Said(gettext_noop("no scores yet")))
    first = ordered[0]

    def deep(other: int) -> bool:
        a, b = sorted((first, other))
        if b - a < min_separation:
            return False
        return min(s[a + 1 : b]) < max_valley_ratio * min(s[first], s[other])

    # The highest other peak that a real valley separates from the highest one: a mode
    # split in two by noise (a bump beside a bump) is one mode.
    second = next((i for i in ordered[1:] if deep(i)), None)
    if second is None:
        reason = (
            Said(gettext_noop("one mode only: no valley to split at"))
            if len(ordered) == 1
            else Said(
                gettext_noop("no valley deeper than %(ratio)s × the smaller peak"),
                ratio=f"{max_valley_ratio:g}",
            )
        )
        return Suggestion(None, None, (first,), reason)
    lo, hi = sorted((first, second))
    between = range(lo + 1, hi)
    low = min(s[i] for i in between)
    lowest = [i for i in between if s[i] == low]
    valley = lowest[(len(lowest) - 1) // 2]
    modes = (
        (lo, hi)
        if score.closer_first(score.bin_centre(lo)) <= score.closer_first(score.bin_centre(hi))
        else (hi, lo)
    )
    threshold = score.bin_centre(valley)
    return Suggestion(
        threshold,
        valley,
        modes,
        Said(
            gettext_noop("valley at %(valley)s between the modes at %(first)s and %(second)s"),
            valley=score.bin_label(valley),
            first=score.bin_label(modes[0]),
            second=score.bin_label(modes[1]),
        ),
    )


NONE = "none"


@dataclass(frozen=True)
class Starting:
    """The threshold to start from, and where it comes from."""

    source: str  # LABELLED ("labels"), UNLABELLED ("unlabelled") or NONE
    threshold: float | None
    reason: str


def starting_threshold(
    suggestion: Suggestion,
    *,
    label_threshold: float | None,
    label_reason: str = "",
    positives: int = 0,
    negatives: int = 0,
    min_per_class: int = 30,
    label_sweep: bool = True,
) -> Starting:
    """The label-based threshold as soon as both classes have ``min_per_class`` labelled
    pairs and it exists; until then the unlabelled suggestion, marked as such.
    ``label_sweep`` False: the score has no label-based sweep yet, the suggestion stays."""
    enough = positives >= min_per_class and negatives >= min_per_class
    if label_sweep and enough and label_threshold is not None:
        return Starting(
            LABELLED,
            label_threshold,
            Said(
                gettext_noop("from %(labels)s labels: %(reason)s"),
                labels=positives + negatives,
                reason=label_reason,
            ),
        )
    counts = (
        Said(
            gettext_noop(
                "%(positives)s positive and %(negatives)s negative labels so far; "
                "%(min_per_class)s of each replace it with a label-based threshold"
            ),
            positives=positives,
            negatives=negatives,
            min_per_class=min_per_class,
        )
        if label_sweep
        else Said(gettext_noop("no label-based sweep for this score yet"))
    )
    if suggestion.threshold is not None:
        return Starting(
            UNLABELLED,
            suggestion.threshold,
            Said(gettext_noop("%(reason)s (%(counts)s)"), reason=suggestion.reason, counts=counts),
        )
    return Starting(
        NONE,
        None,
        Said(gettext_noop("%(reason)s (%(counts)s)"), reason=suggestion.reason, counts=counts),
    )
