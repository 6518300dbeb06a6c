"""The channel indexes' time partitions on PostgreSQL (ingest/partitions.py, migration
ingest 0026): a lookback query reads only its window's months, a month can be detached
(kept whole, no longer searched) and attached back, rows of a month without a partition
are moved out of the default partition."""

import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from ingest import index, partitions
from ingest import passages as passage_index
from ingest.core import passages as core
from ingest.core.partitions import Month
from ingest.models import Document, IndexEntry, PassageSet, Site
from tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def monthly(settings) -> None:
    """Monthly partitions (PARTITION_MONTHS = 1) unless a test says otherwise."""
    settings.PARTITION_MONTHS = 1


JAN, JUN, DEC = (datetime(2015, m, 15, 12, tzinfo=UTC) for m in (1, 6, 12))
VALUE = 0x0123_4567_89AB_CDEF


def _relations(plan: dict[str, Any]) -> set[str]:
    out = {plan["Relation Name"]} if "Relation Name" in plan else set()
    for child in plan.get("Plans", []):
        out |= _relations(child)
    return out


def _method() -> int:
    method = IndexEntry.objects.values_list("method", flat=True).first()
    assert method is not None
    return int(method)


def _band_plan(window: tuple[datetime, datetime] | None) -> set[str]:
    sql, params = index.pg_statement(_method(), VALUE, 3, window)
    with index.pg_cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        row = cursor.fetchone()
    assert row is not None
    (plan,) = row
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return _relations(plan[0]["Plan"])


@pytest.fixture
def three_months() -> list[int]:
    """The same page fetched in January, June and December 2015: one entry a month."""
    docs = [
        factories.indexed_document(
            url=f"https://a.example/{i}", text="same words", simhash=VALUE, fetched_at=at
        )
        for i, at in enumerate((JAN, JUN, DEC))
    ]
    factories.find(*docs)
    return [d.pk for d in docs]


def test_the_channel_indexes_are_partitioned_by_month_with_the_fetch_time_in_the_key() -> None:
    """The fetch time is in each table's unique key: the primary key, or for the band
    index (no primary key since ingest 0036) its unique band btree 0."""
    assert partitions.partitioned()
    with connection.cursor() as cursor:
        for table in partitions.TABLES:
            cursor.execute(
                "SELECT pg_get_partkeydef(%s::regclass), pg_get_indexdef(indexrelid) "
                "FROM pg_index WHERE indrelid = %s::regclass AND indisunique",
                [table, table],
            )
            ((partkey, unique),) = cursor.fetchall()
            assert partkey == "RANGE (fetched_at)", table
            key = unique.split(" USING btree (", 1)[1].split(" INCLUDE ", 1)[0]
            assert "fetched_at" in key, table
            kind = "UNIQUE" if table == "ingest_indexentry" else "PRIMARY KEY"
            cursor.execute(
                "SELECT count(*) FROM pg_constraint WHERE conrelid = %s::regclass "
                "AND contype = 'p'",
                [table],
            )
            assert cursor.fetchone()[0] == (kind == "PRIMARY KEY"), table


def test_a_page_of_a_month_without_a_partition_gets_one(three_months: list[int]) -> None:
    for month in (Month(2015, 1), Month(2015, 6), Month(2015, 12)):
        names = {p.name for p in partitions.partitions_list("ingest_indexentry")}
        assert f"ingest_indexentry_{month.suffix}" in names
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ingest_indexentry_default")
        assert cursor.fetchone()[0] == 0
        cursor.execute("SELECT count(*) FROM ingest_indexentry_p201506")
        assert cursor.fetchone()[0] == 1


def test_a_lookback_query_reads_only_its_windows_partitions(three_months: list[int]) -> None:
    window = (datetime(2015, 6, 8, tzinfo=UTC), datetime(2015, 6, 22, tzinfo=UTC))
    assert _band_plan(window) == {"ingest_indexentry_p201506"}
    everything = _band_plan(None)
    assert {"ingest_indexentry_p201501", "ingest_indexentry_p201512"} <= everything
    # What the lookup answers in the window: the June page only.
    method = _method()
    hits = index.query(method_id=method, value=VALUE, k=3, around=JUN, lookback_days=7)
    assert [h.document_id for h in hits] == [three_months[1]]


def test_the_passage_lookup_reads_only_its_windows_partitions(settings) -> None:
    settings.PASSAGE_SHARED_MIN = 1
    site = Site.objects.create(host="p.example")
    shared = [core.Passage(0xC0DE_0000_0000_0000 + j, j) for j in range(3)]
    for i, at in enumerate((JAN, JUN, DEC)):
        doc = Document.objects.create(
            site=site,
            url=f"https://p.example/{i}",
            fetched_at=at,
            raw_sha256=f"{i:064x}",
            raw_size=1,
        )
        passage_index.entries_add([passage_index.Entry(doc.pk, site.pk, at, shared)])
    window = (datetime(2015, 12, 1, tzinfo=UTC), datetime(2015, 12, 31, tzinfo=UTC))
    sql, params = passage_index.pg_statement([p.hash for p in shared], window)
    args: list[Any] = list(params)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, args)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan
    read = {r for r in _relations(plan[0]["Plan"]) if r.startswith("ingest_passageset")}
    assert read == {"ingest_passageset_p201512"}
    assert PassageSet.objects.count() == 3


def test_a_detached_month_is_kept_whole_not_searched_and_its_pages_still_shown(
    client, three_months: list[int]
) -> None:
    method = _method()

    def found() -> set[int]:
        return {h.document_id for h in index.query(method_id=method, value=VALUE, k=3)}

    assert found() == set(three_months)
    call_command("partitions", "--detach", "2015-06", stdout=io.StringIO())
    assert found() == {three_months[0], three_months[2]}
    with connection.cursor() as cursor:
        cursor.execute("SELECT document_id FROM ingest_indexentry_p201506")
        assert [r[0] for r in cursor.fetchall()] == [three_months[1]]
        # It keeps the table's rule: its own trigger refuses what the table refuses.
        cursor.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'ingest_indexentry_p201506'::regclass"
            " AND NOT tgisinternal"
        )
        assert cursor.fetchone()[0] == 2
    listed = {p.name: p.attached for p in partitions.partitions_list("ingest_indexentry")}
    assert listed["ingest_indexentry_p201506"] is False
    # The document, its pairs and groups are not partitioned: the desk shows them.
    client.force_login(factories.user_create(username="ed", role="editor"))
    assert client.get(f"/documents/{three_months[1]}/").status_code == 200
    call_command("partitions", "--attach", "2015-06", stdout=io.StringIO())
    assert found() == set(three_months)


def _indexes_of(table: str) -> list[tuple[str, bool, bool]]:
    """(definition without the index's name, unique, primary) of each index of table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_get_indexdef(x.indexrelid), x.indisunique, x.indisprimary"
            " FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid"
            " WHERE x.indrelid = %s::regclass",
            [table],
        )
        rows = cursor.fetchall()
    return sorted((d.replace(name, "", 1).split(" USING ", 1)[1], u, p) for name, d, u, p in rows)


def test_a_month_detached_before_ingest_0036_is_attached_with_the_tables_indexes(
    three_months: list[int],
) -> None:
    """A month detached under the old band index (its primary key and plain band btree
    0) comes back with the unique band btree (PostgreSQL builds it on attach), and the
    indexes the table no longer has are dropped."""
    table, part = "ingest_indexentry", "ingest_indexentry_p201506"
    attached = _indexes_of(part)
    call_command("partitions", "--detach", "2015-06", stdout=io.StringIO())
    with connection.cursor() as cursor:
        # The detached month as ingest 0029 left it.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending checks before DDL
        cursor.execute(
            "SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid"
            " WHERE x.indrelid = %s::regclass AND x.indisunique",
            [part],
        )
        ((unique,),) = cursor.fetchall()
        cursor.execute(f"DROP INDEX {unique}")
        cursor.execute(
            f"ALTER TABLE {part} ADD CONSTRAINT {part}_pkey "
            "PRIMARY KEY (method, document_id, fetched_at)"
        )
        cursor.execute(
            f"CREATE INDEX {part}_old_band_0 ON {part} (method, dedup_band_key_0(simhash))"
            " INCLUDE (simhash, document_id, fetched_at)"
        )
    assert any(primary for _, _, primary in _indexes_of(part))
    call_command("partitions", "--attach", "2015-06", stdout=io.StringIO())
    assert _indexes_of(part) == attached
    assert [u for _, u, _ in attached] == [True, False]  # band btrees 0 and 1
    method = _method()
    assert {h.document_id for h in index.query(method_id=method, value=VALUE, k=3)} == set(
        three_months
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_index x JOIN pg_inherits h ON h.inhrelid = x.indexrelid"
            " WHERE x.indrelid = %s::regclass",
            [part],
        )
        assert cursor.fetchone()[0] == len(_indexes_of(table)) == 2


def test_a_month_detached_before_ingest_0037_gets_its_hashes_as_bytes_on_attach() -> None:
    """A passage month detached while its hashes were a bigint[] (and its GIN on that)
    comes back with bytes and the table's GIN, its sets found by the lookup again."""
    site = Site.objects.create(host="b.example")
    shared = [core.Passage(0xB17E_0000_0000_0000 + j, j) for j in range(3)]
    doc = Document.objects.create(
        site=site, url="https://b.example/", fetched_at=JUN, raw_sha256="b" * 64, raw_size=1
    )
    passage_index.entries_add([passage_index.Entry(doc.pk, site.pk, JUN, shared)])
    part = "ingest_passageset_p201506"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT document_id, hashes FROM {part} ORDER BY document_id")
        sets = cursor.fetchall()
    assert sets
    attached = _indexes_of(part)
    call_command("partitions", "--detach", "2015-06", stdout=io.StringIO())
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid"
            " WHERE x.indrelid = %s::regclass AND NOT x.indisprimary",
            [part],
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f"DROP INDEX {name}")
        # The detached month as ingest 0032 left it.
        cursor.execute(
            f"ALTER TABLE {part} ALTER COLUMN hashes TYPE bigint[] USING passage_hashes(hashes)"
        )
        cursor.execute(f"CREATE INDEX {part}_old_gin ON {part} USING gin (passage_buckets(hashes))")
    call_command("partitions", "--attach", "2015-06", stdout=io.StringIO())
    assert _indexes_of(part) == attached
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attname = 'hashes'",
            [part],
        )
        assert cursor.fetchone() == ("bytea",)
        cursor.execute(f"SELECT document_id, hashes FROM {part} ORDER BY document_id")
        assert cursor.fetchall() == sets
    found = passage_index.lookup(hashes=[p.hash for p in shared], shared_min=1)
    assert doc.pk in {hit.document_id for hit in found}


def test_rows_the_default_partition_caught_move_to_their_month() -> None:
    doc = factories.indexed_document(
        url="https://d.example/1", text="words", simhash=VALUE, fetched_at=JAN
    )
    method = IndexEntry.objects.values_list("method", flat=True).first() or 1
    at = datetime(2009, 3, 3, tzinfo=UTC)
    with connection.cursor() as cursor:
        # Written straight to the table, as a bulk load that skipped the ensure step.
        cursor.execute(
            "INSERT INTO ingest_indexentry (method, document_id, simhash, fetched_at) "
            "VALUES (%s, %s, 1, %s)",
            [method, doc.pk, at],
        )
        cursor.execute("SELECT count(*) FROM ingest_indexentry_default")
        assert cursor.fetchone()[0] == 1
    moved = partitions.default_adopt()
    assert moved["ingest_indexentry"] == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ingest_indexentry_default")
        assert cursor.fetchone()[0] == 0
        cursor.execute("SELECT document_id FROM ingest_indexentry_p200903")
        assert cursor.fetchone()[0] == doc.pk


def test_months_ahead_are_made_for_every_table() -> None:
    partitions.months_ahead(3, now=datetime(2031, 11, 2, tzinfo=UTC))
    for table in partitions.TABLES:
        names = {p.name for p in partitions.partitions_list(table)}
        assert {f"{table}_p2031{m}" for m in ("11", "12")} <= names
        assert {f"{table}_p2032{m}" for m in ("01", "02")} <= names


def test_a_period_of_twelve_months_is_one_partition_a_year(settings) -> None:
    settings.PARTITION_MONTHS = 12
    partitions.months_ensure("ingest_indexentry", [datetime(2011, 3, 9, tzinfo=UTC)])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = %s",
            ["ingest_indexentry_p201101"],
        )
        (bound,) = cursor.fetchone()
    assert "2011-01-01" in bound and "2012-01-01" in bound


def test_a_period_overlapping_partitions_of_another_setting_falls_back_to_the_month(
    settings,
) -> None:
    partitions.months_ensure("ingest_indexentry", [datetime(2012, 5, 9, tzinfo=UTC)])
    settings.PARTITION_MONTHS = 12
    partitions.months_ensure("ingest_indexentry", [datetime(2012, 8, 9, tzinfo=UTC)])
    names = {p.name for p in partitions.partitions_list("ingest_indexentry")}
    assert {"ingest_indexentry_p201205", "ingest_indexentry_p201208"} <= names
    assert "ingest_indexentry_p201201" not in names
