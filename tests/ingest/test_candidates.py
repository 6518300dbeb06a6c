"""Candidates and groups on the demo gold crawl (every counter-example case)."""

import io

import pytest
from django.core.management import call_command

from demo.crawl import build_demo_crawl, write_warc
from ingest import candidates, services
from ingest.core.methods import DEFAULT_KEY
from ingest.core.readers import read_warc
from ingest.models import CandidateGroup, CandidatePair, Document, GroupMember

METHOD = DEFAULT_KEY


@pytest.fixture(scope="module")
def gold(django_db_setup, django_db_blocker):
    """The demo crawl ingested once for the module; page id → document id."""
    pages, cases = build_demo_crawl()
    out = io.BytesIO()
    write_warc(pages, out)
    with django_db_blocker.unblock():
        services.batch_ingest(
            source="gold", fmt="warc", items=read_warc(io.BytesIO(out.getvalue()))
        )
        ids = {}
        for page in pages:
            ids[page.id] = Document.objects.get(url=page.url, fetched_at=page.fetched_at).pk
    yield ids, {c.case: c for c in cases}
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


def _pair(ids: dict[str, int], x: str, y: str) -> CandidatePair | None:
    a, b = sorted((ids[x], ids[y]))
    return CandidatePair.objects.filter(method__key=METHOD, a_id=a, b_id=b).first()


def _group_of(doc_id: int) -> CandidateGroup | None:
    member = GroupMember.objects.filter(method__key=METHOD, document_id=doc_id).first()
    return member.group if member else None


@pytest.mark.django_db
def test_a_verbatim_copy_is_an_exact_pair_in_one_exact_group(gold) -> None:
    ids, _ = gold
    pair = _pair(ids, "news-a1", "news-a1-copy")
    assert pair is not None and pair.exact and pair.distance == 0
    group = _group_of(ids["news-a1"])
    assert group is not None and group == _group_of(ids["news-a1-copy"])
    assert group.kind == "exact"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "case", ["whitespace_only", "template_change", "unicode_nfc_nfd", "refetch_timestamp"]
)
def test_cosmetic_changes_pair_at_distance_zero(gold, case: str) -> None:
    ids, cases = gold
    x, y = cases[case].pages[:2]
    pair = _pair(ids, x, y)
    assert pair is not None
    assert pair.distance == 0
    assert not pair.below_floor


@pytest.mark.django_db
def test_a_price_change_pairs_with_the_numbers_guard(gold) -> None:
    ids, _ = gold
    pair = _pair(ids, "shop-p1", "shop-p1-price")
    assert pair is not None
    assert pair.numbers_differ
    details = pair.guard_details
    assert details is not None and details["numbers_a"] != details["numbers_b"]
    assert not pair.exact


@pytest.mark.django_db
def test_empty_and_short_pages_never_pair(gold) -> None:
    ids, cases = gold
    for case in ("empty_extraction", "short_texts"):
        for page in cases[case].pages:
            doc = ids[page]
            assert not CandidatePair.objects.filter(a_id=doc).exists()
            assert not CandidatePair.objects.filter(b_id=doc).exists()
            assert _group_of(doc) is None


@pytest.mark.django_db
def test_login_walls_at_many_urls_are_in_no_pair_and_no_group(gold) -> None:
    """A login wall served at seven URLs is a crawl problem, not seven copies."""
    ids, cases = gold
    walls = [ids[page] for page in cases["blocked_pages"].pages]
    assert len(walls) >= 7
    assert not CandidatePair.objects.filter(a_id__in=walls).exists()
    assert not CandidatePair.objects.filter(b_id__in=walls).exists()
    assert {_group_of(d) for d in walls} == {None}


@pytest.mark.django_db
def test_every_group_has_a_representative_with_a_reason(gold) -> None:
    groups = CandidateGroup.objects.filter(dissolved=False)
    assert groups.exists()
    for group in groups:
        assert group.representative_id in set(group.members.values_list("document_id", flat=True))
        assert group.representative_reason
        assert group.rule == "connected-components-v1"
        assert group.size == group.members.count() >= 2


@pytest.mark.django_db
def test_searching_again_adds_nothing(gold) -> None:
    before = CandidatePair.objects.count()
    state = CandidateGroup.objects.order_by("pk").values_list("pk", "size", "version")
    groups_before = list(state)
    candidates.candidates_find(document_ids=list(Document.objects.values_list("pk", flat=True)))
    assert CandidatePair.objects.count() == before
    assert (
        list(CandidateGroup.objects.order_by("pk").values_list("pk", "size", "version"))
        == groups_before
    )


@pytest.mark.django_db
def test_pairs_are_ordered_and_unique(gold) -> None:
    rows = list(CandidatePair.objects.values_list("method_id", "a_id", "b_id"))
    assert rows
    assert all(a < b for _, a, b in rows)
    assert len(rows) == len(set(rows))
