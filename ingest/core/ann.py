"""The semantic channel's approximate nearest-neighbour index, and how a process keeps
its copy of it complete. Nominates only: every nominated pair's cosine is recomputed
from the stored vectors.

Index: usearch HNSW over the stored float16 unit vectors (cosine metric, keys = document
ids), connectivity 16, expansion 128 when adding and searching (recall@10 against
exact cosine is measured by `candidates --recall-check` and bench/ann_bench.py).

Catching up. Every worker process keeps its own index and, before it queries, reads the
rows committed since it last looked. Row ids are handed out when a row is inserted but
become visible when its transaction commits, in another order: a process that has read
up to id 120 may later see id 117 appear. So `CatchUp` remembers the ids under its
watermark that it has not seen (gaps) and asks for them again on every catch-up, until
they appear or are older than `gap_seconds` (ids of rolled-back inserts are never
filled; any transaction that inserts a row commits within that time).
"""

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

# usearch comes with the `semantic` extra: imported by name where an index is made, so
# that the rest of the desk (and the exact helpers below) run without it.
USEARCH_MODULE = "usearch.index"

CONNECTIVITY = 16
EXPANSION_ADD = 128
# 64 gave recall@10 0.9495 at 1M vectors, 128 gave 0.9939 (bench/ann_bench.py).
EXPANSION_SEARCH = 128
# A gap older than this is an id that will never be filled (a rolled-back insert).
GAP_SECONDS = 900.0


@dataclass
class CatchUp:
    """Which row ids a process has read, as a watermark and the gaps under it."""

    watermark: int = 0
    gaps: dict[int, float] = field(default_factory=dict)  # id -> when first missed
    gap_seconds: float = GAP_SECONDS

    def wanted(self) -> tuple[int, list[int]]:
        """(ids above this are new, earlier ids still missing)."""
        return self.watermark, sorted(self.gaps)

    def seen(self, ids: Iterable[int], now: float) -> None:
        """Record the ids a catch-up read (those above the watermark and filled gaps)."""
        fresh = sorted(set(ids))
        for i in fresh:
            self.gaps.pop(i, None)
        above = [i for i in fresh if i > self.watermark]
        if above:
            present = set(above)
            for i in range(self.watermark + 1, above[-1]):
                if i not in present:
                    self.gaps[i] = now
            self.watermark = above[-1]
        for i, since in list(self.gaps.items()):
            if now - since > self.gap_seconds:
                del self.gaps[i]


@dataclass(frozen=True)
class Neighbour:
    document_id: int
    cosine: float  # of the indexed float16 vectors; recomputed exactly by the caller


def new_index(dims: int) -> Any:
    """An empty usearch index for unit vectors of `dims` dimensions, stored as float16."""
    index_class = importlib.import_module(USEARCH_MODULE).Index
    return index_class(
        ndim=dims,
        metric="cos",
        dtype="f16",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def add(index: Any, keys: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
    """Add vectors; a key already in the index is skipped (one vector per document)."""
    if not len(keys):
        return
    key_array = np.asarray(keys, dtype=np.uint64)
    fresh = ~np.asarray(index.contains(key_array), dtype=bool)
    # A key repeated within one call keeps its first vector.
    _, first = np.unique(key_array, return_index=True)
    once = np.zeros(len(key_array), dtype=bool)
    once[first] = True
    keep = fresh & once
    if keep.any():
        index.add(key_array[keep], np.ascontiguousarray(vectors[keep], dtype=np.float16))


def search(index: Any, vector: npt.NDArray[np.float32], count: int) -> list[Neighbour]:
    """The `count` nearest indexed vectors, nearest first."""
    if len(index) == 0 or count < 1:
        return []
    found = index.search(np.asarray(vector, dtype=np.float16), count)
    return [
        Neighbour(int(k), 1.0 - float(d)) for k, d in zip(found.keys, found.distances, strict=True)
    ]


def exact_neighbours(
    matrix: npt.NDArray[np.float32], queries: npt.NDArray[np.float32], count: int
) -> npt.NDArray[np.int64]:
    """Row numbers of the `count` highest dot products per query (brute force)."""
    scores = queries @ matrix.T
    count = min(count, matrix.shape[0])
    top = np.argpartition(-scores, count - 1, axis=1)[:, :count]
    order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(top, order, axis=1)


def recall_with_ties(
    approximate_scores: Sequence[Sequence[float]],
    exact_scores: Sequence[Sequence[float]],
    tolerance: float = 1e-4,
) -> float:
    """recall@k counting ties: a returned neighbour counts when its exact cosine reaches
    the exact k-th best (within `tolerance`). Twenty copies of one text are each other's
    nearest at cosine 1.0; any ten of them are a right answer, not only the ten the brute
    force happened to list."""
    total = sum(len(e) for e in exact_scores)
    if not total:
        return 1.0
    hit = 0
    for got, best in zip(approximate_scores, exact_scores, strict=True):
        if best:
            hit += min(len(best), sum(1 for s in got if s >= best[-1] - tolerance))
    return hit / total


def recall_at(approximate: Sequence[Sequence[int]], exact: Sequence[Sequence[int]]) -> float:
    """Share of the exact neighbours the approximate search also returned."""
    total = sum(len(e) for e in exact)
    if not total:
        return 1.0
    hit = sum(len(set(a) & set(e)) for a, e in zip(approximate, exact, strict=True))
    return hit / total
