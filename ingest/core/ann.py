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

Snapshots. A process's index, with its CatchUp state and each key's fetched_at, can be
written to one file per space (`snapshot_write`, atomically: temp file, fsync, rename)
and read back by a cold process (`snapshot_read`), which then catches up from the
snapshot's watermark and gaps instead of reading the whole table. A file that is
truncated, corrupt, of another format version or of another space is refused
(`SnapshotInvalid`): the caller builds from PostgreSQL instead.

The lookback window. `nearest_within` searches with a growing over-fetch until `count`
neighbours inside the window are found, and falls back to exact cosine over the
window's vectors when the over-fetch reaches the index size (or a cap): the window is
applied before the top-k is cut, not after.
"""

import hashlib
import importlib
import json
import os
import re
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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
# The lookback search widens its over-fetch by this factor until it has enough
# neighbours inside the window, starting from count * WIDEN.
WIDEN = 4
# Snapshot file format; another number is refused (built from PostgreSQL instead).
SNAPSHOT_FORMAT = 1
# fetched_at as microseconds since the epoch; this value means "not known".
NO_TIME = np.iinfo(np.int64).min


@dataclass
class CatchUp:
    """Which row ids a process has read, as a watermark and the gaps under it."""

    watermark: int = 0
    gaps: dict[int, float] = field(default_factory=dict)  # id -> when first missed
    gap_seconds: float = GAP_SECONDS

    @classmethod
    def resumed(cls, watermark: int, gap_ids: Iterable[int], now: float) -> "CatchUp":
        """The state read back from a snapshot: its gaps count as first missed `now`
        (this process's clock), so each is asked for during a full gap_seconds again."""
        return cls(watermark=watermark, gaps={int(i): now for i in gap_ids})

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


def add(
    index: Any, keys: Sequence[int], vectors: npt.NDArray[np.float32], *, threads: int = 0
) -> None:
    """Add vectors; a key already in the index is skipped (one vector per document).
    `threads`: usearch's (0: every core; the graph then depends on how the threads
    interleave, 1: the same graph every time)."""
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
        index.add(
            key_array[keep], np.ascontiguousarray(vectors[keep], dtype=np.float16), threads=threads
        )


def search(index: Any, vector: npt.NDArray[np.float32], count: int) -> list[Neighbour]:
    """The `count` nearest indexed vectors, nearest first."""
    if len(index) == 0 or count < 1:
        return []
    found = index.search(np.asarray(vector, dtype=np.float16), count)
    return [
        Neighbour(int(k), 1.0 - float(d)) for k, d in zip(found.keys, found.distances, strict=True)
    ]


def nearest_within(
    index: Any,
    vector: npt.NDArray[np.float32],
    count: int,
    inside: Callable[[int], bool],
    window_keys: Callable[[], Sequence[int]],
    cap: int,
) -> list[Neighbour]:
    """The `count` nearest indexed vectors whose key is `inside` the window, nearest
    first: the over-fetch grows by WIDEN until `count` of them are found or the search
    has seen the whole index; once the over-fetch would reach `cap` (or the index size)
    the window's keys (`window_keys()`) are ranked by exact cosine instead."""
    size = 0 if index is None else len(index)
    if size == 0 or count < 1:
        return []
    ask = count * WIDEN
    while True:
        if ask >= size or ask > cap:
            return exact_within(index, vector, count, window_keys())
        found = [n for n in search(index, vector, ask) if inside(n.document_id)]
        if len(found) >= count:
            return found[:count]
        ask *= WIDEN


def exact_within(
    index: Any, vector: npt.NDArray[np.float32], count: int, keys: Sequence[int]
) -> list[Neighbour]:
    """The `count` highest cosines of `vector` with the indexed vectors of `keys`
    (brute force over the index's float16 copies), nearest first."""
    if not len(keys) or count < 1:
        return []
    key_array = np.asarray(keys, dtype=np.uint64)
    out: list[Neighbour] = []
    query = np.asarray(vector, dtype=np.float32)
    query = query / (np.linalg.norm(query) or 1.0)
    scores = np.empty(len(key_array), dtype=np.float32)
    for start in range(0, len(key_array), 50_000):
        chunk = key_array[start : start + 50_000]
        got = index.get(chunk, dtype=np.float32)
        matrix = (
            np.stack(got) if isinstance(got, tuple) else np.asarray(got).reshape(len(chunk), -1)
        )
        norms = np.linalg.norm(matrix, axis=1)
        norms[norms == 0] = 1.0
        scores[start : start + len(chunk)] = (matrix @ query) / norms
    top = np.argsort(-scores, kind="stable")[:count]
    out = [Neighbour(int(key_array[i]), float(scores[i])) for i in top]
    return out


# --- snapshots -----------------------------------------------------------------------


class SnapshotInvalid(Exception):
    """A snapshot file that cannot be used (corrupt, truncated, another space or format)."""


@dataclass
class Snapshot:
    """What a snapshot holds: the index, its CatchUp state and each key's fetched_at."""

    space: tuple[str, ...]
    dims: int
    index: Any
    watermark: int
    gap_ids: list[int]
    fetched_keys: npt.NDArray[np.int64]
    fetched_us: npt.NDArray[np.int64]  # microseconds since the epoch, NO_TIME: unknown


def snapshot_name(space: Sequence[str]) -> str:
    """A stable file name for a space (model key, text rule, extractor version): a
    readable prefix and a digest of the exact parts."""
    digest = hashlib.sha256("\x1f".join(space).encode()).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(space[0]).name if space else "")[:40]
    return f"ann-{readable}-{digest}.npz"


def snapshot_write(path: Path, snapshot: Snapshot) -> int:
    """Write the snapshot atomically (temp file in the same directory, fsync, rename,
    fsync of the directory). Returns the file's size in bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": SNAPSHOT_FORMAT,
        "space": list(snapshot.space),
        "dims": snapshot.dims,
        "watermark": snapshot.watermark,
        "vectors": len(snapshot.index),
    }
    index_bytes = np.frombuffer(snapshot.index.save(), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(
                f,
                header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                gap_ids=np.asarray(snapshot.gap_ids, dtype=np.int64),
                fetched_keys=np.asarray(snapshot.fetched_keys, dtype=np.int64),
                fetched_us=np.asarray(snapshot.fetched_us, dtype=np.int64),
                index=index_bytes,
            )
            f.flush()
            os.fchmod(f.fileno(), 0o644)  # mkstemp makes it 0600: other workers read it
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return path.stat().st_size


def snapshot_read(path: Path, space: Sequence[str]) -> Snapshot:
    """The snapshot at `path` for this space; SnapshotInvalid when the file is missing,
    truncated, corrupt (zip CRCs are checked on read), of another format version or of
    another space, or when its parts disagree."""
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            gap_ids = data["gap_ids"].astype(np.int64)
            fetched_keys = data["fetched_keys"].astype(np.int64)
            fetched_us = data["fetched_us"].astype(np.int64)
            index_bytes = data["index"]
    except FileNotFoundError as exc:
        raise SnapshotInvalid(f"no snapshot at {path}") from exc
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise SnapshotInvalid(f"unreadable snapshot {path}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotInvalid(f"snapshot {path} has format {header.get('format')!r}")
    if header.get("space") != list(space):
        raise SnapshotInvalid(f"snapshot {path} is of another space: {header.get('space')!r}")
    dims = int(header.get("dims", 0))
    if dims < 1 or len(fetched_keys) != len(fetched_us):
        raise SnapshotInvalid(f"snapshot {path} is inconsistent")
    index = new_index(dims)
    try:
        index.load(np.ascontiguousarray(index_bytes, dtype=np.uint8))  # copied in
    except (ValueError, RuntimeError) as exc:
        raise SnapshotInvalid(f"snapshot {path}: index unreadable: {exc}") from exc
    index.expansion_add = EXPANSION_ADD
    index.expansion_search = EXPANSION_SEARCH
    if index.ndim != dims or len(index) != header.get("vectors") or len(index) != len(fetched_keys):
        raise SnapshotInvalid(f"snapshot {path}: the index disagrees with its header")
    return Snapshot(
        space=tuple(space),
        dims=dims,
        index=index,
        watermark=int(header.get("watermark", 0)),
        gap_ids=[int(i) for i in gap_ids],
        fetched_keys=fetched_keys,
        fetched_us=fetched_us,
    )


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
