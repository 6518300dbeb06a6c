"""A pair the semantic channel alone nominated (same meaning, no shared words) waits in
the queue as a pair: it joins no group, so it can neither be merged by the rule nor bar a
group of exact copies from it, unless SEMANTIC_AUTO_MERGE names the doc type."""

import pytest

from ingest import candidates
from ingest.core.channels import SEMANTIC
from ingest.models import CandidatePair
from tests.factories import TEXT, find, group_of, group_or_none, pair_of, reviewed_document

pytestmark = pytest.mark.django_db


def _semantic_only_pair():
    a = reviewed_document(url="https://a.example.com/1", text=TEXT)
    b = reviewed_document(url="https://b.example.com/1", text=TEXT + " more", flips=1)
    find(a, b)
    pair = pair_of(a, b)
    # As the semantic channel alone names it: no other channel's bit.
    CandidatePair.objects.filter(id=pair.id).update(channels=SEMANTIC, cosine=0.99)
    candidates.groups_update(method=pair.method, document_ids=[a.pk, b.pk])
    return a, b, pair


def test_a_semantic_only_pair_is_in_no_group(settings) -> None:
    settings.SEMANTIC_AUTO_MERGE = []
    a, b, _ = _semantic_only_pair()
    assert (ga := group_or_none(a)) is None or ga.dissolved
    assert (gb := group_or_none(b)) is None or gb.dissolved


def test_it_joins_a_group_where_the_policy_names_its_doc_type(settings) -> None:
    settings.SEMANTIC_AUTO_MERGE = ["article"]
    a, b, _ = _semantic_only_pair()
    group = group_of(a)
    assert group is not None and not group.dissolved and group == group_of(b)


def test_a_pair_with_text_evidence_still_groups(settings) -> None:
    settings.SEMANTIC_AUTO_MERGE = []
    a = reviewed_document(url="https://a.example.com/2", text=TEXT)
    b = reviewed_document(url="https://b.example.com/2", text=TEXT + " more", flips=1)
    find(a, b)
    assert pair_of(a, b).channels & ~SEMANTIC
    group = group_of(a)
    assert group is not None and group == group_of(b)
