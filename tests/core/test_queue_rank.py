"""The queue's stored order: |distance - threshold|, semantic-only pairs after all others."""

from hypothesis import given
from hypothesis import strategies as st

from ingest.core import channels
from ingest.core.channels import EXACT, PASSAGES, SEMANTIC, SIMHASH, queue_rank

masks = st.integers(1, EXACT | SIMHASH | PASSAGES | SEMANTIC)
distances = st.integers(0, 64)


@given(distances, distances, masks)
def test_only_a_semantic_only_pair_is_lifted(distance: int, threshold: int, mask: int) -> None:
    rank = queue_rank(distance=distance, threshold=threshold, mask=mask)
    lifted = channels.SEMANTIC_ONLY_RANK if mask == SEMANTIC else 0
    assert rank == abs(distance - threshold) + lifted


@given(distances, distances, distances, distances, masks)
def test_a_semantic_only_pair_ranks_below_every_other_pair(
    d1: int, t1: int, d2: int, t2: int, mask: int
) -> None:
    other = mask & ~SEMANTIC or SIMHASH | (mask & SEMANTIC)
    assert queue_rank(distance=d1, threshold=t1, mask=SEMANTIC) > queue_rank(
        distance=d2, threshold=t2, mask=other
    )
