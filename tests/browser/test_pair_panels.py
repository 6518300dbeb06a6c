"""The pair page in a real browser: the passage panel is fetched once the editor scrolls
to it (the page is shown without winnowing the texts), under the site's CSP."""

import pytest
from playwright.sync_api import expect

from ingest import candidates
from ingest.models import CandidatePair, Document
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Long enough that the word diff above it puts the passage panel below the fold.
ARTICLE = factories.article_text(733, words=1500)


def _doc(url: str, text: str) -> Document:
    site = url.split("/")[2]
    return factories.indexed_document(
        url=url, text=text, simhash=factories.simhash_of(text), site=site
    )


def test_the_passage_panel_loads_when_scrolled_to(logged_in, settings) -> None:
    settings.PASSAGE_CHANNEL = True
    page = logged_in
    words = ARTICLE.split()
    article = _doc("https://wire.example.org/long", ARTICLE)
    excerpt = _doc("https://portal.example.net/part", " ".join(words[200:700]))
    candidates.candidates_find(document_ids=[article.pk])
    candidates.candidates_find(document_ids=[excerpt.pk])
    pair = CandidatePair.objects.get()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"/review/pairs/{pair.id}/", timeout=30_000)
    expect(page.locator("#diff-panel")).to_be_visible()
    panel = page.locator("#passages-panel")
    # Below the fold: still the placeholder, with its link for a browser without JavaScript.
    expect(panel.locator("a", has_text="Open this section")).to_have_count(1)
    expect(panel.locator("table.passage-runs")).to_have_count(0)
    panel.scroll_into_view_if_needed()
    expect(panel.locator("table.passage-runs")).to_be_visible()
    expect(panel).to_contain_text("A contains 100% of B")
    expect(panel.locator(".side-a mark.shared[data-run='1']")).to_be_visible()
    expect(page.locator(".panel-pending")).to_have_count(0)
    assert errors == []
