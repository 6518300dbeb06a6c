"""An excerpt pair in a real browser: the passage panel states the containment in
words and highlights the shared passages on both sides, the same run on each."""

import pytest
from playwright.sync_api import expect

from ingest import candidates
from ingest.models import CandidatePair
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTICLE = factories.article_text(701, words=400)


def _doc(url: str, text: str):
    value = factories.simhash_of(text)
    site = url.split("/")[2]
    return factories.indexed_document(url=url, text=text, simhash=value, site=site)


def test_an_excerpt_pair_shows_its_shared_passages_highlighted(logged_in) -> None:
    page = logged_in
    words = ARTICLE.split()
    article = _doc("https://wire.example.org/story", ARTICLE)
    excerpt = _doc("https://portal.example.net/teaser", " ".join(words[120:280]))
    candidates.candidates_find(document_ids=[article.pk])
    candidates.candidates_find(document_ids=[excerpt.pk])
    pair = CandidatePair.objects.get()
    assert pair.channel_names == ["passages"]

    # (The queue's channel filter is covered in tests/reviews/test_passage_pairs.py; the
    # queue page computes every filter's counts, slow on a loaded machine.)
    page.goto(f"/review/pairs/{pair.id}/", timeout=30_000)
    panel = page.locator("#passages-panel")
    panel.wait_for()
    panel.scroll_into_view_if_needed()  # the page fetches the panel once it is shown
    expect(panel).to_contain_text("B contains")
    expect(panel).to_contain_text("A contains 100% of B")
    side_a = panel.locator(".side-a mark.shared")
    side_b = panel.locator(".side-b mark.shared")
    assert side_a.count() >= 1 and side_b.count() >= 1
    assert side_a.first.is_visible() and side_b.first.is_visible()
    # The first shared run is the same text on both sides, and it is highlighted.
    first_a = panel.locator(".side-a mark.shared[data-run='1']").inner_text()
    first_b = panel.locator(".side-b mark.shared[data-run='1']").inner_text()
    # (Paragraph breaks may differ: compare the words.)
    assert first_a.split() == first_b.split() and len(first_a.split()) >= 20
    colour = side_a.first.evaluate("m => getComputedStyle(m).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")
    assert panel.locator("table.passage-runs tr[data-run='1']").is_visible()
