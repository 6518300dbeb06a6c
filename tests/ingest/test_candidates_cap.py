"""The per-document cap on pairs (CANDIDATES_PER_DOCUMENT_MAX, ingest/candidates.py
_pairs_capped): a group of near-duplicates stores about K pairs a document instead of
every pair, and the cap never changes the groups, whatever the order the documents are
searched in, however they are batched and however often a search is repeated. Which
pairs a large group stores does depend on the order; how many only within bounds."""

import itertools
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings as shipped

from ingest import candidates
from ingest.models import CandidatePair, GroupMember
from tests import factories

CAP = 3
# The default (dedup_site/settings.py), read before any test overrides it.
_SHIPPED_CAP = shipped.CANDIDATES_PER_DOCUMENT_MAX
BASE = 0x0F0F_0000_1234_0000
TEXT = factories.article_text(43)


@pytest.fixture(autouse=True)
def _cap(settings) -> None:
    settings.CANDIDATES_PER_DOCUMENT_MAX = CAP


def _document(i: int, simhash: int, text: str = TEXT) -> int:
    return factories.indexed_document(
        url=f"https://w{i}.example.com/story",
        site=f"w{i}.example{i}.com",  # a site each: no boilerplate shared
        text=f"{text} Filed by desk {i}.",  # one family each (a text of its own)
        simhash=simhash,
        fetched_at=datetime(2026, 5, 1, tzinfo=UTC) + timedelta(hours=i),
    ).pk


def _wire_story(n: int = 10) -> list[int]:
    """n reposts of one story, each 2 bits from every other (within the threshold)."""
    return [_document(i, BASE ^ (1 << i)) for i in range(n)]


def _pairs() -> set[tuple[int, int]]:
    return set(CandidatePair.objects.values_list("a_id", "b_id"))


def _groups() -> set[frozenset[int]]:
    by_group: dict[int, set[int]] = {}
    for g, d in GroupMember.objects.values_list("group_id", "document_id"):
        by_group.setdefault(g, set()).add(d)
    return {frozenset(m) for m in by_group.values()}


def _run(tasks: list[list[int]]) -> None:
    for ids in tasks:
        candidates.candidates_find(document_ids=ids)


def _reset() -> None:
    CandidatePair.objects.all().delete()
    GroupMember.objects.all().delete()


@pytest.mark.django_db
def test_each_new_document_keeps_pairs_to_its_nearest_families_only() -> None:
    docs = _wire_story()
    _run([[d] for d in docs])
    # The i-th arrival pairs with min(i, CAP) of the earlier ones: 24, not 10 * 9 / 2.
    assert len(_pairs()) == sum(min(i, CAP) for i in range(len(docs)))
    assert _groups() == {frozenset(docs)}


@pytest.mark.django_db
def test_the_group_is_the_same_whatever_the_order_and_the_batching() -> None:
    docs = _wire_story()
    rng = random.Random(7)
    orders = [docs[::-1], *(rng.sample(docs, len(docs)) for _ in range(4))]
    batchings = [[docs], [docs[:5], docs[5:]], [docs[5:], docs[:5]]]
    for tasks in [[[d] for d in order] for order in orders] + batchings:
        _reset()
        _run(tasks)
        assert _groups() == {frozenset(docs)}, tasks
        # Connected (at least n - 1 pairs), never more than CAP pairs per searched document.
        assert len(docs) - 1 <= len(_pairs()) <= CAP * len(docs), tasks


@pytest.mark.django_db
def test_a_search_repeated_after_the_group_grew_adds_no_pair() -> None:
    docs = _wire_story()
    _run([[d] for d in docs])
    clean = _pairs()
    for d in docs:  # every task delivered a second time, after all the others
        _run([[d]])
    assert _pairs() == clean


@pytest.mark.django_db
def test_past_the_cap_a_family_not_connected_yet_still_gets_its_pair(settings) -> None:
    settings.PASSAGE_CHANNEL = False  # the SimHash distances alone decide the hits
    # CAP + 1 reposts 1 bit from the new page x, and y, 3 bits from x but 4 from the others.
    reposts = [_document(i, BASE ^ (1 << i)) for i in range(CAP + 1)]
    y = _document(10, BASE ^ (0b111 << 20))
    x = _document(11, BASE)
    _run([[d] for d in [*reposts, y, x]])
    pairs = _pairs()
    assert sum(x in p for p in pairs) == CAP + 1  # the CAP nearest, and one to reach y
    assert (min(x, y), max(x, y)) in pairs
    assert _groups() == {frozenset([*reposts, x, y])}


@pytest.mark.django_db
def test_under_the_cap_every_near_family_is_paired(settings) -> None:
    settings.CANDIDATES_PER_DOCUMENT_MAX = 200
    docs = _wire_story()
    _run([[d] for d in docs])
    assert _pairs() == set(itertools.combinations(sorted(docs), 2))


@pytest.mark.django_db
def test_the_shipped_cap_keeps_sixteen_pairs_a_page_of_a_larger_story(settings) -> None:
    settings.CANDIDATES_PER_DOCUMENT_MAX = _SHIPPED_CAP
    docs = _wire_story(20)
    _run([[d] for d in docs])
    assert len(_pairs()) == sum(min(i, 16) for i in range(20))  # 184, not 190
    assert _groups() == {frozenset(docs)}
