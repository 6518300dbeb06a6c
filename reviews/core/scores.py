"""Score descriptors of the calibration: the candidate channels' own (ingest/core/scores.py),
named here for the desk's pure core."""

from ingest.core.scores import (
    COSINE,
    DIRECTIONS,
    HIGHER,
    LOWER,
    PASSAGE_CONTAINMENT,
    SIMHASH_DISTANCE,
    TOKEN_SET_RATIO,
    Score,
)

__all__ = [
    "COSINE",
    "DIRECTIONS",
    "HIGHER",
    "LOWER",
    "PASSAGE_CONTAINMENT",
    "SIMHASH_DISTANCE",
    "TOKEN_SET_RATIO",
    "Score",
]
