"""What editors see of the semantic channel: the pair view says the cosine in plain
words and why a side has no vector, the document page says the embedding status, and
(with the real model) the sentences closest in meaning, escaped."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from ingest.core.channels import SEMANTIC, SIMHASH
from ingest.models import CandidatePair
from reviews import semantic
from reviews.models import Watermark
from reviews.queue_tally import ORDER, queue_tally_rebuild
from tests.factories import embedding_row, find, pair_of, reviewed_document

pytestmark = pytest.mark.django_db


def _page(client, editor, pair) -> str:  # type: ignore[no-untyped-def]
    client.force_login(editor)
    r = client.get(reverse("reviews:pair-detail", args=[pair.pk]))
    assert r.status_code == 200
    return r.content.decode()


def _set(pair, **fields) -> CandidatePair:  # type: ignore[no-untyped-def]
    CandidatePair.objects.filter(pk=pair.pk).update(**fields)
    return CandidatePair.objects.get(pk=pair.pk)


def test_a_semantic_only_pair_says_same_meaning_different_words(client, editor, pairs) -> None:
    pair = _set(pairs[0], channels=SEMANTIC, cosine=0.9312)
    html = _page(client, editor, pair)
    assert "same meaning, different words (cosine 0.93)" in html
    assert "semantic only" in html
    # Without the model the sentence view says what it needs.
    assert "need the semantic channel on (EMBEDDING_MODEL is not set)" in html


def test_a_pair_other_channels_nominated_too_does_not_say_different_words(
    client, editor, pairs
) -> None:
    pair = _set(pairs[0], channels=SIMHASH | SEMANTIC, cosine=0.991)
    html = _page(client, editor, pair)
    assert "different words" not in html
    assert "same meaning (cosine 0.99); the words are shared too: also nominated by simhash" in html
    assert "semantic only" not in html
    # No sentence view (nor the model's work) for a pair whose words are shared.
    assert "the aligned sentences tab shows them" in html
    assert "need the semantic channel on" not in html


def test_a_cosine_at_the_threshold_reads_as_the_same_meaning(
    client, editor, pairs, settings
) -> None:
    settings.SEMANTIC_THRESHOLDS = {**settings.SEMANTIC_THRESHOLDS, "article": 0.9}
    pair = _set(pairs[0], cosine=0.9)  # SimHash nominated it; the cosine reaches 0.9
    assert semantic.pair_semantic(pair=pair, text_a="", text_b="").same_meaning
    pair = _set(pairs[0], cosine=0.62)
    html = _page(client, editor, pair)
    assert "cosine 0.620, under the semantic threshold 0.9" in html
    assert "same meaning" not in html and "sentences closest" not in html


def test_a_side_without_a_vector_says_why(client, editor, pairs) -> None:
    pair = pairs[0]
    embedding_row(pair.a, status="not_covered", language="vi")
    embedding_row(pair.b, status="error", message="<script>alert(1)</script> model failed")
    html = _page(client, editor, pair)
    assert "No cosine: A: not covered by the model (language vi); B: error:" in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_the_document_page_says_the_embedding_status(client, editor, settings) -> None:
    text = "A short story about the harbour."
    docs = [
        reviewed_document(url=f"https://e.example.com/{i}", text=text, flips=i) for i in range(4)
    ]
    embedding_row(docs[0])
    embedding_row(docs[1], status="not_covered", language="vi")
    embedding_row(docs[2], status="empty", language="")
    client.force_login(editor)

    def status(doc) -> str:  # type: ignore[no-untyped-def]
        html = client.get(reverse("ingest:document-detail", args=[doc.pk])).content.decode()
        return html.split('id="embedding-status">')[1].split("</p>")[0]

    assert status(docs[0]).startswith("embedded") and "4 dims" in status(docs[0])
    assert status(docs[1]).startswith("not covered by the model (language vi)")
    assert status(docs[2]).startswith("no main text")
    assert (
        status(docs[3]) == "not embedded: the semantic channel is off (EMBEDDING_MODEL is not set)"
    )
    settings.EMBEDDING_MODEL = "/nowhere/model"
    assert "model directory not found: /nowhere/model" in status(docs[3])


# --- with the real model ------------------------------------------------------------

STORY_A = (
    "The city council approved the new harbour bridge on Monday. "
    "<script>alert('a')</script> Construction will start in May and cost 40 million euros. "
    "The mayor said traffic in the old town would fall by half."
)
STORY_B = (
    "According to the mayor, the old town will see half as many cars. "
    "On Monday, councillors voted to build a bridge across the harbour. "
    "Work begins in May; the bill comes to 40 million euros."
)


@pytest.mark.semantic
def test_the_closest_sentences_in_meaning_are_aligned_and_escaped(
    client, editor, semantic_on
) -> None:
    cache.clear()
    a = reviewed_document(url="https://r.example.com/a", text=STORY_A)
    b = reviewed_document(url="https://r.example.com/b", text=STORY_B, flips=1)
    find(a, b)
    pair = _set(pair_of(a, b), channels=SEMANTIC, cosine=0.93)
    view = semantic.pair_semantic(pair=pair, text_a=STORY_A, text_b=STORY_B)
    assert view.channel_on and not view.sentences_note
    assert pair.a_id == a.pk
    matched = {m.a_number: m.b_number for m in view.sentences}
    # A1 (the council approved the bridge) ↔ B2; A2 (work starts in May, after a
    # hostile fragment) ↔ B3; A3 (the mayor on traffic) ↔ B1.
    assert matched == {1: 2, 2: 3, 3: 1}
    assert all(-1.0 <= m.cosine <= 1.0 for m in view.sentences)
    html = _page(client, editor, pair)
    assert "Sentences closest in meaning" in html
    assert "<script>alert('a')" not in html and "&lt;script&gt;" in html


def test_the_queue_shows_a_semantic_only_pair_last_and_says_so(client, editor, pairs) -> None:
    first, second, third = pairs
    CandidatePair.objects.filter(pk=first.pk).update(channels=SEMANTIC, cosine=0.91)
    Watermark.objects.filter(name=ORDER).delete()  # the order is recomputed on the next read
    queue_tally_rebuild()
    client.force_login(editor)
    html = client.get(reverse("reviews:queue")).content.decode()
    rows = [html.index(reverse("reviews:pair-detail", args=[p.pk])) for p in (second, third, first)]
    assert rows == sorted(rows)
    assert html.count("(ranked last)") == 1
