"""A process's approximate index on disk and in time: snapshots (written, read back by
a cold process, then caught up), the catch-up budget (an incomplete index nominates
nothing; the batch is done again later), the snapshot task and command, and the
lookback window applied before the top-k. Real PostgreSQL and usearch; vectors of a
test space except where the MiniLM model is named."""

import io
import logging
from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.management import call_command

from ingest import semantic, tasks, vectors
from ingest.core import ann
from ingest.models import CandidatePair, Embedding
from tests import factories
from tests.ingest.test_semantic import FAR, REWRITTEN, STORY, _doc

pytestmark = [pytest.mark.django_db, pytest.mark.semantic]

MODEL = "test-space-8"
SPACE = vectors.Space(MODEL)


@pytest.fixture(autouse=True)
def index_dir(settings, tmp_path):
    settings.EMBEDDING_INDEX_DIR = tmp_path
    vectors.process_indexes_forget()
    yield tmp_path
    vectors.process_indexes_forget()


def _unit(seed: int, dims: int = 8) -> list[float]:
    v = np.random.default_rng(seed).normal(size=dims)
    return (v / np.linalg.norm(v)).tolist()


def _row(n: int, vector: list[float] | None = None, fetched_at: datetime | None = None):
    doc = factories.indexed_document(
        url=f"https://v{n}.example.com/", text=f"text {n}", simhash=n, fetched_at=fetched_at
    )
    return factories.embedding_row(doc, vector=vector or _unit(n), model=MODEL)


def _keys(index: vectors.ProcessIndex) -> set[int]:
    return {int(k) for k in np.asarray(index.index.keys)}


def test_a_cold_process_starts_from_the_snapshot_then_catches_up(index_dir) -> None:
    rows = [_row(n) for n in range(1, 6)]
    # Id 3 handed out but not committed when the first process reads: a gap.
    missing = rows[2]
    missing_pk, missing_doc = missing.id, missing.document
    missing.delete()
    first = vectors.ProcessIndex(SPACE)
    # Ids below this test's rows (other tests' rolled-back rows) are not its gaps.
    first.catchup = ann.CatchUp(watermark=rows[0].id - 1)
    first.catch_up()
    assert first.catchup.wanted() == (rows[-1].id, [missing_pk])
    assert first.snapshot_save() > 0
    assert (index_dir / ann.snapshot_name(SPACE.parts())).exists()
    # After the snapshot: the late row commits under the watermark, two rows above it.
    late = factories.embedding_row(missing_doc, vector=_unit(3), model=MODEL)
    Embedding.objects.filter(id=late.id).update(id=missing_pk)
    added = [_row(n) for n in (6, 7)]
    cold = vectors.ProcessIndex(SPACE)
    assert cold.snapshot_load()
    assert len(cold) == 4 and cold.catchup.wanted() == (rows[-1].id, [missing_pk])
    assert not cold.complete
    assert cold.catch_up() == 3  # the late row and the two new ones, nothing else
    assert cold.complete
    # (A deleted row's key fields read None: its document is missing_doc.)
    everyone = {r.document_id for r in [*rows, *added] if r is not missing} | {missing_doc.pk}
    assert _keys(cold) == everyone
    assert set(cold.fetched_at) == everyone
    # The same answers as a process built from PostgreSQL alone.
    built = vectors.ProcessIndex(SPACE)
    built.catch_up()
    q = np.asarray(_unit(6), dtype=np.float32)
    assert [n.document_id for n in cold.nearest(q, 3)] == [
        n.document_id for n in built.nearest(q, 3)
    ]


def test_a_snapshot_of_another_space_or_a_corrupt_one_is_ignored(index_dir, caplog) -> None:
    for n in range(1, 4):
        _row(n)
    other = vectors.ProcessIndex(vectors.Space("test-other-8"))
    factories.embedding_row(
        factories.indexed_document(url="https://o.example.com/", text="o", simhash=9),
        vector=_unit(9),
        model="test-other-8",
    )
    other.catch_up()
    other.snapshot_save()
    ours = index_dir / ann.snapshot_name(SPACE.parts())
    other.snapshot_path().rename(ours)  # another space's file under our name
    with caplog.at_level(logging.WARNING, logger="ingest.vectors"):
        index = vectors.process_index(SPACE)
    assert "another space" in caplog.text
    assert len(index) == 3 and index.complete  # built from PostgreSQL
    index.snapshot_save()
    ours.write_bytes(ours.read_bytes()[:-100])  # truncated
    vectors.process_indexes_forget()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ingest.vectors"):
        again = vectors.process_index(SPACE)
    assert "ignoring the index snapshot" in caplog.text
    assert len(again) == 3 and again.saved_state is None


def test_a_budgeted_catch_up_goes_on_where_it_stopped(monkeypatch) -> None:
    monkeypatch.setattr(vectors, "READ_CHUNK", 2)
    rows = [_row(n) for n in range(1, 6)]
    index = vectors.ProcessIndex(SPACE)
    assert index.catch_up(seconds=0) == 2 and not index.complete
    assert index.catch_up(seconds=0) == 2 and not index.complete
    assert index.catch_up(seconds=0) == 1 and index.complete
    assert _keys(index) == {r.document_id for r in rows}


def test_nomination_waits_for_a_complete_index_and_is_done_later(
    semantic_on, settings, monkeypatch
) -> None:
    settings.EMBEDDING_CATCHUP_SECONDS = 0
    monkeypatch.setattr(vectors, "READ_CHUNK", 1)  # one row per budgeted catch-up
    story = _doc(1, STORY, simhash=FAR[0])
    rewritten = _doc(2, REWRITTEN, simhash=FAR[1])
    ids = [story.pk, rewritten.pk]
    first = semantic.embeddings_compute(document_ids=ids)
    assert first.created == {"covered": 2} and first.deferred
    assert not CandidatePair.objects.exists()  # nothing from a partial index
    again: list[tuple[object, ...]] = []
    monkeypatch.setattr(
        tasks.embeddings_compute, "apply_async", lambda *a, **kw: again.append((a, kw))
    )
    result = tasks.embeddings_compute(ids)  # the task: stores nothing twice, defers again
    assert result["deferred"] and result["created"] == {}
    assert again == [(((ids,),), {"countdown": settings.EMBEDDING_DEFER_SECONDS})]
    done = semantic.embeddings_compute(document_ids=ids)
    assert not done.deferred and done.created == {} and done.pairs_created == 1
    assert CandidatePair.objects.filter(a=story, b=rewritten).exists()
    assert Embedding.objects.count() == 2


def test_the_snapshot_task_and_command_write_what_a_cold_process_loads(
    semantic_on, settings, monkeypatch, index_dir
) -> None:
    docs = [_doc(i, factories.article_text(i, words=40), simhash=FAR[i % 4]) for i in (1, 2, 3)]
    semantic.embeddings_compute(document_ids=[d.pk for d in docs])
    vectors.process_indexes_forget()
    # A cold build over several runs: each run reads one chunk and writes what it has.
    settings.EMBEDDING_CATCHUP_SECONDS = 0
    monkeypatch.setattr(vectors, "READ_CHUNK", 2)
    first = tasks.embeddings_snapshot()
    assert first is not None and (first["vectors"], first["complete"]) == (2, False)
    vectors.process_indexes_forget()  # another worker process runs the next one
    third = tasks.embeddings_snapshot()
    assert third is not None and third["vectors"] == 3 and third["complete"]
    monkeypatch.setattr(vectors, "READ_CHUNK", 5000)
    vectors.process_indexes_forget()
    out = io.StringIO()
    call_command("embeddings", "--snapshot", stdout=out)
    assert "snapshot: 3 vectors" in out.getvalue()
    vectors.process_indexes_forget()
    where = vectors.space()
    assert where is not None
    loaded = vectors.process_index(where)
    assert loaded.saved_state is not None and len(loaded) == 3  # read from the file


def test_neighbours_inside_the_window_are_found_behind_many_outside_it(settings) -> None:
    """The nearest documents were fetched long before; the window's own nearest ones
    lie farther: they are the answer, not nothing."""
    settings.CANDIDATE_LOOKBACK_DAYS = 7
    query = np.asarray(_unit(1000), dtype=np.float32)
    rng = np.random.default_rng(8)
    old = datetime(2026, 1, 1, tzinfo=UTC)
    now = datetime(2026, 5, 1, tzinfo=UTC)
    for n in range(60):  # near the query, outside the window
        v = query + rng.normal(scale=0.05, size=8)
        _row(n + 1, v.tolist(), fetched_at=old)
    inside = [_row(100 + n, _unit(100 + n), fetched_at=now) for n in range(6)]
    index = vectors.process_index(SPACE)
    found = index.nearest(query, 3, around=now)
    stored = {r.document_id: np.frombuffer(bytes(r.vector), np.float16) for r in inside}
    exact = sorted(stored, key=lambda d: -float(stored[d].astype(np.float32) @ query))[:3]
    assert [n.document_id for n in found] == exact


def test_a_snapshot_ahead_of_the_database_or_from_another_one_is_ignored(index_dir, caplog) -> None:
    rows = [_row(n) for n in range(1, 5)]
    first = vectors.ProcessIndex(SPACE)
    first.catch_up()
    first.snapshot_save()
    # The database goes back to an older state (a restored backup): the last rows are gone.
    Embedding.objects.filter(id__in=[r.id for r in rows[2:]]).delete()
    with caplog.at_level(logging.WARNING, logger="ingest.vectors"):
        cold = vectors.ProcessIndex(SPACE)
        assert not cold.snapshot_load()
    assert "ahead of the embedding table" in caplog.text
    # Another database whose row at the watermark holds another document's vector.
    caplog.clear()
    stranger = _row(50)
    Embedding.objects.filter(id=stranger.id).update(id=rows[-1].id)
    with caplog.at_level(logging.WARNING, logger="ingest.vectors"):
        other = vectors.ProcessIndex(SPACE)
        assert not other.snapshot_load()
    assert "written elsewhere" in caplog.text
    other.catch_up()
    assert _keys(other) == {rows[0].document_id, rows[1].document_id, stranger.document_id}
