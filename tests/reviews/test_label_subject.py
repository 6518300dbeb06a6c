"""One current label per editor and subject (the unordered pair of documents), against a
real PostgreSQL: concurrent saves, the database constraint, and the superseding rule of
the label trigger as the application's role."""

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from ingest.models import CandidatePair, FingerprintMethod
from reviews.labels import labelling
from reviews.models import Label, label_subject
from tests import factories
from tests.factories import TEXT, find, pair_of, reviewed_document

pytestmark = pytest.mark.postgres


def _label(pair, editor, verdict: str = "duplicate") -> Label:
    return labelling.label_record(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code="same_text",
        reason="same body",
        region="body",
    )


def _current(editor, pair) -> list[Label]:
    subject = label_subject(pair.a_id, pair.b_id)
    return list(Label.objects.of_subject(subject).filter(editor=editor, superseded_by=None))


def _two_pairs_of_one_subject():
    """A pair of two documents, and a pair of the same documents under another method."""
    a = reviewed_document(url="https://s.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://s.example.com/b", text=TEXT + " two", flips=1)
    find(a, b)
    first = pair_of(a, b)
    other = FingerprintMethod.objects.create(key="simhash64-test-v9", params={})
    fields = {
        f.attname: getattr(first, f.attname)
        for f in CandidatePair._meta.concrete_fields
        if f.attname not in ("id", "method_id")
    }
    second = CandidatePair.objects.create(**{**fields, "method_id": other.pk})
    return first, second


@pytest.mark.django_db
def test_a_label_on_another_methods_pair_of_the_same_documents_supersedes() -> None:
    editor = factories.user_create(username="editor", role="editor")
    first, second = _two_pairs_of_one_subject()
    old = _label(first, editor)
    new = _label(second, editor, "distinct")
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk
    assert old.subject == new.subject == label_subject(first.a_id, first.b_id)
    assert _current(editor, first) == [new]
    # Both pairs of the two documents count the one current label (the subject's).
    first.review_state.refresh_from_db()
    second.review_state.refresh_from_db()
    assert first.review_state.labels == second.review_state.labels == 1
    assert first.review_state.distinct_labels == second.review_state.distinct_labels == 1
    # Other editors keep their own current label.
    other = factories.user_create(username="oscar", role="editor")
    theirs = _label(first, other)
    assert {x.pk for x in Label.objects.filter(superseded_by=None)} == {new.pk, theirs.pk}


@pytest.mark.django_db(transaction=True)
def test_the_database_refuses_a_second_current_label_at_commit() -> None:
    editor = factories.user_create(username="editor", role="editor")
    first, second = _two_pairs_of_one_subject()
    _label(first, editor)
    with (
        pytest.raises(IntegrityError, match="label_one_current_per_subject"),
        transaction.atomic(),
    ):
        Label.objects.create(
            pair=second,
            editor=editor,
            verdict="duplicate",
            reason_code="same_text",
            reason="no supersede",
            region="body",
            method_key="m",
            extractor_version="e",
        )
    assert Label.objects.count() == 1


@pytest.mark.django_db
def test_the_database_copies_the_subject_from_the_pair() -> None:
    editor = factories.user_create(username="editor", role="editor")
    first, _ = _two_pairs_of_one_subject()
    label = _label(first, editor)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO reviews_label (pair_id, editor_id, verdict, reason_code, reason,"
            " region, purpose, method_key, extractor_version, retraction, created_at,"
            " doc_low, doc_high) SELECT pair_id, editor_id, verdict, reason_code, 'raw',"
            " region, purpose, method_key, extractor_version, false, now(), 1, 2"
            " FROM reviews_label WHERE id = %s RETURNING doc_low, doc_high",
            [label.pk],
        )
        assert cursor.fetchone() == (first.a_id, first.b_id)
        transaction.set_rollback(True)


def _supersede(conn: psycopg.Connection, old: Label | int, by: Label | int) -> None:
    ids = [x if isinstance(x, int) else x.pk for x in (by, old)]
    conn.execute("UPDATE reviews_label SET superseded_by_id = %s WHERE id = %s", ids)


def _insert(conn: psycopg.Connection, like: Label, pair: CandidatePair, editor_id: int) -> int:
    """A current label inserted by the application's role, without superseding (the
    deferred constraint is checked at commit: the caller supersedes in the transaction)."""
    row = conn.execute(
        "INSERT INTO reviews_label (pair_id, editor_id, verdict, reason_code, reason, region,"
        " purpose, method_key, extractor_version, retraction, created_at)"
        " SELECT %s, %s, verdict, reason_code, 'app', region, purpose, method_key,"
        " extractor_version, false, now() FROM reviews_label WHERE id = %s RETURNING id",
        [pair.id, editor_id, like.pk],
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_the_app_role_supersedes_only_by_a_newer_label_of_the_editor_on_the_documents(
    app_role_conn,
) -> None:
    editor = factories.user_create(username="editor", role="editor")
    other = factories.user_create(username="oscar", role="editor")
    first, second = _two_pairs_of_one_subject()
    c = reviewed_document(url="https://s.example.com/c", text=factories.article_text(3))
    d = reviewed_document(url="https://s.example.com/d", text=factories.article_text(3), flips=1)
    find(c, d)
    elsewhere = pair_of(c, d)
    old = _label(first, editor)
    theirs = _label(first, other)
    not_same_documents = _label(elsewhere, editor)
    conn = app_role_conn
    for wrong in (old, theirs, not_same_documents):  # itself, another editor, another pair
        with pytest.raises(psycopg.Error, match="superseded_by refused"):
            _supersede(conn, old, wrong)
    with conn.transaction():
        newer = _insert(conn, old, second, editor.pk)  # the same documents, another method
        with pytest.raises(psycopg.Error, match="superseded_by refused"), conn.transaction():
            _supersede(conn, newer, old)  # an older label does not supersede
        _supersede(conn, old, newer)
    old.refresh_from_db()
    assert old.superseded_by_id == newer
    # Once superseded, it stays so.
    latest = _label(second, editor)
    assert Label.objects.get(pk=newer).superseded_by_id == latest.pk
    with pytest.raises(psycopg.Error, match="append-only"):
        _supersede(conn, old, latest)
    # Two current labels of one editor on one pair of documents: refused at commit.
    with pytest.raises(psycopg.errors.ExclusionViolation):
        _insert(conn, latest, first, editor.pk)
