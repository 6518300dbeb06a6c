"""What editors see of the semantic channel: the pair view says the cosine in plain
words and why a side has no vector, the document page says the embedding status, and
(with the real model) the sentences closest in meaning, escaped."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from ingest import embedder
from ingest.core.channels import SEMANTIC, SIMHASH
from ingest.models import CandidatePair
from ingest.selectors import embedding_statuses
from reviews.models import Watermark
from reviews.pair import semantic_panel
from reviews.queue.queue_tally import ORDER, queue_tally_rebuild
from tests.factories import embedding_row, find, pair_of, reviewed_document

pytestmark = pytest.mark.django_db


def _page(client, editor, pair) -> str:
    client.force_login(editor)
    r = client.get(reverse("reviews:pair-detail", args=[pair.id]))
    assert r.status_code == 200
    return r.content.decode()


def _set(pair, **fields) -> CandidatePair:
    CandidatePair.objects.filter(id=pair.id).update(**fields)
    return CandidatePair.objects.get(id=pair.id)


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
    assert semantic_panel.pair_semantic(pair=pair, text_a="", text_b="").same_meaning
    pair = _set(pairs[0], cosine=0.62)
    html = _page(client, editor, pair)
    assert "cosine 0.620, under the semantic threshold 0.9" in html
    assert "same meaning" not in html and "sentences closest" not in html


# The web process names the model (its key: the directory's name) without having it.
CONFIGURED = "/nowhere/all-MiniLM-L6-v2"


def test_a_side_without_a_vector_says_why(client, editor, pairs, settings) -> None:
    settings.EMBEDDING_MODEL = CONFIGURED
    pair = pairs[0]
    embedding_row(pair.a, status="not_covered", language="vi")
    embedding_row(pair.b, status="error", message="<script>alert(1)</script> model failed")
    html = _page(client, editor, pair)
    assert "No cosine: A: not covered by the model (language vi); B: error:" in html
    assert "model failed (try 1 of 3: the next run tries again)" in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def _documents(n: int) -> list:
    text = "A short story about the harbour."
    return [
        reviewed_document(url=f"https://e.example.com/{i}", text=text, flips=i) for i in range(n)
    ]


def _status(client, doc) -> str:
    html = client.get(reverse("ingest:document-detail", args=[doc.pk])).content.decode()
    return html.split('id="embedding-status">')[1].split("</p>")[0]


def test_the_document_page_says_the_embedding_status(client, editor, settings, monkeypatch) -> None:
    settings.EMBEDDING_MODEL = CONFIGURED
    # With or without the extra in this environment: the state where it is installed
    # and the model directory is what is missing.
    monkeypatch.setattr(embedder, "extra_installed", lambda name=None: True)
    docs = _documents(4)
    embedding_row(docs[0])
    embedding_row(docs[1], status="not_covered", language="vi")
    embedding_row(docs[2], status="empty", language="")
    client.force_login(editor)

    def status(doc) -> str:
        return _status(client, doc)

    assert status(docs[0]).startswith("embedded") and "4 dims" in status(docs[0])
    assert status(docs[1]).startswith("not covered by the model (language vi)")
    assert status(docs[2]).startswith("no main text")
    assert status(docs[3]) == (
        "not embedded by all-MiniLM-L6-v2: the semantic channel is off "
        f"(model directory not found: {CONFIGURED})"
    )
    monkeypatch.setattr(embedder, "extra_installed", lambda name=None: False)
    missing = embedder.extra_missing()
    assert status(docs[3]) == (
        f"not embedded by all-MiniLM-L6-v2: the semantic channel is off ({missing})"
    )
    settings.EMBEDDING_MODEL = ""
    assert (
        status(docs[3]) == "not embedded: the semantic channel is off (EMBEDDING_MODEL is not set)"
    )


def test_the_document_page_shows_the_configured_models_row_not_the_latest(
    client, editor, settings
) -> None:
    settings.EMBEDDING_MODEL = CONFIGURED
    (doc,) = _documents(1)
    embedding_row(doc)
    # Written later, by a model the deployment tried and left.
    embedding_row(doc, model="paraphrase-multilingual-MiniLM-L12-v2", status="error", message="x")
    client.force_login(editor)
    shown = _status(client, doc)
    assert shown.startswith("embedded") and "all-MiniLM-L6-v2, 4 dims" in shown
    assert "paraphrase" not in shown


def test_the_document_page_says_when_only_another_models_row_exists(
    client, editor, settings, monkeypatch
) -> None:
    settings.EMBEDDING_MODEL = CONFIGURED
    monkeypatch.setattr(embedder, "extra_installed", lambda name=None: True)
    other, old_extractor, none = _documents(3)
    embedding_row(other, model="paraphrase-multilingual-MiniLM-L12-v2")
    embedding_row(old_extractor, extractor_version="trafilatura-0.1")
    client.force_login(editor)
    assert _status(client, other) == (
        "not embedded by all-MiniLM-L6-v2: the semantic channel is off "
        f"(model directory not found: {CONFIGURED}); only a row of another model exists: "
        "paraphrase-multilingual-MiniLM-L12-v2 (embedded)"
    )
    assert _status(client, old_extractor).endswith(
        "; only a row under another extractor version exists: all-MiniLM-L6-v2, "
        "trafilatura-0.1 (embedded)"
    )
    assert "only" not in _status(client, none)
    # The pair view's sides say the same: no vector of the configured model.
    shown = embedding_statuses(document_ids=[other.pk])[other.pk]
    assert not shown.embedded and "only a row of another model exists" in shown.words


def test_the_document_page_keeps_the_failed_tries_in_view(client, editor, settings) -> None:
    settings.EMBEDDING_MODEL = CONFIGURED
    settings.EMBEDDING_ATTEMPTS = 3
    retried, failing = _documents(2)
    embedding_row(retried, status="error", message="<b>out of memory</b>", attempt=1)
    embedding_row(retried, status="error", message="timeout", attempt=2)
    embedding_row(retried, attempt=3)
    for n in (1, 2, 3):
        embedding_row(failing, status="error", message=f"failure {n}", attempt=n)
    client.force_login(editor)
    html = client.get(reverse("ingest:document-detail", args=[retried.pk])).content.decode()
    assert _status(client, retried).startswith("embedded")
    assert "try 3" in _status(client, retried)
    failed = html.split('id="embedding-failed-tries"')[1].split("</ol>")[0]
    assert "failed: &lt;b&gt;out of memory&lt;/b&gt;" in failed and "failed: timeout" in failed
    assert _status(client, failing).startswith("error: failure 3 (try 3 of 3: no more tries)")


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
    view = semantic_panel.pair_semantic(pair=pair, text_a=STORY_A, text_b=STORY_B)
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
    CandidatePair.objects.filter(id=first.id).update(channels=SEMANTIC, cosine=0.91)
    Watermark.objects.filter(name=ORDER).delete()  # the order is recomputed on the next read
    queue_tally_rebuild()
    client.force_login(editor)
    html = client.get(reverse("reviews:queue")).content.decode()
    rows = [html.index(reverse("reviews:pair-detail", args=[p.id])) for p in (second, third, first)]
    assert rows == sorted(rows)
    assert html.count("(ranked last)") == 1
