"""A pair's cosine set late (its vectors arrived after the other channels made it) leaves
the pair as the pair builder makes it when both vectors are already there: the same
channels, floor, queue rank and evidence, in the same groups' terms. Vectors are written
as Embedding rows (no model needed)."""

from typing import Any

import pytest
from django.forms.models import model_to_dict

from ingest import candidates
from ingest.core import channels
from ingest.models import CandidatePair, GroupMember
from tests.factories import BASE, TEXT, WORDS, embedding_row, find, pair_of, reviewed_document

pytestmark = pytest.mark.django_db

SAME = [1.0, 0.0, 0.0, 0.0]
ORTHOGONAL = [0.0, 1.0, 0.0, 0.0]
# Two texts with no word in common: the SimHash values say near, the words say unlike
# (under the similarity floor unless the semantic channel nominates the pair).
HALF = len(WORDS) // 2
UNLIKE = (" ".join(WORDS[:HALF] * 6), " ".join(reversed(WORDS[HALF:] * 6)))
NEAR = (TEXT + " one", TEXT + " two")
IDENTITY = ("id", "a", "b", "created_at")


@pytest.fixture(autouse=True)
def _vectors_on(settings) -> None:
    """The semantic channel's space configured: stored vectors are read (the model
    itself is never loaded here)."""
    settings.EMBEDDING_MODEL = "all-MiniLM-L6-v2"
    settings.PASSAGE_CHANNEL = False


def _docs(n: int, texts: tuple[str, str]):
    base = BASE ^ (0xFFFF << (8 + 16 * n))
    a = reviewed_document(url=f"https://a.example.com/{n}", text=texts[0], base=base)
    b = reviewed_document(url=f"https://b.example.com/{n}", text=texts[1], flips=2, base=base)
    return a, b


def _facts(pair: CandidatePair) -> dict[str, Any]:
    return {k: v for k, v in model_to_dict(pair).items() if k not in IDENTITY}


def _grouped(a, b) -> bool:
    ga = GroupMember.objects.filter(document=a).values_list("group_id", flat=True).first()
    gb = GroupMember.objects.filter(document=b).values_list("group_id", flat=True).first()
    return ga is not None and ga == gb


@pytest.mark.parametrize("texts", [NEAR, UNLIKE], ids=["near words", "unlike words"])
@pytest.mark.parametrize("other", [SAME, ORTHOGONAL], ids=["same meaning", "other meaning"])
def test_a_late_cosine_leaves_the_pair_as_built_with_both_vectors(
    texts: tuple[str, str], other: list[float]
) -> None:
    # Built with both vectors there.
    a1, b1 = _docs(0, texts)
    embedding_row(a1, vector=SAME)
    embedding_row(b1, vector=other)
    find(a1, b1)
    built = pair_of(a1, b1)
    # Built before the vectors; they arrive later and the cosine is set then (as the
    # semantic worker and the next candidate search do).
    a2, b2 = _docs(1, texts)
    find(a2, b2)
    before = pair_of(a2, b2)
    assert before.cosine is None and not before.channels & channels.SEMANTIC
    embedding_row(a2, vector=SAME)
    embedding_row(b2, vector=other)
    assert candidates.pairs_cosine_update(method=before.method, document_ids=[a2.pk]) == 1
    candidates.groups_update(method=before.method, document_ids=[a2.pk, b2.pk])
    late = pair_of(a2, b2)
    assert _facts(late) == _facts(built)
    assert _grouped(a2, b2) == _grouped(a1, b1)
    if texts == UNLIKE:
        # The case that differed: a pair under the floor the semantic channel nominates.
        assert before.below_floor
        assert late.below_floor == (other == ORTHOGONAL)
    # Again: nothing left to fill.
    assert candidates.pairs_cosine_update(method=before.method, document_ids=[a2.pk]) == 0


def test_a_pair_the_semantic_channel_alone_would_name_ranks_last_either_way(settings) -> None:
    """A pair stored with no channel bit (an old row) that gains the semantic one is a
    semantic-only pair: its rank is lifted as the builder lifts it."""
    a, b = _docs(0, NEAR)
    find(a, b)
    pair = pair_of(a, b)
    CandidatePair.objects.filter(id=pair.id).update(channels=0)
    embedding_row(a, vector=SAME)
    embedding_row(b, vector=SAME)
    candidates.pairs_cosine_update(method=pair.method, document_ids=[a.pk])
    pair.refresh_from_db()
    assert pair.channels == channels.SEMANTIC
    assert pair.uncertainty == channels.queue_rank(
        distance=pair.distance,
        threshold=candidates.threshold_for(pair.doc_type),
        mask=channels.SEMANTIC,
    )
    assert pair.uncertainty >= channels.SEMANTIC_ONLY_RANK
