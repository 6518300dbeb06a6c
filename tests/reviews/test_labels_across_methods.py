"""A label is a judgment about two documents, not about one method's pair row: after a
method switch (or when another channel nominates the same two documents) the earlier
labels count for the new pairs in the queue, in calibration and in exports, shown with
the method they were given under; a text change since makes them stale as before."""

from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from ingest.models import CandidatePair, FingerprintMethod
from reviews.calibration import sweeps
from reviews.labels import exports, labelling
from reviews.models import Label
from reviews.operations import method_upgrades
from reviews.queue import claiming, pair_queue, queue_counts, queue_tally
from reviews.queue.queue_filters import QueueFilters
from tests import factories
from tests.ingest.test_method_upgrade import ACTIVE, NEW, corpus, ingest

__all__ = ["corpus"]  # the fixture, imported for its name


def _label(pair: CandidatePair, editor, verdict: str = "duplicate") -> Label:
    return labelling.label_record(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code="same_text" if verdict != "distinct" else "different_item",
        reason="judged on the two documents",
        region="body",
    )


def _queued(method: FingerprintMethod) -> list[CandidatePair]:
    return list(
        CandidatePair.objects.filter(method=method, below_floor=False, exact=False).order_by("id")
    )


def _unlabelled_count(method: str) -> int:
    filters = QueueFilters(method=method, kind="pair", status="unlabeled")
    return queue_counts.queue_counts(filters=filters)["kind"]["pair"]


@pytest.mark.django_db
def test_labels_count_for_the_new_methods_pairs_after_a_switch(corpus, committed, client) -> None:
    editor = factories.user_create(username="ed", role="editor")
    other = factories.user_create(username="olga", role="editor")
    old = FingerprintMethod.objects.get(key=ACTIVE)
    call_command("refingerprint", "--method", NEW, "--no-progress")
    labelled = _queued(old)[:8]
    assert len(labelled) >= 4
    for i, p in enumerate(labelled):
        _label(p, editor, "distinct" if i % 3 == 2 else "duplicate")
    _label(labelled[0], other, "duplicate")
    subjects = {(p.a_id, p.b_id) for p in labelled}
    before = {(r.a, r.b): r.verdict for r in sweeps.labeled_pairs(method=ACTIVE)}

    with committed():  # the switch's candidates run is enqueued on commit (eager here)
        method_upgrades.method_switch(key=NEW, actor="person:admin", reason="nfkc")
    new = FingerprintMethod.objects.get(key=NEW)
    twins = {p.id: (p.a_id, p.b_id) for p in _queued(new) if (p.a_id, p.b_id) in subjects}
    assert len(twins) >= 3  # the new method nominated most of the labelled documents again
    # Nothing was copied into new label rows: the labels stay on the pairs they were
    # given on, with the method they were given under.
    assert Label.objects.count() == len(labelled) + 1
    assert set(Label.objects.values_list("method_key", flat=True)) == {ACTIVE}

    # The queue: the new method's pairs of labelled documents are labelled.
    rows = pair_queue.queue_pairs(filters=QueueFilters(method=NEW, status="all"))
    status = {p.id: p.is_labeled for p in rows}  # type: ignore[attr-defined]
    assert all(status[pk] for pk in twins)
    assert not any(v for pk, v in status.items() if pk not in twins)
    unlabelled = pair_queue.queue_pairs(filters=QueueFilters(method=NEW))
    assert not set(twins) & set(unlabelled.values_list("pk", flat=True))
    assert _unlabelled_count(NEW) == len(_queued(new)) - len(twins)
    # Next never hands the editor a pair of documents they already labelled.
    claim = claiming.claim_next(editor=editor, filters=QueueFilters(method=NEW, kind="pair"))
    assert claim is None or claim.pair_id not in twins

    # Calibration: the same labels, with the new method's distances.
    after = {(r.a, r.b): r for r in sweeps.labeled_pairs(method=NEW)}
    assert set(after) == set(twins.values())
    assert all(after[s].verdict == before[s] for s in after)
    assert {r.pair_id for r in after.values()} == set(twins)
    assert {r.method for r in after.values()} == {NEW}

    # Exports under the new method carry the labels with the new pairs' facts.
    rows_out = list(exports.label_rows(method=NEW))
    assert {(r["a_id"], r["b_id"]) for r in rows_out} == set(twins.values())
    assert {r["method"] for r in rows_out} == {NEW}

    # The pair page of a new pair shows the label with the method it was given under.
    pk, (a, b) = next(iter(twins.items()))
    given_on = next(p for p in labelled if (p.a_id, p.b_id) == (a, b))
    client.force_login(editor)
    page = client.get(f"/review/pairs/{pk}/").content.decode()
    assert ACTIVE in page and f"/review/pairs/{given_on.id}/" in page
    assert "given under" in page

    # A text change since makes the label stale, as it does on the pair it was given on.
    later = datetime(2026, 5, 8, 12, tzinfo=UTC)
    b_url = CandidatePair.objects.get(id=pk).b.url
    ingest(committed, [(b_url, factories.article_text(9999, words=160))], when=later)
    stale = pair_queue.queue_pairs(filters=QueueFilters(method=NEW, status="stale"))
    assert pk in set(stale.values_list("id", flat=True))
    stale_old = pair_queue.queue_pairs(filters=QueueFilters(method=ACTIVE, status="stale"))
    assert given_on.id in set(stale_old.values_list("id", flat=True))


@pytest.mark.django_db
def test_a_later_pair_of_labelled_documents_counts_as_labelled(corpus) -> None:
    """Another channel (here: a pair row made after the label) nominating two documents
    already labelled under another method gets their label at the next queue read."""
    editor = factories.user_create(username="ed", role="editor")
    old = FingerprintMethod.objects.get(key=ACTIVE)
    first = _queued(old)[0]
    _label(first, editor, "duplicate")
    queue_tally.queue_sync()
    other = FingerprintMethod.objects.create(key="simhash64-test-v9", params={})
    fields = {
        f.attname: getattr(first, f.attname)
        for f in CandidatePair._meta.concrete_fields
        if f.attname not in ("id", "method_id")
    }
    second = CandidatePair.objects.create(**{**fields, "method_id": other.pk})
    rows = pair_queue.queue_pairs(filters=QueueFilters(status="all"))
    assert rows.get(id=second.id).is_labeled  # type: ignore[attr-defined]
    assert _unlabelled_count(other.key) == 0
    # Withdrawing the label clears it on both pairs.
    labelling.label_undo(editor=editor, pair=second)
    rows = pair_queue.queue_pairs(filters=QueueFilters(status="all"))
    assert not rows.get(id=second.id).is_labeled  # type: ignore[attr-defined]
    assert not rows.get(id=first.id).is_labeled  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_agreement_compares_labels_given_on_two_methods_pairs_of_one_subject(corpus) -> None:
    from reviews.labels.agreement import agreement_reports

    ed = factories.user_create(username="ed", role="editor")
    olga = factories.user_create(username="olga", role="editor")
    old = FingerprintMethod.objects.get(key=ACTIVE)
    first = _queued(old)[0]
    other = FingerprintMethod.objects.create(key="simhash64-test-v9", params={})
    fields = {
        f.attname: getattr(first, f.attname)
        for f in CandidatePair._meta.concrete_fields
        if f.attname not in ("id", "method_id")
    }
    second = CandidatePair.objects.create(**{**fields, "method_id": other.pk})
    _label(first, ed, "duplicate")
    _label(second, olga, "distinct")
    report = agreement_reports(doc_types=[])[0]
    assert report.pairs == 1 and report.labels == 2
    assert [(k.a, k.b, k.pairs) for k in report.kappas] == [("ed", "olga", 1)]
