"""Candidate channels' bits: each channel nominates pairs by its own rule and records its
evidence.

A pair keeps one bit per channel that nominated it (a small integer, so every
database can filter on it) and one entry per channel in its evidence. What a channel is
(its probe, its rule, its evidence, its score, its pair-view panel) lives in its module
of ingest/channels; a new channel also takes the next bit and name here (docs/architecture.md,
"Adding a channel").
"""

from collections.abc import Iterable

EXACT = 1  # same normalized main text (SHA-256)
SIMHASH = 2  # main-text SimHash within the doc type's threshold (band index)
PASSAGES = 4  # shared passages, one text mostly inside the other (ingest/core/passages)
SEMANTIC = 8  # nearest neighbours of main-text embeddings (when EMBEDDING_MODEL is set)
MINHASH = 16  # MinHash-LSH: token-shingle Jaccard (when MINHASH_CHANNEL is on)

BITS: dict[str, int] = {
    "exact": EXACT,
    "simhash": SIMHASH,
    "passages": PASSAGES,
    "semantic": SEMANTIC,
    "minhash": MINHASH,
}
NAMES: dict[int, str] = {bit: name for name, bit in BITS.items()}
# Channels the workers run (semantic: where the model is configured; minhash: where
# MINHASH_CHANNEL is on), in display order.
ACTIVE: tuple[str, ...] = ("exact", "simhash", "passages", "semantic", "minhash")


def names(mask: int) -> list[str]:
    return [name for name, bit in BITS.items() if mask & bit]


def mask(channel_names: Iterable[str]) -> int:
    out = 0
    for name in channel_names:
        try:
            out |= BITS[name]
        except KeyError:
            raise ValueError(f"unknown channel {name!r}; known: {sorted(BITS)}") from None
    return out


def masks_with(bit: int) -> list[int]:
    """Every channel mask that has this bit set (for an IN filter)."""
    everything = sum(BITS.values())
    return [m for m in range(everything + 1) if m & bit]


# The review queue's first order is a pair's uncertainty: how near its distance is to
# the doc type's threshold (0 = on the threshold, reviewed first). A pair nominated by
# the semantic channel alone ("same meaning, different words") carries no textual
# evidence, so it ranks below every other pair: its uncertainty is lifted by this much,
# more than any |distance - threshold| of 64-bit fingerprints can be.
SEMANTIC_ONLY_RANK = 1000


def semantic_only(mask: int) -> bool:
    """Nominated by the semantic channel and by no other."""
    return mask == SEMANTIC


def queue_rank(*, distance: int, threshold: int, mask: int) -> int:
    """The queue's stored order of a pair (CandidatePair.uncertainty)."""
    return abs(distance - threshold) + (SEMANTIC_ONLY_RANK if semantic_only(mask) else 0)
