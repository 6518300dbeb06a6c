"""The queue's filter bar is one row at 1440 px, the distance range beside the other
filters, with the desk's long method keys and site names in its lists."""

import pytest

from tests import factories
from tests.factories import find, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_filter_bar_is_one_row_at_1440_px(logged_in) -> None:
    page = logged_in
    text = factories.article_text(11, words=120)
    host = "a-rather-long-subdomain.regional-news-publisher.example.com"
    a = reviewed_document(url=f"https://{host}/a", text=text, site=host)
    b = reviewed_document(url=f"https://{host}/b", text=text + " more", flips=1, site=host)
    find(a, b)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/review/")
    boxes = page.eval_on_selector_all(
        ".queue-filters > *",
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [e.textContent.trim().slice(0, 12), r.top, r.bottom]; })",
    )
    assert len(boxes) >= 9
    tops = [t for _, t, _ in boxes]
    bottoms = [b for _, _, b in boxes]
    assert max(bottoms) - min(bottoms) < 4, boxes  # every filter ends on one line
    assert max(tops) - min(tops) < 24, boxes  # and none stands taller than a label
