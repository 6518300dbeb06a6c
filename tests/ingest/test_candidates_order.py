"""The candidate pairs do not depend on the order documents are searched in, nor on a
search being repeated (a redelivered task): the same documents give the same pairs.

Exact twins (same normalized text, so the same SimHash) are one family: each member is
linked to the family's earliest twin, and two families within the threshold get one
pair between their earliest members, not one per member."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from ingest import candidates
from ingest.models import CandidatePair, Fingerprint, GroupMember
from tests import factories

TEXT_S = factories.article_text(41)
TEXT_T = factories.article_text(41) + " and a closing line"
TEXT_U = factories.article_text(42)
S, T, U = 0x0F0F_0000_1234_5670, 0x0F0F_0000_1234_5671, 0x0F0F_0000_1234_5676


def _corpus() -> list[int]:
    """Family S: 3 twins; family T: 2 twins, 1 bit from S; U: 2 bits from S, 3 from T."""
    docs = []
    for i, (text, value) in enumerate(
        [(TEXT_S, S), (TEXT_T, T), (TEXT_S, S), (TEXT_U, U), (TEXT_T, T), (TEXT_S, S)]
    ):
        docs.append(
            factories.indexed_document(
                url=f"https://o{i}.example.com/p",
                site=f"o{i}.example{i}.com",  # a site each: no boilerplate shared
                text=text,
                simhash=value,
                fetched_at=datetime(2026, 5, 1, tzinfo=UTC) + timedelta(hours=i),
            ).pk
        )
    return docs


def _pairs() -> set[tuple[int, int, int]]:
    return set(CandidatePair.objects.values_list("a_id", "b_id", "distance"))


def _family_pairs() -> set[tuple[tuple[str, str], int]]:
    sha = dict(Fingerprint.objects.all().values_list("document_id", "text_sha256"))
    return {
        (tuple(sorted((sha[a], sha[b]))), d)
        for a, b, d in CandidatePair.objects.values_list("a_id", "b_id", "distance")
    }


def _groups() -> set[frozenset[int]]:
    by_group: dict[int, set[int]] = {}
    for g, d in GroupMember.objects.values_list("group_id", "document_id"):
        by_group.setdefault(g, set()).add(d)
    return {frozenset(m) for m in by_group.values()}


def _run(tasks: list[list[int]]) -> None:
    for ids in tasks:
        candidates.candidates_find(document_ids=ids)


@pytest.mark.django_db
def test_a_repeated_search_adds_no_pair() -> None:
    docs = _corpus()
    _run([[d] for d in docs])
    clean = _pairs()
    for d in docs:  # every task delivered a second time, after all the others
        _run([[d]])
    assert _pairs() == clean


@pytest.mark.django_db
def test_a_redelivered_task_adds_no_pair() -> None:
    docs = _corpus()
    clean_tasks = [[d] for d in docs]
    _run(clean_tasks)
    clean = _pairs()
    CandidatePair.objects.all().delete()
    GroupMember.objects.all().delete()
    # The second task's worker died after indexing: it runs again after the others.
    late = clean_tasks[2]
    _run([t for t in clean_tasks if t != late] + [late])
    assert _pairs() == clean


@pytest.mark.django_db
def test_one_task_or_one_task_per_document_gives_the_same_pairs() -> None:
    docs = _corpus()
    _run([docs])
    together = _pairs()
    CandidatePair.objects.all().delete()
    GroupMember.objects.all().delete()
    _run([[d] for d in docs])
    assert _pairs() == together


@pytest.mark.django_db
def test_any_order_gives_the_same_families_pairs_and_groups() -> None:
    docs = _corpus()
    _run([[d] for d in docs])
    clean_pairs, clean_families, clean_groups = _pairs(), _family_pairs(), _groups()
    # S–S twin links (2), T–T (1), and one pair per family pair: S–T, S–U, T–U.
    assert len(clean_pairs) == 6
    for order in itertools.islice(itertools.permutations(docs), 0, None, 37):
        CandidatePair.objects.all().delete()
        GroupMember.objects.all().delete()
        _run([[d] for d in order])
        assert _family_pairs() == clean_families, order
        assert len(_pairs()) == len(clean_pairs), order
        assert _groups() == clean_groups, order


@pytest.mark.django_db
@pytest.mark.parametrize(
    "tasks",
    [
        [[5], [0, 2]],  # the latest twin alone first, then the two earlier ones together
        [[2, 5], [0]],
        [[5], [2], [0]],
        [[0, 2, 5]],
    ],
)
def test_a_family_of_twins_stays_one_group_however_it_is_batched(tasks: list[list[int]]) -> None:
    docs = _corpus()
    s_family = [docs[0], docs[2], docs[5]]
    _run([[docs[i] for i in task] for task in tasks])
    twin_links = [(a, b) for a, b, _ in _pairs() if a in s_family and b in s_family]
    assert len(twin_links) == 2  # n - 1 links for n twins
    assert frozenset(s_family) in {g & frozenset(s_family) for g in _groups()}
