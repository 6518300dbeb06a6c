"""Every table of both apps has a rule (dedup_site.permanence), and PostgreSQL holds the
application's role to it: raw SQL as that role, with the grants `db_app_role` gives and
with every grant (the triggers alone), tries each forbidden and each allowed statement."""

from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from dedup_site.permanence import OWN_TRIGGERS, RULES, Kind
from ingest.models import (
    ArchiveFile,
    BatchError,
    BoilerplateDrop,
    CrawlBatch,
    FingerprintMethod,
    MethodSwitch,
    MinHashSet,
    PassageCommon,
    PassageSet,
    PassageTemplate,
    Site,
    SitePriorityChange,
)
from reviews.decisions import group_splits
from reviews.labels import labelling
from reviews.models import CalibrationSample, Label, MergeProposal
from tests import factories
from tests.factories import TEXT, embedding_row, find, group_of, pair_of, reviewed_document

APPS = ("ingest", "reviews")


def _tables() -> dict[str, set[str]]:
    """Every table of both apps (their models' and the many-to-many tables Django makes
    for them) with its columns."""
    out: dict[str, set[str]] = {}
    for app in APPS:
        for model in apps.get_app_config(app).get_models(include_auto_created=True):
            out[model._meta.db_table] = {str(f.column) for f in model._meta.concrete_fields}
    return out


def test_every_table_of_both_apps_has_a_rule() -> None:
    tables = _tables()
    assert sorted(set(tables) - set(RULES)) == [], "tables without a rule in permanence.RULES"
    assert sorted(set(RULES) - set(tables)) == [], "rules for tables that do not exist"
    for table, rule in RULES.items():
        named = {*rule.mutable, *([rule.sealed_by] if rule.sealed_by else [])}
        assert named <= tables[table], f"{table}: no such columns {named - tables[table]}"
        if rule.kind == Kind.PERMANENT:
            assert rule.mutable and set(rule.mutable) < tables[table], table
        else:
            assert not rule.mutable and not rule.sealed_by, table
    # What the crawl gave and what is derived from it is never deleted.
    for table in (
        "ingest_document",
        "ingest_documentbody",
        "ingest_extraction",
        "ingest_fingerprint",
        "ingest_passageset",
        "ingest_indexentry",
        "ingest_batcherror",
        "ingest_donotmatch",
        "ingest_candidatepair",
        "reviews_label",
        "reviews_decision",
    ):
        assert RULES[table].guarded, table


# --- PostgreSQL -------------------------------------------------------------------------


def _trigger_rules() -> dict[str, list[str]]:
    """The arguments of each table's generic row trigger, as installed."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, t.tgargs
            FROM pg_trigger t
            JOIN pg_class c ON c.oid = t.tgrelid
            JOIN pg_proc p ON p.oid = t.tgfoid
            WHERE p.proname = 'dedup_permanent_row' AND (t.tgtype & 1) = 1
            """
        )
        rows = cursor.fetchall()
    return {name: bytes(args).decode().split("\x00")[:-1] for name, args in rows}


def _triggered(where: str) -> set[str]:
    """Tables with a BEFORE trigger of any function matching `where` (pg_trigger.tgtype
    bits: 1 row, 2 before, 4 insert, 8 delete, 16 update, 32 truncate)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
            f" WHERE NOT t.tgisinternal AND (t.tgtype & 2) = 2 AND {where}"
        )
        return {r[0] for r in cursor.fetchall()}


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_installed_triggers_are_the_rules() -> None:
    installed = _trigger_rules()
    guarded = _triggered("(t.tgtype & 1) = 1 AND (t.tgtype & 8) = 8 AND (t.tgtype & 16) = 16")
    truncate = _triggered("(t.tgtype & 1) = 0 AND (t.tgtype & 32) = 32")
    for table, rule in RULES.items():
        if not rule.guarded:
            assert table not in guarded, f"{table} is free but has a row trigger"
            continue
        assert table in guarded, f"{table}: no trigger refuses UPDATE and DELETE"
        assert table in truncate, f"{table}: no trigger refuses TRUNCATE"
        if table in OWN_TRIGGERS:
            continue
        bound = "all" if rule.owner_bound else "app"
        assert installed.get(table) == [bound, rule.kind, rule.sealed_by, *rule.mutable], table


@pytest.fixture
def every_table_filled(transactional_db, settings) -> None:
    """At least one row in every table a rule guards, made as the owner."""
    settings.PASSAGE_CHANNEL = False
    editor = factories.user_create(username="editor", role="editor")
    other = factories.user_create(username="oscar", role="editor")
    adjudicator = factories.user_create(username="ada", role="adjudicator")
    batch = CrawlBatch.objects.create(source="crawl.warc", format="warc")
    BatchError.objects.create(batch=batch, kind="truncated", offset=10, message="cut short")
    a = reviewed_document(url="https://p.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://p.example.com/b", text=TEXT + " two", flips=1)
    find(a, b)
    pair = pair_of(a, b)
    group = group_of(a)
    assert group is not None
    embedding_row(a)
    when = datetime(2026, 5, 1, tzinfo=UTC)
    PassageSet.objects.create(document=a, method=1, site_id=a.site_id, fetched_at=when, hashes=[1])
    MinHashSet.objects.create(
        document=a, method=1, fetched_at=when, bands=[1], signature=b"\x00\x00\x00\x01"
    )
    PassageTemplate.objects.create(method=1, site=a.site, hash=5, df=9)
    PassageCommon.objects.create(method=1, hash=5, df=900)
    BoilerplateDrop.objects.create(
        document=a, extractor_version="x", version="v", domain="example.com", learned_from=3
    )
    ArchiveFile.objects.create(
        path="2026-05/desk-20260501T000000-h-1-00000000.warc.gz", host="h", pid=1, process_started=1
    )
    method = FingerprintMethod.objects.get(key=settings.ACTIVE_METHOD)
    MethodSwitch.objects.create(action="switch", to_method=method, actor="rule:x", reason="r")
    site = Site.objects.get(pk=a.site_id)
    SitePriorityChange.objects.create(
        site=site, priority_before=0, priority_after=1, actor="person:editor", reason="r"
    )
    for who, verdict, code in (
        (editor, "distinct", "different_item"),
        (other, "duplicate", "same_text"),
    ):
        labelling.label_record(
            pair=pair, editor=who, verdict=verdict, reason_code=code, reason="x", region="body"
        )
    labelling.pair_adjudicate(
        pair=pair, adjudicator=adjudicator, verdict="duplicate", reason_code="same_text", reason="c"
    )
    CalibrationSample.objects.create(pair=pair, weight=2.0, seed=1, band="1-2")
    MergeProposal.objects.create(
        group=group,
        group_version=group.version,
        document_ids=[a.pk, b.pk],
        doc_type="article",
        rule="r",
        basis="near",
        method_key=method.key,
    )
    group_splits.group_representative_set(
        group=group,
        document_id=b.pk,
        editor=editor,
        reason_code="editorial",
        reason="b is the original",
        expected_version=group.version,
    )
    with connection.cursor() as cursor:
        for table, rule in RULES.items():
            if rule.guarded:
                cursor.execute(f"SELECT count(*) FROM {table}")
                assert cursor.fetchone()[0] > 0, f"no row in {table} to try statements on"


@pytest.fixture
def app_conn(every_table_filled, app_role_conn) -> psycopg.Connection:
    """The test database, every table filled, as the application's role."""
    conn = app_role_conn
    assert conn.execute("SELECT current_user").fetchone() == (settings.DATABASE_APP_ROLE,)
    return conn


@pytest.fixture
def app_conn_every_grant(app_conn) -> Iterator[psycopg.Connection]:
    """The same role granted every privilege on every table: only the triggers refuse."""
    with connection.cursor() as cursor:
        cursor.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {settings.DATABASE_APP_ROLE}")
    yield app_conn
    call_command("db_app_role", "--role", settings.DATABASE_APP_ROLE)


# Two values of each column type: an UPDATE sets the one the row does not hold.
VALUES = {
    "smallint": ("1", "2"),
    "integer": ("1", "2"),
    "bigint": ("1", "2"),
    "double precision": ("1.5", "2.5"),
    "real": ("1.5", "2.5"),
    "boolean": ("true", "false"),
    "character varying": ("'x'", "'y'"),
    "text": ("'x'", "'y'"),
    "jsonb": ("'{\"a\": 1}'::jsonb", "'{\"a\": 2}'::jsonb"),
    "bytea": ("'\\x00'::bytea", "'\\x01'::bytea"),
    "timestamp with time zone": ("'2001-01-01Z'::timestamptz", "'2002-01-01Z'::timestamptz"),
    "date": ("'2001-01-01'::date", "'2002-01-01'::date"),
    "ARRAY": ("'{1}'::bigint[]", "'{2}'::bigint[]"),
}


def _columns(table: str) -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_name = %s ORDER BY ordinal_position",
            [table],
        )
        return cursor.fetchall()


def _change(table: str, column: str, data_type: str) -> str:
    one, two = VALUES[data_type]
    c = f'"{column}"'
    return (
        f"UPDATE {table} SET {c} = CASE WHEN {c} IS NOT DISTINCT FROM {one}"
        f" THEN {two} ELSE {one} END WHERE ctid = (SELECT ctid FROM {table} LIMIT 1)"
    )


def _error(conn: psycopg.Connection, sql: str) -> str | None:
    """Run `sql` in a transaction rolled back afterwards; the error, or None."""
    try:
        with conn.transaction():
            conn.execute(sql)
            raise psycopg.Rollback()
    except psycopg.Error as e:
        return str(e)
    return None


def _guarded() -> list[str]:
    return [t for t, rule in RULES.items() if rule.guarded]


@pytest.mark.postgres
def test_with_its_grants_the_app_role_cannot_delete_truncate_or_rewrite_records(
    app_conn,
) -> None:
    wrong: list[str] = []
    for table in _guarded():
        for sql in (f"DELETE FROM {table}", f"TRUNCATE {table} CASCADE"):
            error = _error(app_conn, sql)
            if error is None or "permission denied" not in error:
                wrong.append(f"{sql}: {error or 'allowed'}")
        if RULES[table].kind == Kind.APPEND_ONLY:
            error = _error(app_conn, _change(table, *_columns(table)[0]))
            if error is None or "permission denied" not in error:
                wrong.append(f"UPDATE {table}: {error or 'allowed'}")
    assert wrong == []


@pytest.mark.postgres
def test_the_triggers_alone_refuse_delete_truncate_and_protected_columns(
    app_conn_every_grant,
) -> None:
    conn = app_conn_every_grant
    wrong: list[str] = []
    for table in _guarded():
        rule = RULES[table]
        for sql in (f"DELETE FROM {table}", f"TRUNCATE {table} CASCADE"):
            error = _error(conn, sql)
            if error is None or "refused" not in error:
                wrong.append(f"{sql}: {error or 'allowed'}")
        for column, data_type in _columns(table):
            if column in rule.mutable:
                continue
            sql = _change(table, column, data_type)
            error = _error(conn, sql)
            if error is None or "refused" not in error:
                wrong.append(f"{sql}: {error or 'allowed'}")
    assert wrong == []


@pytest.mark.postgres
def test_the_columns_that_legitimately_change_still_change(app_conn) -> None:
    wrong: list[str] = []
    for table, rule in RULES.items():
        if rule.kind != Kind.PERMANENT or table in OWN_TRIGGERS:
            continue
        types = dict(_columns(table))
        for column in rule.mutable:
            sql = _change(table, column, types[column])
            error = _error(app_conn, sql)
            if error is not None:
                wrong.append(f"{sql}: {error}")
    assert wrong == []


@pytest.mark.postgres
def test_a_revocation_is_set_once(app_conn) -> None:
    row = app_conn.execute("SELECT id FROM ingest_donotmatch WHERE revoked_at IS NULL").fetchone()
    assert row is not None
    app_conn.execute(
        "UPDATE ingest_donotmatch SET revoked_at = now(), revoked_by = 'decision:1' WHERE id = %s",
        row,
    )
    for sql in (
        "UPDATE ingest_donotmatch SET revoked_at = now() - interval '1 day' WHERE id = %s",
        "UPDATE ingest_donotmatch SET revoked_by = 'decision:2' WHERE id = %s",
        "UPDATE ingest_donotmatch SET revoked_at = NULL WHERE id = %s",
    ):
        with pytest.raises(psycopg.Error, match="sealed"):
            app_conn.execute(sql, row)


@pytest.mark.postgres
def test_an_archive_file_is_sealed_once(app_conn) -> None:
    row = app_conn.execute("SELECT id FROM ingest_archivefile WHERE sealed_at IS NULL").fetchone()
    assert row is not None
    app_conn.execute(
        "UPDATE ingest_archivefile SET sealed_at = now(), size = 10, "
        "sha256 = decode(repeat('ab', 32), 'hex') WHERE id = %s",
        row,
    )
    for sql in (
        "UPDATE ingest_archivefile SET size = 11 WHERE id = %s",
        "UPDATE ingest_archivefile SET sha256 = decode(repeat('cd', 32), 'hex') WHERE id = %s",
        "UPDATE ingest_archivefile SET sealed_at = NULL WHERE id = %s",
    ):
        with pytest.raises(psycopg.Error, match="sealed"):
            app_conn.execute(sql, row)


@pytest.mark.postgres
def test_free_tables_stay_writable(app_conn) -> None:
    for table, rule in RULES.items():
        if rule.kind == Kind.FREE:
            assert _error(app_conn, f"DELETE FROM {table}") is None, table


@pytest.mark.postgres
def test_an_owner_migration_may_rewrite_and_declares_it_for_owner_bound_records(
    every_table_filled,
) -> None:
    """The owner is free on the crawl's tables; on the records of decisions only inside
    a transaction that declared a rewrite (dedup_site.appendonly.owner_rewrite)."""
    from django.db import DatabaseError, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE ingest_document SET url = url || '#moved'")
        cursor.execute("UPDATE ingest_documentbody SET codec = codec")
        transaction.set_rollback(True)
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE reviews_label SET reason = 'rewritten'")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('dedup.rewrite', 'test: a format change', true)")
        cursor.execute("UPDATE reviews_label SET reason = 'rewritten'")
        cursor.execute("UPDATE ingest_methodswitch SET reason = 'rewritten'")
        transaction.set_rollback(True)
    assert not Label.objects.filter(reason="rewritten").exists()
