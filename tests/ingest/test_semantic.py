"""The semantic channel with the real all-MiniLM-L6-v2 model: embedding rows, coverage,
idempotence, nomination of a rewritten copy (and not of a story on another subject),
the cosine on pairs any channel made, the lookback window and the recall check."""

import io
from datetime import UTC, datetime

import pytest
from django.conf import settings
from django.core.management import call_command

from ingest import candidates, embedder, semantic
from ingest.core import channels
from ingest.models import CandidatePair, Embedding, Extraction
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.semantic]

STORY = (
    "The city council voted on Tuesday to build a new bridge across the river. The project "
    "will cost 40 million dollars and construction is expected to begin next spring. The "
    "mayor said the bridge would cut commuting times for thousands of residents."
)
# The same story in other words (cosine 0.97 with STORY under MiniLM).
REWRITTEN = (
    "On Tuesday the city council voted to build a new bridge over the river. The project "
    "will cost 40 million dollars, and building work should begin next spring. The mayor "
    "said the new bridge would shorten commutes for thousands of residents."
)
# Same council, same day, another story (cosine 0.36).
OTHER_STORY = (
    "The city council voted on Tuesday to raise parking fees in the town centre. The change "
    "will bring in 2 million dollars a year and takes effect next month. Shop owners said "
    "higher fees would keep customers away from the high street."
)


def _doc(n: int, text: str, *, simhash: int, language: str = "en", **kwargs):  # type: ignore[no-untyped-def]
    doc = factories.indexed_document(
        url=f"https://s{n}.example.com/story", text=text, simhash=simhash, **kwargs
    )
    Extraction.objects.filter(document=doc).update(language=language)
    return doc


# SimHash values 32 bits apart: no SimHash nomination between them.
FAR = [0, (1 << 32) - 1, ((1 << 32) - 1) << 32, 0x5555555555555555]


def test_one_row_per_document_with_its_coverage(semantic_on) -> None:
    en = _doc(1, STORY, simhash=FAR[0])
    vietnamese = "Hội đồng thành phố đã bỏ phiếu xây một cây cầu mới."
    vi = _doc(2, vietnamese, simhash=FAR[1], language="vi")
    unknown = _doc(3, STORY + " again", simhash=FAR[2], language="und")
    empty = _doc(4, "   ", simhash=FAR[3])
    ids = [en.pk, vi.pk, unknown.pk, empty.pk]
    summary = semantic.embeddings_compute(document_ids=ids)
    assert summary.created == {"covered": 1, "not_covered": 2, "empty": 1}
    rows = {e.document_id: e for e in Embedding.objects.all()}
    assert rows[en.pk].status == "covered"
    assert rows[en.pk].dims == 384 and len(bytes(rows[en.pk].vector)) == 768
    assert rows[en.pk].model == "all-MiniLM-L6-v2" == embedder.model_key()
    assert rows[vi.pk].status == "not_covered" and rows[vi.pk].vector is None
    assert "not covered" in rows[vi.pk].message
    assert rows[unknown.pk].status == "not_covered"
    assert rows[empty.pk].status == "empty" and rows[empty.pk].vector is None


def test_a_retry_adds_nothing(semantic_on) -> None:
    a = _doc(1, STORY, simhash=FAR[0])
    b = _doc(2, REWRITTEN, simhash=FAR[1])
    first = semantic.embeddings_compute(document_ids=[a.pk, b.pk])
    assert first.created == {"covered": 2} and first.pairs_created == 1
    again = semantic.embeddings_compute(document_ids=[a.pk, b.pk])
    assert again.created == {} and again.pairs_created == 0
    assert Embedding.objects.count() == 2
    assert CandidatePair.objects.count() == 1


def test_a_model_failure_is_the_documents_row_and_the_batch_goes_on(
    semantic_on, monkeypatch
) -> None:
    good = _doc(1, STORY, simhash=FAR[0])
    bad = _doc(2, "POISON " + OTHER_STORY, simhash=FAR[1])
    real = embedder.embed_texts

    def flaky(texts):  # type: ignore[no-untyped-def]
        if any(t.startswith("POISON") for t in texts):
            raise RuntimeError("the model choked")
        return real(texts)

    monkeypatch.setattr(embedder, "embed_texts", flaky)
    summary = semantic.embeddings_compute(document_ids=[good.pk, bad.pk])
    assert summary.created == {"covered": 1, "error": 1}
    row = Embedding.objects.get(document=bad)
    assert row.status == "error" and row.vector is None
    assert row.message == "RuntimeError: the model choked"


def test_a_rewritten_copy_is_nominated_and_another_story_is_not(semantic_on) -> None:
    story = _doc(1, STORY, simhash=FAR[0])
    rewritten = _doc(2, REWRITTEN, simhash=FAR[1])
    other = _doc(3, OTHER_STORY, simhash=FAR[2])
    semantic.embeddings_compute(document_ids=[story.pk, rewritten.pk, other.pk])
    pair = CandidatePair.objects.get()
    assert (pair.a_id, pair.b_id) == (story.pk, rewritten.pk)
    assert pair.channels == channels.SEMANTIC
    assert pair.cosine is not None and pair.cosine >= 0.95
    assert pair.evidence["semantic"] == {"cosine": pair.cosine}
    # The pair carries every channel's facts, like the others.
    assert pair.distance == 32 and not pair.exact and pair.ratio > 0
    assert "passages" in pair.evidence and "simhash" in pair.evidence
    assert not pair.below_floor


def test_documents_embedded_one_task_after_the_other_find_each_other(semantic_on) -> None:
    story = _doc(1, STORY, simhash=FAR[0])
    rewritten = _doc(2, REWRITTEN, simhash=FAR[1])
    assert semantic.embeddings_compute(document_ids=[story.pk]).pairs_created == 0
    assert semantic.embeddings_compute(document_ids=[rewritten.pk]).pairs_created == 1


def test_a_pair_made_before_the_vectors_gets_its_cosine_when_they_arrive(semantic_on) -> None:
    # Two documents with one SimHash: the SimHash channel pairs them, vectors come later.
    story = _doc(1, STORY, simhash=FAR[0])
    rewritten = _doc(2, REWRITTEN, simhash=FAR[0] ^ 1)
    other = _doc(3, OTHER_STORY, simhash=FAR[0] ^ 2)
    candidates.candidates_find(document_ids=[story.pk, rewritten.pk, other.pk])
    pairs = {(p.a_id, p.b_id): p for p in CandidatePair.objects.all()}
    assert pairs and all(p.cosine is None for p in pairs.values())
    before = {key: (p.distance, p.ratio, p.below_floor) for key, p in pairs.items()}
    semantic.embeddings_compute(document_ids=[story.pk, rewritten.pk, other.pk])
    after = {(p.a_id, p.b_id): p for p in CandidatePair.objects.all()}
    assert set(after) == set(pairs)
    for key, p in after.items():
        assert p.cosine is not None
        assert (p.distance, p.ratio, p.below_floor) == before[key]
        assert p.channels & channels.SIMHASH
    same = after[(story.pk, rewritten.pk)]
    assert same.channels & channels.SEMANTIC and same.cosine >= 0.95
    different = [p for key, p in after.items() if other.pk in key]
    assert different and all(not p.channels & channels.SEMANTIC for p in different)
    assert all(p.cosine < 0.5 for p in different)


def test_a_pair_made_after_the_vectors_has_its_cosine(semantic_on) -> None:
    story = _doc(1, STORY, simhash=FAR[0])
    other = _doc(2, OTHER_STORY, simhash=FAR[0] ^ 1)
    semantic.embeddings_compute(document_ids=[story.pk, other.pk])
    assert not CandidatePair.objects.exists()
    candidates.candidates_find(document_ids=[story.pk, other.pk])
    pair = CandidatePair.objects.get()
    assert pair.cosine is not None and pair.cosine < 0.5
    assert pair.channels == channels.SIMHASH


def test_neighbours_outside_the_lookback_window_are_not_nominated(semantic_on, settings) -> None:
    settings.CANDIDATE_LOOKBACK_DAYS = 7
    story = _doc(1, STORY, simhash=FAR[0], fetched_at=datetime(2026, 5, 1, tzinfo=UTC))
    late = _doc(2, REWRITTEN, simhash=FAR[1], fetched_at=datetime(2026, 6, 1, tzinfo=UTC))
    semantic.embeddings_compute(document_ids=[story.pk, late.pk])
    assert not CandidatePair.objects.exists()


def test_processing_hands_documents_to_the_embedding_queue(semantic_on, committed) -> None:
    from ingest import services

    doc = _doc(1, STORY, simhash=FAR[0])
    with committed():
        services.documents_process(document_ids=[doc.pk])
    assert Embedding.objects.get(document=doc).status == "covered"


def test_the_backfill_command_embeds_what_has_no_row(semantic_on, committed) -> None:
    a = _doc(1, STORY, simhash=FAR[0])
    b = _doc(2, REWRITTEN, simhash=FAR[1])
    out = io.StringIO()
    with committed():
        call_command("embeddings", "--backfill", stdout=out)
    assert "semantic channel: on (all-MiniLM-L6-v2)" in out.getvalue()
    assert "handed 2 documents" in out.getvalue()
    assert Embedding.objects.filter(document__in=[a, b], status="covered").count() == 2
    assert CandidatePair.objects.filter(a=a, b=b).exists()


def test_the_recall_check_measures_the_approximate_index(semantic_on) -> None:
    docs = [
        _doc(i, factories.article_text(i, words=60), simhash=FAR[i % 4] ^ (i << 8))
        for i in range(1, 31)
    ]
    semantic.embeddings_compute(document_ids=[d.pk for d in docs])
    candidates.candidates_find(document_ids=[d.pk for d in docs])
    out = io.StringIO()
    call_command("candidates", "--recall-check", stdout=out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith("semantic:"))
    assert "30 vectors, 30 queries, recall@10" in line
    assert float(line.split("exact cosine: ")[1].split()[0]) >= 0.99


def test_the_channel_off_embeds_nothing_and_says_why(settings, committed) -> None:
    settings.EMBEDDING_MODEL = ""
    doc = _doc(1, STORY, simhash=FAR[0])
    semantic.embeddings_enqueue([doc.pk])
    with pytest.raises(embedder.ChannelOff, match="EMBEDDING_MODEL is not set"):
        semantic.embeddings_compute(document_ids=[doc.pk])
    out = io.StringIO()
    call_command("embeddings", stdout=out)
    assert "semantic channel: off (EMBEDDING_MODEL is not set)" in out.getvalue()
    assert not Embedding.objects.exists()


def _check(client, api_token, **payload):  # type: ignore[no-untyped-def]
    auth = {"Authorization": f"Bearer {api_token}"}
    r = client.post("/api/v1/check", payload, content_type="application/json", headers=auth)
    assert r.status_code == 200, r.content
    return r.json()


def test_the_check_api_reports_semantic_matches_apart(semantic_on, client, api_token) -> None:
    story = _doc(1, STORY, simhash=FAR[0])
    other = _doc(2, OTHER_STORY, simhash=FAR[1])
    semantic.embeddings_compute(document_ids=[story.pk, other.pk])
    answer = _check(client, api_token, text=REWRITTEN, doc_type="article")
    sem = answer["semantic"]
    assert sem["status"] == "on" and sem["model"] == "all-MiniLM-L6-v2"
    assert sem["threshold"] == settings.SEMANTIC_THRESHOLDS["article"]
    assert [m["document_id"] for m in sem["matches"]] == [story.pk]
    assert sem["matches"][0]["cosine"] >= 0.95
    assert sem["matches"][0]["url"] == story.url
    # Apart: the verdict is the other channels' (no SimHash or passage match here).
    assert answer["verdict"] == "new" and answer["matches"] == []
    # The stored page itself is never its own match.
    itself = _check(client, api_token, text=STORY, url=story.url, doc_type="article")
    assert story.pk not in [m["document_id"] for m in itself["semantic"]["matches"]]
    vietnamese = _check(client, api_token, text="Hội đồng thành phố đã bỏ phiếu xây cầu mới.")
    assert vietnamese["semantic"]["status"] == "not_covered"


def test_the_check_api_says_when_the_channel_is_off(settings, client, api_token) -> None:
    settings.EMBEDDING_MODEL = ""
    answer = _check(client, api_token, text=STORY)
    assert answer["semantic"] == {
        "status": "off",
        "reason": "EMBEDDING_MODEL is not set",
        "model": "",
        "threshold": None,
        "matches": [],
    }


def test_exact_twins_are_linked_as_a_star_not_a_clique(semantic_on) -> None:
    """A login wall at many URLs is one text: every copy is each other's nearest
    neighbour at cosine 1.0. The channel links them as the other channels do (n - 1
    links), and a rewritten copy of that text gets one pair with the family."""
    twins = [_doc(i, STORY, simhash=FAR[0]) for i in range(1, 6)]
    rewritten = _doc(9, REWRITTEN, simhash=FAR[1])
    semantic.embeddings_compute(document_ids=[d.pk for d in [*twins, rewritten]])
    pairs = set(CandidatePair.objects.values_list("a_id", "b_id"))
    first = twins[0].pk
    assert {(first, t.pk) for t in twins[1:]} <= pairs
    assert len([p for p in pairs if rewritten.pk in p]) == 1
    assert len(pairs) == 5


# --- failed tries: kept, tried again, up to EMBEDDING_ATTEMPTS -------------------------


def _failing(monkeypatch, prefix: str = "POISON") -> None:  # type: ignore[no-untyped-def]
    real = embedder.embed_texts

    def flaky(texts):  # type: ignore[no-untyped-def]
        if any(t.startswith(prefix) for t in texts):
            raise RuntimeError("the model choked")
        return real(texts)

    monkeypatch.setattr(embedder, "embed_texts", flaky)


def test_a_failed_document_is_tried_again_and_its_failure_kept(semantic_on, monkeypatch) -> None:
    story = _doc(1, STORY, simhash=FAR[0])
    bad = _doc(2, REWRITTEN, simhash=FAR[1])
    _failing(monkeypatch, prefix=REWRITTEN[:20])
    assert semantic.embeddings_compute(document_ids=[story.pk, bad.pk]).created == {
        "covered": 1,
        "error": 1,
    }
    monkeypatch.undo()  # the model works again
    again = semantic.embeddings_compute(document_ids=[story.pk, bad.pk])
    assert again.created == {"covered": 1} and again.pairs_created == 1
    rows = list(Embedding.objects.filter(document=bad).order_by("attempt"))
    assert [(r.attempt, r.status) for r in rows] == [(1, "error"), (2, "covered")]
    assert rows[0].message == "RuntimeError: the model choked"
    assert Embedding.objects.get(document=story).attempt == 1
    # Done: a later run adds nothing.
    assert semantic.embeddings_compute(document_ids=[bad.pk]).created == {}


def test_tries_stop_after_embedding_attempts(semantic_on, monkeypatch, settings) -> None:
    settings.EMBEDDING_ATTEMPTS = 2
    bad = _doc(1, "POISON " + STORY, simhash=FAR[0])
    _failing(monkeypatch)
    for _ in range(3):
        semantic.embeddings_compute(document_ids=[bad.pk])
    rows = Embedding.objects.filter(document=bad).order_by("attempt")
    assert [(r.attempt, r.status) for r in rows] == [(1, "error"), (2, "error")]
    monkeypatch.undo()
    assert semantic.embeddings_compute(document_ids=[bad.pk]).created == {}


def test_the_backfill_hands_on_failed_documents_until_their_tries_are_used(
    semantic_on, committed, monkeypatch, settings
) -> None:
    settings.EMBEDDING_ATTEMPTS = 2
    a = _doc(1, "POISON " + STORY, simhash=FAR[0])
    b = _doc(2, REWRITTEN, simhash=FAR[1])
    _failing(monkeypatch)
    out = io.StringIO()
    with committed():
        call_command("embeddings", "--backfill", stdout=out)
    assert "handed 2 documents" in out.getvalue()
    with committed():
        call_command("embeddings", "--backfill", stdout=out)
    assert "handed 1 documents" in out.getvalue()  # a's second try
    out = io.StringIO()
    with committed():
        call_command("embeddings", "--backfill", stdout=out)
    assert "handed 0 documents" in out.getvalue()  # a used its two tries
    lines = out.getvalue().splitlines()
    assert "covered: 1" in lines and "error: 1" in lines
    assert "failed attempts: 2 rows; 1 documents gave up after EMBEDDING_ATTEMPTS=2 tries" in lines
    assert Embedding.objects.filter(document=a, status="error").count() == 2
    assert Embedding.objects.get(document=b).status == "covered"
