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
    data = centres[rng.integers(0, 50, 3000)] + rng.normal(scale=0.6, size=(3000, 384))
    data = (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)
    data = data.astype(np.float16).astype(np.float32)
    index = ann.new_index(384)
    ann.add(index, list(range(3000)), data)
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
