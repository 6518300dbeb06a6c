"""Exact groups are decided once for the whole group; wall pages (login walls,
captchas, empty pages) go to the crawl quality view instead of the queue."""

import pytest
from django.urls import reverse

from ingest.models import Extraction
from reviews.decisions import automerge, decision_records, group_merges
from reviews.models import Decision
from reviews.queue import group_queue, pair_queue, queue_counts
from reviews.queue.queue_filters import QueueFilters
from tests.factories import TEXT, find, group_of, pair_of, reviewed_document

pytestmark = pytest.mark.django_db
ALL = QueueFilters()


@pytest.fixture
def exact_copies(db):
    docs = [reviewed_document(url=f"https://e.example.com/{i}", text=TEXT) for i in range(4)]
    find(*docs)
    group = group_of(docs[0])
    assert group is not None and group.kind == "exact" and group.size == 4
    return docs, group


def test_exact_pairs_are_not_queued_one_by_one(exact_copies) -> None:
    docs, group = exact_copies
    assert not pair_queue.queue_pairs(filters=ALL).filter(exact=True).exists()
    assert list(group_queue.queue_groups(filters=ALL)) == [group]
    counts = queue_counts.queue_counts(filters=ALL)
    assert counts["kind"] == {"": 1, "pair": 0, "group": 1}


def test_an_exact_group_is_accepted_in_one_decision(client, exact_copies, editor) -> None:
    docs, group = exact_copies
    client.force_login(editor)
    r = client.post(
        reverse("reviews:group-accept", args=[group.pk]),
        {"reason": "exact copies", "version": group.version},
    )
    assert r.status_code == 302
    d = Decision.objects.get()
    assert d.actor == "person:editor" and sorted(d.document_ids) == sorted(x.pk for x in docs)
    # A person's acceptance is on the record as theirs, not as a rule's auto_merge.
    assert d.action == "accept" and d.reason_code == "accepted_exact"
    assert decision_records.is_accepted(group)
    assert not group_queue.queue_groups(filters=ALL).exists()
    assert queue_counts.queue_counts(filters=ALL)["status"][""] == 0


def test_a_restored_acceptance_is_withdrawn_and_keeps_the_rule_away(
    exact_copies, editor, settings
) -> None:
    _, group = exact_copies
    accepted = automerge.group_accept(group=group, editor=editor, reason="exact copies")
    group.refresh_from_db()
    group_merges.decision_restore(
        decision=accepted, editor=editor, reason="not the same edition", expected_version=None
    )
    group.refresh_from_db()
    assert not decision_records.is_accepted(group)
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    assert automerge.automerge_run()["auto_merged"] == 0


@pytest.fixture
def login_walls(db):
    wall = "Please log in to continue reading this page."
    docs = [
        reviewed_document(url=f"https://paywall.example.com/{i}", text=wall, flips=i)
        for i in range(3)
    ]
    Extraction.objects.filter(document__in=docs).update(
        status="blocked", message="login wall: page says 'log in to continue'"
    )
    find(*docs)
    return docs


def test_walls_go_to_crawl_quality_not_to_the_queue(client, login_walls, pair, editor) -> None:
    a, b, _ = login_walls
    wall_pair = pair_of(a, b)
    queued = set(pair_queue.queue_pairs(filters=ALL).values_list("id", flat=True))
    assert wall_pair.id not in queued and pair.id in queued
    assert group_of(a) not in list(group_queue.queue_groups(filters=ALL))
    client.force_login(editor)
    body = client.get(reverse("reviews:crawl-quality")).content.decode()
    assert "paywall.example.com" in body and "login wall" in body
    assert f"group {group_of(a).pk}</a>" in body
