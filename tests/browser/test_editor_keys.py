"""An editor's hour in a real browser: ten pairs labelled from the queue with at most
three keys each, never the same pair twice; the pair page fits a 1440 px window."""

import random

import pytest
from playwright.sync_api import expect

from ingest.models import CandidatePair
from reviews.models import Label
from tests import factories
from tests.factories import find, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def twelve_pairs() -> list[CandidatePair]:
    docs = []
    for i in range(12):
        text = factories.article_text(300 + i, words=80)
        base = random.Random(i).getrandbits(64)  # ~32 bits from every other pair
        a = reviewed_document(url=f"https://a.example.com/{i}", text=text, base=base)
        b = reviewed_document(
            url=f"https://b.example.com/{i}", text=text + " more", flips=1 + i % 3, base=base
        )
        docs += [a, b]
    find(*docs)
    pairs = list(CandidatePair.objects.order_by("id"))
    assert len(pairs) == 12
    return pairs


def test_ten_pairs_from_the_queue_with_at_most_three_keys_each(logged_in, twelve_pairs) -> None:
    page = logged_in
    page.goto("/review/")
    page.keyboard.press("n")
    page.wait_for_selector("#pair-review[data-pair]")
    seen: list[str] = []
    keys_per_pair: list[int] = []
    plans = [["1", "Enter"], ["4", "Enter"], ["2", "Enter"], ["3", "Enter"], ["5", "Enter"]]
    for i in range(10):
        current = page.locator("#pair-review").get_attribute("data-pair")
        assert current and current not in seen, f"pair {current} met twice: {seen}"
        seen.append(current)
        keys = plans[i % len(plans)]
        for key in keys:
            page.keyboard.press(key)
        keys_per_pair.append(len(keys))
        page.wait_for_function(
            "old => { const s = document.querySelector('#pair-review');"
            " return s && s.dataset.pair !== old; }",
            arg=current,
        )
        expect(page.locator(".notice").first).to_contain_text("Saved")
    assert max(keys_per_pair) <= 3
    labels = list(Label.objects.order_by("id"))
    assert [str(x.pair_id) for x in labels] == seen
    assert {x.reason_code for x in labels} == {
        "same_text",
        "different_item",
        "cosmetic",
        "updated",
        "unclear",
    }
    page.goto(f"/review/pairs/{seen[-1]}/")
    expect(page.locator("#progress b").first).to_have_text("10")


def test_the_pair_page_fits_a_1440_px_window(browser, live_server) -> None:
    long_token = "x" * 400
    text = factories.article_text(5, words=100) + " " + long_token
    a = reviewed_document(url="https://wide.example.com/" + "a" * 300, text=text)
    b = reviewed_document(url="https://wide.example.com/" + "b" * 300, text=text, flips=1)
    find(a, b)
    pair = CandidatePair.objects.get()
    factories.user_create(username="wide", role="editor", password="pw-wide-123")
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "wide")
    page.fill("input[name=password]", "pw-wide-123")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{live_server.url}/")
    for view in ("main", "full", "html"):
        page.goto(f"/review/pairs/{pair.id}/?view={view}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1440, (view, width)
    context.close()
