"""The decision log for auditors: read-only admin with filters, search and CSV; the
audit page in the desk; merge, restore and conflicts from the group page."""

import pytest
from django.contrib.auth.models import User

from reviews.decisions import automerge, group_merges
from reviews.models import Decision
from tests.factories import group_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def merged(two_groups, editor):
    a1, _, b1, _ = two_groups
    return group_merges.group_merge(
        group=group_of(a1),
        other_group=group_of(b1),
        editor=editor,
        reason_code="same_item",
        reason="same story",
    )


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.com", "pw")


def test_the_admin_log_is_read_only_even_for_superusers(client, superuser, merged) -> None:
    client.force_login(superuser)
    r = client.get("/admin/reviews/decision/")
    assert r.status_code == 200 and b"same story" in r.content
    assert b"group %d history" % merged.group_id in r.content
    assert client.get("/admin/reviews/decision/add/").status_code == 403
    r = client.post(f"/admin/reviews/decision/{merged.pk}/change/", {"reason": "forged"})
    assert r.status_code == 403
    assert (
        client.post(f"/admin/reviews/decision/{merged.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    assert Decision.objects.get(pk=merged.pk).reason == "same story"


def test_admin_filters_and_search_by_url_and_document(
    client, superuser, merged, two_groups
) -> None:
    client.force_login(superuser)
    base = "/admin/reviews/decision/"
    assert b"same story" in client.get(base + "?action=merge").content
    assert b"same story" not in client.get(base + "?action=split").content
    assert b"same story" in client.get(base + "?actor=person%3A").content
    assert b"same story" not in client.get(base + "?actor=rule%3A").content
    assert b"same story" in client.get(base + f"?method={merged.method_key}").content
    assert b"same story" in client.get(base + "?site=g.example.com").content
    assert b"same story" in client.get(base + "?q=b.example.com/2").content
    assert b"same story" in client.get(base + f"?q={two_groups[2].pk}").content
    assert b"same story" not in client.get(base + "?q=nowhere.example.org").content


def test_admin_csv_export_of_the_selected_rows(client, superuser, merged) -> None:
    client.force_login(superuser)
    r = client.post(
        "/admin/reviews/decision/",
        {"action": "export_csv", "_selected_action": [merged.pk], "index": 0},
    )
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    data = b"".join(r.streaming_content)
    assert data.startswith(b"\xef\xbb\xbf")  # a person opens it in a spreadsheet
    header, row = data.decode("utf-8-sig").splitlines()[:2]
    assert header.startswith("id,created_at,action,actor")
    assert row.startswith(f"{merged.pk},") and ",merge,person:editor," in row


def test_the_audit_page_counts_per_day_and_actor_and_lists_restores(
    client, merged, editor, auditor
) -> None:
    group_merges.decision_restore(decision=merged, editor=editor, reason="false merge: two stories")
    client.force_login(auditor)
    r = client.get("/review/audit/")
    assert r.status_code == 200
    html = r.content.decode()
    assert 'data-actor="person:editor"' in html
    assert "false merge: two stories" in html
    # The reverted decision's action is a stored value, shown as it is (data-value).
    assert f"#{merged.pk} <span data-value>merge</span>" in html


def test_merge_and_restore_from_the_group_page(client, editor, two_groups) -> None:
    a1, a2, b1, _ = two_groups
    ga, gb = group_of(a1), group_of(b1)
    client.force_login(editor)
    r = client.post(
        f"/review/groups/{ga.pk}/merge",
        {"other_group": gb.pk, "reason_code": "same_item", "reason": "same", "version": ga.version},
    )
    assert r.status_code == 302 and group_of(b1) == ga
    merge = Decision.objects.get(action="merge")
    page = client.get(f"/review/groups/{ga.pk}/").content.decode()
    assert f'action="/review/decisions/{merge.pk}/restore"' in page
    ga.refresh_from_db()
    r = client.post(
        f"/review/decisions/{merge.pk}/restore", {"reason": "two stories", "version": ga.version}
    )
    assert r.status_code == 302 and group_of(b1) == gb and group_of(a2) == ga
    page = client.get(f"/review/groups/{ga.pk}/").content.decode()
    assert f"restore of #{merge.pk}" in page and "two stories" in page


def test_an_auditor_cannot_restore(client, auditor, merged) -> None:
    client.force_login(auditor)
    r = client.post(f"/review/decisions/{merged.pk}/restore", {"reason": "x"})
    assert r.status_code == 403


def test_a_stale_form_is_a_recorded_conflict_showing_the_current_state(
    client, chain, editor
) -> None:
    a, b, c = chain
    group = group_of(a)
    client.force_login(editor)
    r = client.post(
        f"/review/groups/{group.pk}/representative",
        {
            "document_id": c.pk,
            "reason_code": "editorial",
            "reason": "late",
            "version": group.version - 1,
        },
    )
    assert r.status_code == 409 and "Conflict" in r.content.decode()
    d = Decision.objects.get()
    assert d.action == "conflict" and d.membership_before["attempted"] == "set_representative"
    group.refresh_from_db()
    assert not group.representative_locked


def test_the_approval_queue_approves_in_bulk(client, editor, settings, two_groups) -> None:
    from reviews.models import MergeProposal

    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "semi"}
    settings.AUTO_MERGE_THRESHOLDS = {**settings.AUTO_MERGE_THRESHOLDS, "article": 1}
    automerge.automerge_run()
    ids = list(MergeProposal.objects.values_list("pk", flat=True))
    assert len(ids) == 2
    client.force_login(editor)
    assert client.get("/review/approvals/").status_code == 200
    r = client.post(
        "/review/approvals/", {"proposal_ids": ids, "verdict": "approve", "reason": "checked"}
    )
    assert r.status_code == 200 and "2 approved" in r.content.decode()
    assert Decision.objects.filter(action="auto_merge", actor="person:editor").count() == 2
