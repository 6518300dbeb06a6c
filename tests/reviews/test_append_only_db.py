"""Labels and decisions are append-only in PostgreSQL itself (raw SQL, not the ORM):
triggers refuse UPDATE, DELETE and TRUNCATE even to the tables' owner, and the
application's role (`db_app_role`) has no privilege that could get past them."""

from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from ingest.models import Site, SitePriorityChange
from reviews.decisions import group_splits
from reviews.labels import labelling
from reviews.models import Adjudication, Decision, Label
from tests import factories
from tests.factories import TEXT, find, group_of, pair_of, reviewed_document

pytestmark = pytest.mark.postgres


def _label(pair, editor) -> Label:
    return labelling.label_record(
        pair=pair,
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="same body",
        region="body",
    )


def _decision(editor) -> Decision:
    a = reviewed_document(url="https://d.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://d.example.com/b", text=TEXT + " two", flips=1)
    find(a, b)
    group = group_of(a)
    assert group is not None
    return group_splits.group_representative_set(
        group=group,
        document_id=b.pk,
        editor=editor,
        reason_code="editorial",
        reason="b is the original",
        expected_version=group.version,
    )


def _refused(sql: str, params: list[Any] | None = None) -> str:
    """Run raw SQL on the owner's connection; return the error PostgreSQL raised."""
    with pytest.raises(DatabaseError) as info, transaction.atomic(), connection.cursor() as c:
        c.execute(sql, params)
    return str(info.value)


# --- triggers: even the owner is refused ------------------------------------------


@pytest.mark.django_db
def test_the_owner_cannot_update_or_delete_a_label(pair, editor) -> None:
    label = _label(pair, editor)
    assert "append-only" in _refused(
        "UPDATE reviews_label SET verdict = 'distinct' WHERE id = %s", [label.pk]
    )
    assert "append-only" in _refused("UPDATE reviews_label SET reason = 'edited'")
    assert "append-only" in _refused("DELETE FROM reviews_label WHERE id = %s", [label.pk])
    assert "append-only" in _refused("DELETE FROM reviews_label")
    label.refresh_from_db()
    assert (label.verdict, label.reason) == ("duplicate", "same body")


@pytest.mark.django_db
def test_superseding_is_the_one_update_and_it_happens_once(pair, editor, other_editor) -> None:
    first = _label(pair, editor)
    second = _label(pair, editor)  # the desk supersedes the first: allowed
    first.refresh_from_db()
    assert first.superseded_by_id == second.pk
    third = _label(pair, other_editor)
    assert "append-only" in _refused(
        "UPDATE reviews_label SET superseded_by_id = %s WHERE id = %s", [third.pk, first.pk]
    )
    assert "append-only" in _refused(
        "UPDATE reviews_label SET superseded_by_id = %s, reason = 'x' WHERE id = %s",
        [first.pk, third.pk],
    )


@pytest.mark.django_db(transaction=True)  # committed rows: no pending FK checks
@pytest.mark.parametrize(
    "sql",
    [
        "TRUNCATE reviews_label",
        "TRUNCATE reviews_label CASCADE",
        "TRUNCATE reviews_decision CASCADE",
        "TRUNCATE ingest_candidategroup CASCADE",  # reaches the decisions by cascade
        "TRUNCATE ingest_siteprioritychange",
        "TRUNCATE reviews_adjudication",
    ],
)
def test_truncate_is_refused_even_by_cascade(pair, editor, sql: str) -> None:
    _label(pair, editor)
    _decision(editor)
    assert "TRUNCATE refused" in _refused(sql)
    assert Label.objects.count() == 1
    assert Decision.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_truncate_of_the_pairs_no_longer_reaches_the_labels(pair, editor) -> None:
    """Since reviews 0015 no foreign key joins the coordinator's tables to the pairs
    (dedup_site/distribution.py): a TRUNCATE ... CASCADE of the pairs stops at their
    table, and the labels stay. The application's role cannot truncate or delete pairs
    (their permanent rule, tests/reviews/test_permanence_db.py); the owner's migrations
    are not bound by it, as before for pairs without labels."""
    _label(pair, editor)
    with transaction.atomic():
        with connection.cursor() as c:
            c.execute("TRUNCATE ingest_candidatepair CASCADE")
        assert Label.objects.count() == 1
        transaction.set_rollback(True)
    assert Label.objects.get().pair == pair


@pytest.mark.django_db
def test_the_owner_cannot_update_delete_or_truncate_a_decision(editor) -> None:
    decision = _decision(editor)
    assert "append-only" in _refused(
        "UPDATE reviews_decision SET reason = 'rewritten' WHERE id = %s", [decision.pk]
    )
    assert "append-only" in _refused("DELETE FROM reviews_decision")
    assert Decision.objects.get().reason == "b is the original"


@pytest.mark.django_db
def test_the_owner_cannot_update_or_delete_an_adjudication(pair, editor, other_editor) -> None:
    adjudicator = factories.user_create(username="ada", role="adjudicator")
    labelling.label_record(
        pair=pair,
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="a",
        region="body",
    )
    labelling.label_record(
        pair=pair,
        editor=other_editor,
        verdict="distinct",
        reason_code="different_item",
        reason="b",
        region="body",
    )
    adjudication = labelling.pair_adjudicate(
        pair=pair, adjudicator=adjudicator, verdict="duplicate", reason_code="same_text", reason="c"
    )
    assert "append-only" in _refused(
        "UPDATE reviews_adjudication SET verdict = 'distinct' WHERE id = %s", [adjudication.pk]
    )
    assert "append-only" in _refused("DELETE FROM reviews_adjudication")
    assert Adjudication.objects.get().verdict == "duplicate"


# --- the application's role -------------------------------------------------------


def _app_refused(conn: psycopg.Connection, sql: str, params: list[object] | None = None) -> str:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql, params)
    return str(info.value)


def test_the_app_role_cannot_change_or_unprotect_labels(app_role_conn, editor) -> None:
    a = reviewed_document(url="https://r.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://r.example.com/b", text=TEXT + " two", flips=1)
    find(a, b)
    label = _label(pair_of(a, b), editor)
    conn = app_role_conn
    assert conn.execute("SELECT current_user").fetchone() == (settings.DATABASE_APP_ROLE,)
    # What the desk does works: read, append, supersede.
    assert conn.execute("SELECT count(*) FROM reviews_label").fetchone() == (1,)
    newer = _label(pair_of(a, b), editor)  # through the ORM, as owner
    with conn.transaction():  # one current label per editor and documents: supersede
        (appended,) = conn.execute(
            "INSERT INTO reviews_label (pair_id, editor_id, verdict, reason_code, reason,"
            " region, purpose, method_key, extractor_version, retraction, created_at)"
            " SELECT pair_id, editor_id, 'distinct', reason_code, 'app insert', region,"
            " purpose, method_key, extractor_version, false, now() FROM reviews_label"
            " WHERE id = %s RETURNING id",
            [newer.pk],
        ).fetchone()
        conn.execute(
            "UPDATE reviews_label SET superseded_by_id = %s WHERE id = %s", [appended, newer.pk]
        )
    # Everything else is refused: by privileges first, by the triggers behind them.
    assert "permission denied" in _app_refused(
        conn, "UPDATE reviews_label SET verdict = 'distinct' WHERE id = %s", [label.pk]
    )
    assert "permission denied" in _app_refused(conn, "DELETE FROM reviews_label")
    assert "permission denied" in _app_refused(conn, "TRUNCATE reviews_label")
    assert "permission denied" in _app_refused(conn, "TRUNCATE ingest_candidatepair CASCADE")
    assert "owner" in _app_refused(conn, "ALTER TABLE reviews_label DISABLE TRIGGER ALL")
    assert "owner" in _app_refused(conn, "DROP TRIGGER reviews_label_append_only ON reviews_label")
    assert "permission denied" in _app_refused(conn, "SET session_replication_role = replica")
    # The one column it may update still goes through the trigger's rule.
    assert "append-only" in _app_refused(
        conn,
        "UPDATE reviews_label SET superseded_by_id = %s WHERE id = %s",
        [newer.pk, label.pk],  # already superseded by `newer`
    )
    assert Label.objects.count() == 3
    label.refresh_from_db()
    assert label.verdict == "duplicate"


def test_the_app_role_cannot_change_decisions_or_site_priority_records(
    app_role_conn, editor
) -> None:
    _decision(editor)
    site = Site.objects.create(host="p.example.com", priority=1)
    SitePriorityChange.objects.create(
        site=site, priority_before=0, priority_after=1, actor="person:editor", reason="x"
    )
    conn = app_role_conn
    for table in ("reviews_decision", "ingest_siteprioritychange"):
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (1,)
        assert "permission denied" in _app_refused(conn, f"UPDATE {table} SET actor = 'x'")
        assert "permission denied" in _app_refused(conn, f"DELETE FROM {table}")
        assert "permission denied" in _app_refused(conn, f"TRUNCATE {table}")
        assert "owner" in _app_refused(conn, f"ALTER TABLE {table} DISABLE TRIGGER ALL")
    # It owns nothing and cannot create tables or touch the migration history.
    assert "permission denied" in _app_refused(conn, "CREATE TABLE app_owned (id int)")
    assert "permission denied" in _app_refused(conn, "DELETE FROM django_migrations")
    assert Decision.objects.count() == 1


def test_tables_created_after_the_grant_are_usable_by_the_app_role(app_role_conn) -> None:
    with connection.cursor() as cursor:  # as the owner, like a later migration
        cursor.execute("CREATE TABLE later_table (id serial PRIMARY KEY, v text)")
    conn = app_role_conn
    conn.execute("INSERT INTO later_table (v) VALUES ('x')")
    assert conn.execute("SELECT v FROM later_table").fetchone() == ("x",)
    assert "owner" in _app_refused(conn, "ALTER TABLE later_table DISABLE TRIGGER ALL")
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE later_table")


@pytest.mark.django_db
def test_the_role_must_not_be_a_superuser_or_the_owner() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="running migrations"):
        call_command("db_app_role", "--role", connection.get_connection_params()["user"])
