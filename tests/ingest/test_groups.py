"""Grouping rules, do-not-match and human decisions, on documents with set distances."""

import random
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest import candidates
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    Document,
    DoNotMatch,
    FingerprintMethod,
    GroupMember,
)
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _simhash_channel_only(settings) -> None:
    """Distances here are set by hand on one shared text: the passage channel reads the
    text and would pair every document. These tests are about SimHash grouping."""
    settings.PASSAGE_CHANNEL = False


TEXT = factories.article_text(42, words=120)
BASE = 0x0123456789ABCDEF


def _docs(*flips: int, **kw: Any) -> list[Document]:
    """One document per entry, its SimHash the base with that many low bits flipped."""
    return [
        factories.indexed_document(
            url=f"https://g.example.com/{i}", text=TEXT, simhash=BASE ^ ((1 << f) - 1), **kw
        )
        for i, f in enumerate(flips)
    ]


def _doc(path: str, simhash: int = BASE, **kw: Any) -> Document:
    kw.setdefault("text", TEXT)
    return factories.indexed_document(url=f"https://g.example.com/{path}", simhash=simhash, **kw)


def _find(docs) -> None:
    candidates.candidates_find(document_ids=[d.pk for d in docs])


def _group(doc) -> CandidateGroup | None:
    m = GroupMember.objects.filter(document=doc).first()
    return m.group if m else None


def test_a_chain_is_one_group_flagged_chained() -> None:
    # 0 — 3 bits — 6 bits: A~B and B~C within 3, A and C 6 apart.
    a, b, c = _docs(0, 3, 6)
    _find([a, b, c])
    assert CandidatePair.objects.filter(distance__lte=3).count() == 2
    group = _group(a)
    assert group is not None and group == _group(b) == _group(c)
    assert group.diameter == 6
    assert group.chained


def test_the_centred_rule_does_not_chain(settings) -> None:
    settings.GROUP_RULE = "representative-centred-v1"
    a, b, c = _docs(0, 3, 6)
    _find([a, b, c])
    groups = {g for g in (_group(a), _group(b), _group(c)) if g}
    for group in groups:
        assert group.rule == "representative-centred-v1"
        assert group.diameter is not None and group.diameter <= 3


def test_do_not_match_documents_are_not_grouped_again() -> None:
    a, b = _docs(0, 1)
    DoNotMatch.objects.create(a=a, b=b, source="split", actor="person:eve")
    _find([a, b])
    assert _group(a) is None or _group(a) != _group(b)
    assert not CandidatePair.objects.filter(a=a, b=b).exists()


def test_a_chain_across_a_do_not_match_is_flagged_for_review() -> None:
    a, b, c = _docs(0, 2, 4)
    DoNotMatch.objects.create(a=a, b=c, source="split", actor="person:eve")
    _find([a, b, c])
    assert _group(a) != _group(c)
    flagged = CandidateGroup.objects.filter(needs_review=True)
    assert flagged.exists()
    assert "separated" in flagged.first().review_note  # type: ignore[union-attr]


def test_the_worker_never_overwrites_a_person_s_representative() -> None:
    a, b = _docs(0, 1)
    _find([a, b])
    group = _group(a)
    assert group is not None
    chosen = b if group.representative_id == a.pk else a
    group.representative = chosen
    group.representative_locked = True
    group.representative_by = "person:eve"
    group.save()
    (c,) = [
        factories.indexed_document(
            url="https://g.example.com/new", text=TEXT, simhash=BASE, priority=0
        )
    ]
    _find([c])
    group.refresh_from_db()
    assert _group(c) == group
    assert group.representative_id == chosen.pk
    assert group.representative_by == "person:eve"


def test_the_representative_follows_site_priority_with_the_reason() -> None:
    low = factories.indexed_document(
        url="https://low.example.com/x", text=TEXT, simhash=BASE, site="low.example.com", priority=1
    )
    high = factories.indexed_document(
        url="https://high.example.com/x",
        text=TEXT,
        simhash=BASE ^ 1,
        site="high.example.com",
        priority=9,
    )
    _find([low, high])
    group = _group(low)
    assert group is not None
    assert group.representative_id == high.pk
    assert group.representative_reason == "site priority 9 > 1"


def test_a_pair_under_the_similarity_floor_is_stored_but_does_not_group() -> None:
    a = factories.indexed_document(
        url="https://g.example.com/a", text=factories.article_text(1), simhash=BASE
    )
    b = factories.indexed_document(
        url="https://g.example.com/b",
        text="Completely different words about cooking pasta " * 20,
        simhash=BASE ^ 1,
    )
    _find([a, b])
    pair = CandidatePair.objects.get()
    assert pair.below_floor
    assert _group(a) is None and _group(b) is None


def test_lookback_window_skips_old_documents(settings) -> None:
    from datetime import UTC, datetime

    settings.CANDIDATE_LOOKBACK_DAYS = 7
    old = factories.indexed_document(
        url="https://g.example.com/old",
        text=TEXT,
        simhash=BASE,
        fetched_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    new = factories.indexed_document(
        url="https://g.example.com/new",
        text=TEXT,
        simhash=BASE,
        fetched_at=datetime(2026, 5, 1, tzinfo=UTC),
    )
    _find([old, new])
    assert not CandidatePair.objects.exists()


def test_a_login_wall_at_hundreds_of_urls_stays_linear_and_is_flagged(settings) -> None:
    settings.GROUP_LARGE = 50
    wall = "Please log in to continue reading. Members only. Sign in with your account."
    docs = [_doc(f"wall-{i}", BASE, text=wall * 3) for i in range(300)]
    _find(docs)
    # Identical texts pair with one twin each: a star, not 300·299/2 pairs.
    assert CandidatePair.objects.count() == 299
    group = _group(docs[0])
    assert group is not None
    assert group.size == 300
    assert group.kind == "exact"
    assert group.oversized


def _twin_groups(n: int, start: int):
    """n groups of two exact copies each, the groups far apart."""
    docs = []
    for i in range(start, start + n):
        text = factories.article_text(300 + i, words=60)
        value = random.Random(i).getrandbits(64)
        docs += [_doc(f"twins-{i}-{j}", simhash=value, text=text) for j in range(2)]
    return docs


def test_regrouping_reads_the_facts_of_every_group_at_once() -> None:
    # A worker regroups many groups per task: per group it writes the group, and reads
    # nothing more (the facts of all of them come in one statement each).
    few, many = _twin_groups(2, 0), _twin_groups(8, 10)
    _find(few)
    _find(many)
    assert CandidateGroup.objects.filter(size=2).count() == 10
    method = FingerprintMethod.objects.get(is_active=True)

    def statements(docs) -> int:
        with CaptureQueriesContext(connection) as ctx:
            candidates.groups_update(method=method, document_ids=[d.pk for d in docs])
        return len(ctx.captured_queries)

    assert statements(many) - statements(few) <= len(many) // 2 - len(few) // 2


def test_regrouping_writes_only_the_groups_that_changed() -> None:
    # New groups are written in one statement; a second regrouping of the same area
    # finds nothing changed and writes no group row; a new member changes one group.
    docs = _twin_groups(6, 0)
    method = FingerprintMethod.objects.get(is_active=True)
    with CaptureQueriesContext(connection) as ctx:
        _find(docs)
    inserts = [
        q
        for q in ctx.captured_queries
        if q["sql"].startswith('INSERT INTO "ingest_candidategroup"')
    ]
    assert len(inserts) == 1
    assert CandidateGroup.objects.filter(size=2, dissolved=False).count() == 6
    versions = dict(CandidateGroup.objects.values_list("pk", "version"))

    def group_writes() -> list[str]:
        with CaptureQueriesContext(connection) as ctx:
            candidates.groups_update(method=method, document_ids=[d.pk for d in docs])
        return [
            q["sql"]
            for q in ctx.captured_queries
            if q["sql"].startswith('UPDATE "ingest_candidategroup"')
        ]

    assert group_writes() == []
    assert dict(CandidateGroup.objects.values_list("pk", "version")) == versions
    third = _doc(
        "twins-0-2",
        simhash=random.Random(0).getrandbits(64),
        text=factories.article_text(300, words=60),
    )
    _find([third])
    grown = CandidateGroup.objects.get(size=3)
    assert grown.version == versions[grown.pk] + 1
    assert all(
        v == versions[pk]
        for pk, v in CandidateGroup.objects.exclude(pk=grown.pk).values_list("pk", "version")
    )
