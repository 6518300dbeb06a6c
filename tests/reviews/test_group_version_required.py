"""A group form without the group's version is refused: without it the conflict check
cannot run, and two concurrent changes would both apply."""

import pytest
from django.test import Client

from ingest.models import CandidateGroup
from reviews.models import Decision
from tests import factories
from tests.factories import TEXT, find, group_of, reviewed_document
from tests.reviews.test_concurrency import _race


def _group():
    a = reviewed_document(url="https://v.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://v.example.com/b", text=TEXT + " two", flips=1)
    c = reviewed_document(url="https://v.example.com/c", text=TEXT + " three", flips=2)
    find(a, b, c)
    group = group_of(a)
    assert group is not None
    return group, a, b, c


def _client(name: str) -> Client:
    client = Client()
    client.force_login(factories.user_create(username=name, role="editor"))
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["representative", "split", "merge"])
@pytest.mark.parametrize("version", [None, "", "abc"])
def test_a_group_post_without_a_version_is_refused(action: str, version: str | None) -> None:
    group, a, b, c = _group()
    before = (group.version, group.representative_id)
    data: dict[str, object] = {
        "representative": {"document_id": c.pk, "reason_code": "editorial", "reason": "c"},
        "split": {"document_ids": [c.pk], "reason_code": "other", "reason": "c is other"},
        "merge": {"document_ids": [c.pk], "reason_code": "other", "reason": "c belongs"},
    }[action]
    if version is not None:
        data = {**data, "version": version}
    response = _client("ann").post(f"/review/groups/{group.pk}/{action}", data)
    assert response.status_code == 200
    assert b"lacks the group&#x27;s version" in response.content
    assert not Decision.objects.exists()
    group.refresh_from_db()
    assert (group.version, group.representative_id) == before


@pytest.mark.django_db
def test_a_restore_without_a_version_is_refused() -> None:
    group, a, b, c = _group()
    client = _client("ann")
    data = {
        "document_id": c.pk,
        "reason_code": "editorial",
        "reason": "c",
        "version": group.version,
    }
    assert client.post(f"/review/groups/{group.pk}/representative", data).status_code == 302
    decision = Decision.objects.get()
    response = client.post(f"/review/decisions/{decision.pk}/restore", {"reason": "undo"})
    assert b"lacks the group&#x27;s version" in response.content
    assert Decision.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_representative_changes_without_version_cannot_both_apply() -> None:
    group, a, b, c = _group()
    url = f"/review/groups/{group.pk}/representative"
    codes = _race(
        [
            (_client("ann"), url, {"document_id": b.pk, "reason_code": "editorial", "reason": "b"}),
            (_client("bob"), url, {"document_id": c.pk, "reason_code": "editorial", "reason": "c"}),
        ]
    )
    assert codes == [200, 200]  # both refused, each shown the form with the reason
    assert not Decision.objects.filter(action="set_representative").exists()
    fresh = CandidateGroup.objects.get(pk=group.pk)
    assert (fresh.version, fresh.representative_locked) == (group.version, False)
