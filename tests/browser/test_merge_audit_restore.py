"""Merge, audit and restore in a real browser: an editor merges two groups, an auditor
sees the merge on the audit page, the editor restores it, and the history shows it."""

import pytest
from playwright.sync_api import expect

from ingest.models import GroupMember
from reviews.models import Decision
from tests import factories
from tests.factories import BASE, TEXT, find, group_of, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _members(group) -> list[int]:
    return sorted(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))


def test_merge_audit_and_restore(logged_in, browser, live_server) -> None:
    page = logged_in
    a1 = reviewed_document(url="https://a.example.com/1", text=TEXT + " a")
    a2 = reviewed_document(url="https://a.example.com/2", text=TEXT + " also", flips=1)
    other = factories.article_text(99, words=150)
    base_b = BASE ^ (0xFFFFF << 30)
    b1 = reviewed_document(url="https://b.example.com/1", text=other, base=base_b)
    b2 = reviewed_document(url="https://b.example.com/2", text=other + " b", flips=1, base=base_b)
    find(a1, a2, b1, b2)
    ga, gb = group_of(a1), group_of(b1)
    before = _members(ga)

    # The editor merges group B into group A (htmx swap, no reload).
    page.goto(f"/review/groups/{ga.pk}/")
    page.fill("#merge-form input[name=other_group]", str(gb.pk))
    page.fill("#merge-form input[name=reason]", "same story, other site")
    page.click("#merge-form button")
    page.wait_for_selector(".notice:has-text('Merged')")
    assert _members(ga) == sorted([a1.pk, a2.pk, b1.pk, b2.pk])
    merge = Decision.objects.get(action="merge")
    assert page.locator(f"tr[data-decision='{merge.pk}']").is_visible()

    # An auditor sees it on the audit page.
    factories.user_create(username="audrey", role="auditor", password="pw-audrey-1")
    context = browser.new_context(base_url=live_server.url)
    auditor = context.new_page()
    auditor.goto("/accounts/login/")
    auditor.fill("input[name=username]", "audrey")
    auditor.fill("input[name=password]", "pw-audrey-1")
    auditor.click("button:has-text('Log in')")
    auditor.wait_for_url(f"{live_server.url}/")
    auditor.goto("/review/audit/")
    row = auditor.locator(f"table.audit-recent tr[data-decision='{merge.pk}']")
    expect(row).to_contain_text("merge")
    expect(row).to_contain_text("person:eve")
    assert auditor.locator("tr[data-actor='person:eve']").is_visible()
    # Auditors read the group history but get no restore button.
    auditor.goto(f"/review/groups/{ga.pk}/")
    assert auditor.locator(".restore-form").count() == 0

    # The editor restores it; the group is back to its previous membership.
    form = page.locator(f"tr[data-decision='{merge.pk}'] form.restore-form")
    form.locator("input[name=reason]").fill("false merge: two different stories")
    form.locator("button").click()
    page.wait_for_selector(".notice:has-text('Restored')")
    assert _members(ga) == before
    assert _members(gb) == sorted([b1.pk, b2.pk])
    restore = Decision.objects.get(action="restore")
    history = page.locator(f"tr[data-decision='{restore.pk}']")
    expect(history).to_contain_text(f"restore of #{merge.pk}")
    expect(history).to_contain_text("two different stories")
    expect(page.locator(f"tr[data-decision='{merge.pk}']")).to_contain_text("restored")
    # And the auditor sees the restore with its reason.
    auditor.goto("/review/audit/")
    expect(auditor.locator("table.audit-restores")).to_contain_text("two different stories")
    context.close()
