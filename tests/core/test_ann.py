"""The approximate index's catch-up bookkeeping (no usearch needed) and, where usearch
is installed, its search against exact cosine."""

import importlib.util

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.core import ann


def test_an_id_committed_late_under_the_watermark_is_asked_for_again() -> None:
    c = ann.CatchUp()
    c.seen([1, 2, 4, 5], now=0.0)  # 3 was handed out but not committed yet
    assert c.wanted() == (5, [3])
    c.seen([3, 6], now=1.0)
    assert c.wanted() == (6, [])


def test_a_gap_never_filled_is_dropped_after_its_time() -> None:
    c = ann.CatchUp(gap_seconds=10.0)
    c.seen([1, 3], now=0.0)
    c.seen([], now=5.0)
    assert c.wanted() == (3, [2])
    c.seen([], now=11.0)
    assert c.wanted() == (3, [])


@given(st.permutations(list(range(1, 40))), st.integers(1, 8))
def test_every_row_is_read_once_whatever_the_commit_order(order: list[int], step: int) -> None:
    """Rows become visible in any order; reading what is asked for each time, every id
    is read exactly once."""
    c = ann.CatchUp()
    committed: set[int] = set()
    read: list[int] = []
    for start in range(0, len(order), step):
        committed.update(order[start : start + step])
        above, gaps = c.wanted()
        batch = sorted(i for i in committed if i > above or i in gaps)
        read += batch
        c.seen(batch, now=0.0)
    assert sorted(read) == list(range(1, 40))


def test_recall_at_counts_shared_neighbours() -> None:
    assert ann.recall_at([[1, 2, 3]], [[1, 2, 4]]) == pytest.approx(2 / 3)
    assert ann.recall_at([], []) == 1.0


def test_exact_neighbours_are_the_highest_dot_products() -> None:
    m = np.eye(4, dtype=np.float32)
    q = np.array([[0.1, 0.9, 0.5, 0.0]], dtype=np.float32)
    assert ann.exact_neighbours(m, q, 2).tolist() == [[1, 2]]


needs_usearch = pytest.mark.skipif(
    importlib.util.find_spec("usearch") is None, reason="usearch (the semantic extra) absent"
)


@needs_usearch
def test_the_index_finds_the_exact_neighbours_of_clustered_vectors() -> None:
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(50, 384))
    drawn = centres[rng.integers(0, 50, 3000)] + rng.normal(scale=0.6, size=(3000, 384))
    unit = drawn / np.linalg.norm(drawn, axis=1, keepdims=True)
    data = unit.astype(np.float16).astype(np.float32)
    index = ann.new_index(384)
    # One thread: the same graph every run (with every core, how the threads interleave
    # changes the graph, and the recall with it, by a point or two).
    ann.add(index, list(range(3000)), data, threads=1)
    ann.add(index, [0, 1], data[:2])  # already there: skipped
    assert len(index) == 3000
    queries = rng.choice(3000, 100, replace=False)
    approx = [[n.document_id for n in ann.search(index, data[i], 10)] for i in queries]
    exact = ann.exact_neighbours(data, data[queries], 10).tolist()
    assert ann.recall_at(approx, exact) >= 0.99
    top = ann.search(index, data[7], 1)[0]
    assert top.document_id == 7 and top.cosine == pytest.approx(1.0, abs=1e-3)


def test_recall_counts_ties_as_found() -> None:
    # Twenty copies at cosine 1.0: the index returned another ten of them than the brute
    # force listed; all are right answers.
    assert ann.recall_with_ties([[1.0] * 10], [[1.0] * 10]) == 1.0
    assert ann.recall_with_ties([[1.0, 0.5]], [[1.0, 0.9]]) == 0.5
    assert ann.recall_with_ties([], []) == 1.0


def test_a_snapshot_name_is_stable_and_differs_per_space() -> None:
    space = ("/srv/models/all-MiniLM-L6-v2", "main-text-v1", "trafilatura-2-v2")
    assert ann.snapshot_name(space) == ann.snapshot_name(list(space))
    assert ann.snapshot_name(space).startswith("ann-all-MiniLM-L6-v2-")
    assert ann.snapshot_name(space) != ann.snapshot_name((*space[:2], "trafilatura-2-v3"))
    assert "/" not in ann.snapshot_name(("../x/../../y", "a", "b"))


def test_gaps_read_from_a_snapshot_count_as_first_missed_now() -> None:
    c = ann.CatchUp.resumed(10, [4, 7], now=100.0)
    assert c.wanted() == (10, [4, 7])
    c.seen([4], now=100.0 + ann.GAP_SECONDS - 1)
    assert c.wanted() == (10, [7])
    c.seen([], now=100.0 + ann.GAP_SECONDS + 1)
    assert c.wanted() == (10, [])


def _clustered(n: int, dims: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(n, dims))
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data.astype(np.float16).astype(np.float32)


SPACE = ("model-a", "main-text-v1", "x-1")


def _snapshot(index, keys: list[int]) -> ann.Snapshot:
    return ann.Snapshot(
        space=SPACE,
        dims=16,
        index=index,
        watermark=41,
        gap_ids=[3, 9],
        fetched_keys=np.asarray(keys, dtype=np.int64),
        fetched_us=np.asarray([k * 1000 for k in keys[:-1]] + [ann.NO_TIME], dtype=np.int64),
    )


@needs_usearch
def test_a_snapshot_reads_back_what_was_written(tmp_path) -> None:
    data = _clustered(200, 16, 2)
    keys = list(range(100, 300))
    index = ann.new_index(16)
    ann.add(index, keys, data)
    path = tmp_path / ann.snapshot_name(SPACE)
    size = ann.snapshot_write(path, _snapshot(index, keys))
    assert size == path.stat().st_size > 0
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp file left
    back = ann.snapshot_read(path, SPACE)
    assert (back.watermark, back.gap_ids, back.dims) == (41, [3, 9], 16)
    assert back.fetched_keys.tolist() == keys
    assert back.fetched_us[-1] == ann.NO_TIME and back.fetched_us[0] == 100_000
    assert len(back.index) == 200
    assert back.index.expansion_search == ann.EXPANSION_SEARCH
    for i in (0, 57, 199):
        assert ann.search(back.index, data[i], 5) == ann.search(index, data[i], 5)


@needs_usearch
def test_a_bad_snapshot_is_refused(tmp_path) -> None:
    data = _clustered(50, 16, 3)
    index = ann.new_index(16)
    ann.add(index, list(range(50)), data)
    path = tmp_path / "snap.npz"
    ann.snapshot_write(path, _snapshot(index, list(range(50))))
    whole = path.read_bytes()
    with pytest.raises(ann.SnapshotInvalid, match="another space"):
        ann.snapshot_read(path, ("model-b", *SPACE[1:]))
    with pytest.raises(ann.SnapshotInvalid, match="no snapshot"):
        ann.snapshot_read(tmp_path / "missing.npz", SPACE)
    path.write_bytes(whole[: len(whole) // 2])  # truncated
    with pytest.raises(ann.SnapshotInvalid):
        ann.snapshot_read(path, SPACE)
    flipped = bytearray(whole)
    middle = len(flipped) // 2  # inside the index bytes: the zip CRC catches it
    flipped[middle] ^= 0xFF
    path.write_bytes(bytes(flipped))
    with pytest.raises(ann.SnapshotInvalid):
        ann.snapshot_read(path, SPACE)
    path.write_bytes(b"not a snapshot at all")
    with pytest.raises(ann.SnapshotInvalid):
        ann.snapshot_read(path, SPACE)


@needs_usearch
def test_the_window_is_applied_before_the_top_k_is_cut() -> None:
    """Most near neighbours lie outside the window: the search widens until it has
    `count` inside, and the answer is the exact top-k of the window's documents."""
    rng = np.random.default_rng(4)
    query = _clustered(1, 32, 5)[0]
    near = query + rng.normal(scale=0.05, size=(300, 32))  # outside the window
    far = rng.normal(size=(1000, 32))  # inside, farther
    data = np.vstack([near, far])
    data = (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float16)
    data = data.astype(np.float32)  # as stored
    index = ann.new_index(32)
    ann.add(index, list(range(len(data))), data)
    inside_keys = list(range(300, 1300))
    exact = sorted(inside_keys, key=lambda k: -float(data[k] @ query))[:5]

    def inside(k: int) -> bool:
        return k >= 300

    found = ann.nearest_within(index, query, 5, inside, lambda: inside_keys, cap=10_000)
    assert {n.document_id for n in found} == set(exact)
    assert found == sorted(found, key=lambda n: -n.cosine)
    # A cap below what the window needs: exact cosine over the window, same answer.
    capped = ann.nearest_within(index, query, 5, inside, lambda: inside_keys, cap=50)
    assert [n.document_id for n in capped] == exact
    assert capped[0].cosine == pytest.approx(float(data[exact[0]] @ query), abs=1e-3)
    assert ann.nearest_within(index, query, 5, lambda k: False, lambda: [], cap=50) == []
