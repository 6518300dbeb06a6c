"""The review desk in a real browser: keyboard labeling, undo, split, representative."""

import re

import pytest
from playwright.sync_api import expect

from reviews.models import Decision, Label
from tests import factories
from tests.factories import BASE, find, group_of, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def three_pairs():
    out = []
    for i, flips in enumerate((3, 2, 0)):
        text = factories.article_text(200 + i, words=120)
        base = BASE ^ (0xFFFF << (16 * i + 8))
        a = reviewed_document(url=f"https://a.example.com/{i}", text=text, base=base)
        b = reviewed_document(
            url=f"https://b.example.com/{i}", text=text + " extra", flips=flips, base=base
        )
        find(a, b)
        out.append((a, b))
    from ingest.models import CandidatePair

    return list(CandidatePair.objects.order_by("id"))


def _queue_rows(page) -> list[str]:
    return page.locator("table.pairs tbody tr[data-pair]").evaluate_all(
        "rows => rows.map(r => r.dataset.pair)"
    )


def test_label_from_the_keyboard_leave_the_queue_and_undo(logged_in, three_pairs) -> None:
    page = logged_in
    first, second, _ = three_pairs
    page.goto("/review/")
    assert _queue_rows(page) == [str(p.id) for p in three_pairs]

    page.keyboard.press("n")  # Next: claims the most uncertain pair
    page.wait_for_url(re.compile(rf"/review/pairs/{first.id}/$"))
    page.evaluate("window.__marker = 'no reload'")

    page.keyboard.press("1")
    assert page.locator("input[name=verdict][value=duplicate]").is_checked()
    page.keyboard.type("same article, one word added")  # the reason field has focus
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#pair-review[data-pair='{second.id}']")
    assert page.url.endswith(f"/review/pairs/{second.id}/")
    assert page.evaluate("window.__marker") == "no reload"
    expect(page.locator(".notice")).to_contain_text("Saved")
    label = Label.objects.get()
    assert (label.pair_id, label.verdict, label.reason_code) == (first.id, "duplicate", "same_text")

    # Undo from the keyboard: the label is withdrawn and its pair comes back.
    page.keyboard.press("u")
    page.wait_for_selector(f"#pair-review[data-pair='{first.id}']")
    expect(page.locator(".notice")).to_contain_text("Withdrew")
    assert page.evaluate("window.__marker") == "no reload"
    assert Label.objects.filter(retraction=True).count() == 1

    # Label it again, then the queue no longer lists it.
    page.keyboard.press("4")
    page.keyboard.type("different stories")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#pair-review[data-pair='{second.id}']")
    page.goto("/review/")
    assert str(first.id) not in _queue_rows(page)
    assert len(_queue_rows(page)) == 2

    # "?" shows the keys.
    page.keyboard.press("?")
    assert page.locator("#keys-help").is_visible()


def test_split_a_group_and_choose_a_representative(logged_in) -> None:
    page = logged_in
    text = factories.article_text(9, words=150)
    a = reviewed_document(url="https://news.example.com/a", text=text + " one")
    b = reviewed_document(url="https://news.example.com/b", text=text + " two", flips=2)
    c = reviewed_document(url="https://news.example.com/c", text=text + " three", flips=4)
    find(a, b, c)
    group = group_of(a)
    page.goto(f"/review/groups/{group.pk}/")
    assert page.locator("table.heatmap td.over").count() == 2  # a–c, 4 bits > 3

    page.evaluate("window.__marker = 'no reload'")
    page.check(f"#split-form input[name=document_ids][value='{c.pk}']")
    page.fill("#split-form input[name=reason]", "c is another story")
    page.click("#split-form button:has-text('Split selected')")
    page.wait_for_selector(".notice:has-text('Split')")
    assert page.evaluate("window.__marker") == "no reload"
    decision = Decision.objects.get()
    assert decision.document_ids == [c.pk] and decision.actor == "person:eve"
    expect(page.locator(".history")).to_contain_text("c is another story")
    page.select_option("#representative-form select[name=document_id]", str(b.pk))
    page.select_option("#representative-form select[name=reason_code]", "editorial")
    page.fill("#representative-form input[name=reason]", "the fuller version")
    page.click("#representative-form button")
    page.wait_for_selector(".notice:has-text('Representative set')")
    group.refresh_from_db()
    assert group.representative_id == b.pk and group.representative_locked
    expect(page.locator(".history")).to_contain_text("set_representative")
