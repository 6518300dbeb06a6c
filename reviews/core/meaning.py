"""Closest sentences in meaning, for the pair view's semantic panel. Pure: no Django.

Given the unit vectors of A's sentences and of B's, each of A's sentences is matched to
B's sentence with the highest cosine (ties: the earliest in B). The vectors are the
stored float16 format of ingest/core/embeddings.py (packed bytes), so the cosines are
the ones the channel computes. Crawled text stays plain strings (escaped by templates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ingest.core.embeddings import unpack


@dataclass(frozen=True)
class Closest:
    a: int  # 0-based index of A's sentence
    b: int  # 0-based index of B's closest sentence
    cosine: float


def closest(a_vectors: Sequence[bytes], b_vectors: Sequence[bytes]) -> list[Closest]:
    """For each of A's sentences, B's closest one in meaning and their cosine."""
    if not a_vectors or not b_vectors:
        return []
    a = np.stack([unpack(v) for v in a_vectors])
    b = np.stack([unpack(v) for v in b_vectors])
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"vectors differ in size ({a.shape[1]} and {b.shape[1]} dims)")
    sims = np.clip(a @ b.T, -1.0, 1.0)
    best = sims.argmax(axis=1)  # argmax keeps the first of equal maxima
    return [Closest(i, int(j), round(float(sims[i, j]), 4)) for i, j in enumerate(best)]
