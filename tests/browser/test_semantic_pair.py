"""A rewritten copy in a real browser, with the real model: the pair view's meaning panel
says the pair means the same in other words, lists the sentences closest in meaning,
and shows the crawled text's markup as text (escaped: nothing of it runs or renders)."""

import pytest
from playwright.sync_api import expect

from ingest import semantic
from ingest.core import channels
from ingest.models import CandidatePair, Extraction
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.semantic, pytest.mark.django_db(transaction=True)]

STORY = (
    "The city council voted on Tuesday to build a new bridge across the river. The project "
    "will cost 40 million dollars and construction is expected to begin next spring. The "
    "mayor said the bridge would cut commuting times for thousands of residents."
)
# The same story in other words, with markup a crawl left in its main text.
REWRITTEN = (
    "On Tuesday the city council voted to build a new bridge over the river. "
    "<img src=x onerror=\"window.__pwned='img'\"><script>window.__pwned='script'</script>"
    "The project will cost 40 million dollars, and building work should begin next spring. "
    "The mayor said the <b>new bridge</b> would shorten commutes for thousands of residents."
)


def _doc(n: int, text: str, simhash: int):
    doc = factories.indexed_document(
        url=f"https://s{n}.example.com/story", text=text, simhash=simhash, site=f"s{n}.example.com"
    )
    Extraction.objects.filter(document=doc).update(language="en")
    return doc


def test_a_semantic_only_pair_shows_its_meaning_and_closest_sentences_escaped(
    logged_in, semantic_on
) -> None:
    page = logged_in
    # SimHash values 32 bits apart: only the semantic channel can pair them.
    story = _doc(1, STORY, 0)
    rewritten = _doc(2, REWRITTEN, (1 << 32) - 1)
    semantic.embeddings_compute(document_ids=[story.pk, rewritten.pk])
    pair = CandidatePair.objects.get()
    assert pair.channels == channels.SEMANTIC and pair.cosine is not None

    page.goto(f"/review/pairs/{pair.id}/", timeout=30_000)
    panel = page.locator("#semantic-panel")
    panel.wait_for()
    expect(panel.locator(".semantic-summary")).to_have_text(
        f"same meaning, different words (cosine {pair.cosine:.2f})"
    )
    expect(panel).to_contain_text("semantic only")
    table = panel.locator("table.closest-sentences")
    expect(table).to_be_visible()
    expect(table.locator("thead")).to_contain_text("B, closest")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(3)
    # Each of A's sentences faces B's sentence of the same facts.
    assert [rows.nth(i).get_attribute("data-b") for i in range(3)] == ["1", "2", "3"]
    expect(rows.nth(1)).to_contain_text("40 million dollars")
    # The crawl's markup is text on the page, not elements.
    expect(table).to_contain_text("<script>window.__pwned='script'</script>")
    expect(table).to_contain_text("<b>new bridge</b>")
    assert table.locator("script, img, b").count() == 0
    assert page.evaluate("window.__pwned") is None
