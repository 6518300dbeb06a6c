"""Two editors decide on the same group at once: one wins, the other gets a conflict
with the current state, and both attempts are on the record (optimistic versioning)."""

import threading

import pytest
from django.db import connection
from django.test import Client

from reviews.models import Decision
from tests import factories
from tests.factories import TEXT, find, group_of, reviewed_document

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _race(posts: list[tuple[Client, str, dict[str, object]]]) -> list[int]:
    barrier = threading.Barrier(len(posts))
    codes: list[int] = [0] * len(posts)

    def run(i: int) -> None:
        client, url, data = posts[i]
        try:
            barrier.wait()
            codes[i] = client.post(url, data).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(posts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return codes


@pytest.mark.parametrize("second", ["representative", "split"])
def test_one_editor_wins_the_other_sees_a_conflict(second: str) -> None:
    a = reviewed_document(url="https://n.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://n.example.com/b", text=TEXT + " two", flips=1)
    c = reviewed_document(url="https://n.example.com/c", text=TEXT + " three", flips=2)
    find(a, b, c)
    group = group_of(a)
    clients = []
    for name in ("ann", "bob"):
        client = Client()
        client.force_login(factories.user_create(username=name, role="editor"))
        clients.append(client)
    rep = {"document_id": c.pk, "reason_code": "editorial", "reason": "ann's pick"}
    other = (
        {"document_id": b.pk, "reason_code": "editorial", "reason": "bob's pick"}
        if second == "representative"
        else {"document_ids": [c.pk], "reason_code": "other", "reason": "bob splits"}
    )
    codes = _race(
        [
            (
                clients[0],
                f"/review/groups/{group.pk}/representative",
                {**rep, "version": group.version},
            ),
            (
                clients[1],
                f"/review/groups/{group.pk}/{second}",
                {**other, "version": group.version},
            ),
        ]
    )
    assert sorted(codes) == [302, 409]
    log = list(Decision.objects.order_by("id"))
    assert len(log) == 2
    winner, loser = log
    assert winner.action in ("set_representative", "split", "detach")
    assert loser.action == "conflict"
    assert loser.membership_before["expected_version"] == group.version
    assert loser.group_version == winner.group_version == group.version + 1
    assert {winner.actor, loser.actor} == {"person:ann", "person:bob"}
