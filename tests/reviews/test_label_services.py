"""Labels are append-only: relabel and undo supersede; disputes show."""

import pytest

from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import DoNotMatch
from reviews import rules
from reviews.labels import label_reads, labelling
from reviews.models import AppendOnlyError, Label
from reviews.pair import pair_reads
from reviews.queue import pair_queue
from reviews.queue.queue_filters import QueueFilters

pytestmark = pytest.mark.django_db


def _label(pair, editor, verdict="duplicate", **kw):
    data = {"reason_code": "same_text", "reason": "same body", "region": "body", **kw}
    return labelling.label_record(pair=pair, editor=editor, verdict=verdict, **data)


def test_a_label_is_stamped_with_method_and_extractor(pair, editor) -> None:
    label = _label(pair, editor)
    assert label.method_key == pair.method.key
    assert label.extractor_version == EXTRACTOR_VERSION
    assert label.purpose == "review"


def test_a_label_cannot_be_edited_or_deleted(pair, editor) -> None:
    label = _label(pair, editor)
    label.verdict = "distinct"
    with pytest.raises(AppendOnlyError):
        label.save()
    with pytest.raises(AppendOnlyError):
        label.delete()
    with pytest.raises(AppendOnlyError):
        Label.objects.filter(pk=label.pk).delete()
    with pytest.raises(AppendOnlyError):
        Label.objects.filter(pk=label.pk).update(reason="changed")
    assert Label.objects.get(pk=label.pk).verdict == "duplicate"


def test_a_reason_is_required(pair, editor) -> None:
    with pytest.raises(rules.ReviewError):
        _label(pair, editor, reason="  ")


def test_a_relabel_supersedes_the_previous_label(pair, editor) -> None:
    first = _label(pair, editor)
    second = _label(pair, editor, "near_duplicate")
    first.refresh_from_db()
    assert first.superseded_by == second
    assert list(label_reads.current_labels().filter(pair=pair)) == [second]
    assert Label.objects.filter(pair=pair).count() == 2


def test_undo_appends_a_retraction_and_the_pair_is_unlabeled_again(pair, editor) -> None:
    label = _label(pair, editor)
    assert not pair_queue.queue_pairs(filters=QueueFilters()).filter(id=pair.id)
    undone = labelling.label_undo(editor=editor)
    assert undone == label
    label.refresh_from_db()
    assert label.superseded_by is not None and label.superseded_by.retraction
    assert not label_reads.current_labels().filter(pair=pair).exists()
    assert pair_queue.queue_pairs(filters=QueueFilters(status="unlabeled")).get() == pair
    assert Label.objects.filter(pair=pair).count() == 2


def test_disagreeing_editors_make_the_pair_disputed(pair, editor, other_editor) -> None:
    _label(pair, editor, "duplicate")
    _label(pair, other_editor, "revision", reason_code="updated", reason="price changed")
    disputed = pair_queue.queue_pairs(filters=QueueFilters(status="disputed"))
    assert list(disputed) == [pair]
    view = pair_reads.pair_view(pair=pair, user=editor)
    assert view.disputed
    assert [x.editor for x in view.disagreeing] == [other_editor]


def test_agreeing_editors_do_not_dispute(pair, editor, other_editor) -> None:
    _label(pair, editor)
    _label(pair, other_editor)
    assert not pair_queue.queue_pairs(filters=QueueFilters(status="disputed")).exists()
    assert not pair_queue.queue_pairs(filters=QueueFilters()).exists()


def test_a_label_from_an_older_extractor_is_stale(pair, editor) -> None:
    Label.objects.create(
        pair=pair,
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="old",
        region="body",
        method_key=pair.method.key,
        extractor_version="trafilatura-0.0-old",
    )
    assert list(pair_queue.queue_pairs(filters=QueueFilters(status="stale"))) == [pair]


def test_a_distinct_label_records_do_not_match(pair, editor) -> None:
    _label(pair, editor, "distinct", reason_code="numbers_differ", reason="other price")
    dnm = DoNotMatch.objects.get()
    assert (dnm.a_id, dnm.b_id) == (pair.a_id, pair.b_id)
    assert dnm.source == "label" and dnm.actor == "person:editor"


def test_undoing_a_distinct_label_revokes_its_do_not_match(pair, editor) -> None:
    _label(pair, editor, "distinct")
    row = DoNotMatch.objects.get(a=pair.a, b=pair.b)
    assert row.revoked_at is None
    labelling.label_undo(editor=editor, pair=pair)
    row.refresh_from_db()
    assert row.revoked_at is not None
    assert row.revoked_by.startswith("label:")
    # Labelling it distinct again writes a constraint in force once more.
    _label(pair, editor, "distinct")
    assert DoNotMatch.objects.filter(a=pair.a, b=pair.b, revoked_at__isnull=True).count() == 1


def test_undo_keeps_the_constraint_while_another_editor_says_distinct(
    pair, editor, django_user_model
) -> None:
    from tests import factories

    other = factories.user_create(username="olga", role="editor")
    _label(pair, editor, "distinct")
    _label(pair, other, "distinct")
    labelling.label_undo(editor=editor, pair=pair)
    assert DoNotMatch.objects.filter(a=pair.a, b=pair.b, revoked_at__isnull=True).exists()
