"""The band index on PostgreSQL after migrations 0029 and 0036: covering btrees, one
index-only branch per half, band btree 0 unique in place of the table's primary key, and
the lookup still answers exactly what brute force answers."""

import json
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction

from ingest import index, partitions
from ingest.core.simhash import hamming
from ingest.models import Document, Fingerprint, IndexEntry, Site
from tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

METHOD = 7
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _documents(count: int) -> list[int]:
    site = Site.objects.create(host="band.example")
    docs = Document.objects.bulk_create(
        Document(site=site, url=f"https://band.example/{i}", fetched_at=T0, raw_size=1)
        for i in range(count)
    )
    return [d.pk for d in docs]


def _stored(seed: int) -> tuple[list[int], list[int], list[datetime]]:
    """Clusters of near values (0 to 8 bits from a centre) and scattered ones, fetched
    over 60 days."""
    rng = random.Random(seed)
    centres = [rng.getrandbits(64) for _ in range(8)]
    values = []
    for i in range(400):
        if i % 7 == 0:
            values.append(rng.getrandbits(64))
            continue
        v = rng.choice(centres)
        for b in rng.sample(range(64), rng.randint(0, 8)):
            v ^= 1 << b
        values.append(v)
    ids = _documents(len(values))
    fetched = [T0 + timedelta(days=i % 60) for i in range(len(values))]
    index.entries_add(
        [(METHOD, d, v, f) for d, v, f in zip(ids, values, fetched, strict=True)]
        + [(METHOD + 1, ids[0], values[1], fetched[0])]  # another method: never returned
    )
    return ids, values, fetched


def test_the_lookup_answers_what_brute_force_answers() -> None:
    ids, values, fetched = _stored(11)
    rng = random.Random(12)
    queries = values[:30] + [v ^ (1 << rng.randrange(64)) for v in values[30:60]]
    for k in (0, 1, 3, 5, 6):
        for q in queries:
            got = {
                (h.document_id, h.value, h.distance)
                for h in index.query(method_id=METHOD, value=q, k=k)
            }
            truth = {
                (h.document_id, h.value, h.distance)
                for h in index.brute_force(method_id=METHOD, value=q, k=k)
            }
            assert got == truth, (k, q)
            assert truth == {
                (d, v, hamming(v, q))
                for d, v in zip(ids, values, strict=True)
                if hamming(v, q) <= k
            }
    # With a lookback window: brute force restricted to the window's fetch times.
    around = T0 + timedelta(days=30)
    for q in queries[:20]:
        in_window = {
            h.document_id
            for h in index.query(method_id=METHOD, value=q, k=6, around=around, lookback_days=5)
        }
        assert in_window == {
            d
            for d, v, f in zip(ids, values, fetched, strict=True)
            if hamming(v, q) <= 6 and abs(f - around) <= timedelta(days=5)
        }


def test_a_row_both_halves_nominate_comes_back_once() -> None:
    ids, values, _ = _stored(13)
    hits = index.query(method_id=METHOD, value=values[1], k=6)
    assert len(hits) == len({h.document_id for h in hits})
    assert ids[1] in {h.document_id for h in hits}


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = [plan]
    for child in plan.get("Plans", []):
        out += _nodes(child)
    return out


# The band btrees of every partition, as ingest 0029 and 0036 leave them.
BAND_0 = (
    "CREATE UNIQUE INDEX {name} ON public.{table} USING btree"
    " (method, dedup_band_key_0(simhash), document_id, fetched_at) INCLUDE (simhash)"
)
BAND_1 = (
    "CREATE INDEX {name} ON public.{table} USING btree"
    " (method, dedup_band_key_1(simhash)) INCLUDE (simhash, document_id, fetched_at)"
)


def _partition_indexes(table: str = "") -> dict[str, list[tuple[str, str]]]:
    """partition → [(index, definition)] of every index on the band index's partitions
    (of one when named)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, ic.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indrelid"
            " JOIN pg_class ic ON ic.oid = i.indexrelid"
            " JOIN pg_inherits h ON h.inhrelid = c.oid"
            " WHERE h.inhparent = 'ingest_indexentry'::regclass AND c.relname LIKE %s"
            " ORDER BY ic.relname",
            [table or "%"],
        )
        out: dict[str, list[tuple[str, str]]] = {}
        for part, name, definition in cursor.fetchall():
            out.setdefault(part, []).append((name, definition))
    return out


def _band_shapes(indexes: dict[str, list[tuple[str, str]]]) -> None:
    assert indexes
    for part, defs in indexes.items():
        shapes = sorted(
            d.replace(name, "{name}", 1).replace(part, "{table}", 1) for name, d in defs
        )
        assert shapes == [BAND_1, BAND_0], (part, defs)


def test_the_table_has_no_primary_key_and_band_btree_0_is_unique() -> None:
    """Ingest 0036: band btree 0 keeps one row per (method, document, fetch time) and
    the table has no primary key, on the partitioned table and on every partition."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT contype FROM pg_constraint WHERE conrelid = 'ingest_indexentry'::regclass"
        )
        assert [t for (t,) in cursor.fetchall()] == ["f"]  # the document's foreign key
        cursor.execute(
            "SELECT c.relname, x.indisunique, x.indnkeyatts, x.indisprimary,"
            " pg_get_indexdef(x.indexrelid) FROM pg_index x"
            " JOIN pg_class c ON c.oid = x.indexrelid"
            " WHERE x.indrelid = 'ingest_indexentry'::regclass ORDER BY c.relname"
        )
        indexes = cursor.fetchall()
    assert [(n, u, k, p) for n, u, k, p, _ in indexes] == [
        ("ingest_indexentry_dedup_band_key_0", True, 4, False),
        ("ingest_indexentry_dedup_band_key_1", False, 2, False),
    ]
    assert indexes[0][4] == BAND_0.format(
        name="ingest_indexentry_dedup_band_key_0", table="ingest_indexentry"
    ).replace(" ON public.", " ON ONLY public.", 1)
    _band_shapes(_partition_indexes())


def test_a_repeat_adds_nothing() -> None:
    ids, values, fetched = _stored(15)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ingest_indexentry")
        (before,) = cursor.fetchone()
        index.entries_add([(METHOD, d, v, f) for d, v, f in zip(ids, values, fetched, strict=True)])
        index.entries_add([(METHOD, ids[3], values[3], fetched[3])] * 2)
        cursor.execute("SELECT count(*) FROM ingest_indexentry")
        assert cursor.fetchone() == (before,)
    assert before == len(ids) + 1


@pytest.mark.django_db(transaction=True)
def test_a_concurrent_repeat_waits_for_the_first_and_adds_nothing() -> None:
    """Two writers add the same rows: the second waits on the first's uncommitted rows
    in the unique band btree, then skips them (ON CONFLICT DO NOTHING)."""
    ids = _documents(3)
    rows = [(METHOD, d, 0x0F0F_0000_1234_5678 + d, T0) for d in ids]
    partitions.months_ensure("ingest_indexentry", [T0])
    second: dict[str, Any] = {}

    def add_again() -> None:
        try:
            connection.ensure_connection()
            second["pid"] = connection.connection.info.backend_pid
            index.entries_add(rows)
            second["done"] = True
        except Exception as error:  # pragma: no cover: the assertion shows it
            second["error"] = error
        finally:
            connection.close()

    with transaction.atomic():
        index.entries_add(rows)
        writer = threading.Thread(target=add_again)
        writer.start()
        waiting = False
        deadline = time.monotonic() + 10
        with connection.cursor() as cursor:
            while time.monotonic() < deadline and not waiting:
                time.sleep(0.05)
                cursor.execute(
                    "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                    [second.get("pid", 0)],
                )
                waiting = bool((cursor.fetchone() or (False,))[0])
        assert waiting and "done" not in second, second
    writer.join(10)
    assert second.get("done"), second
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ingest_indexentry WHERE document_id = ANY(%s)", [ids])
        assert cursor.fetchone() == (3,)


def test_a_partition_made_later_has_the_unique_band_btree() -> None:
    partitions.months_ensure("ingest_indexentry", [datetime(2033, 4, 9, tzinfo=UTC)])
    made = _partition_indexes("ingest_indexentry_p2033%")
    assert len(made) == 1
    _band_shapes(made)


def test_the_band_btrees_cover_the_lookup() -> None:
    """Migrations 0029 and 0036: each half's btree carries what the lookup reads, on
    every partition, so the planner can answer from the index alone (table scans off to
    ask which indexes could answer, on a tiny test table)."""
    _stored(14)
    indexes = _partition_indexes()
    _band_shapes(indexes)
    assert index.INCLUDE == ("simhash", "document_id", "fetched_at")
    for defs in indexes.values():
        for _, d in defs:
            columns = d.split(" USING btree ", 1)[1]
            assert all(column in columns for column in ("method", *index.INCLUDE)), d
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_indexentry")
    for window in (None, (T0, T0 + timedelta(days=3))):
        sql, params = index.pg_statement(METHOD, 0x0123_4567_89AB_CDEF, 6, window)
        with index.pg_cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            row = cursor.fetchone()
        assert row is not None
        plan = row[0] if not isinstance(row[0], str) else json.loads(row[0])
        scans = [n for n in _nodes(plan[0]["Plan"]) if "Relation Name" in n]
        assert scans
        assert {n["Node Type"] for n in scans} == {"Index Only Scan"}
        # (Either half's btree can answer either branch on a table this small.)
        assert all("_dedup_band_key_" in n["Index Name"] for n in scans)


def test_indexed_fingerprints_are_found_through_band_btree_0() -> None:
    """No key by document (ingest 0036): a fingerprint's entry is found by its SimHash
    in the unique band btree 0, one probe a fingerprint (the bulk resume asks)."""
    docs = [
        factories.indexed_document(
            url=f"https://probe.example/{i}", text=f"words {i}", simhash=0x5A5A_0000 + i
        )
        for i in range(3)
    ]
    factories.find(*docs[:2])
    prints = Fingerprint.objects.filter(document__in=docs, simhash__isnull=False)
    # Entries enough that a scan of the index costs the planner more than a descent.
    method = prints[0].method_id
    rng = random.Random(16)
    index.entries_add([(method, d, rng.getrandbits(64), T0) for d in _documents(5000)])
    found = index.fingerprints_indexed(prints)
    assert sorted(found.values_list("document_id", flat=True)) == [d.pk for d in docs[:2]]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_indexentry")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        sql, params = found.query.sql_with_params()
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        (plan,) = cursor.fetchone()
        # (An empty partition's index is read whole: nothing in it.)
        cursor.execute("SELECT DISTINCT tableoid::regclass::text FROM ingest_indexentry")
        holding = {name for (name,) in cursor.fetchall()}
    plan = json.loads(plan) if isinstance(plan, str) else plan
    scans = [n for n in _nodes(plan[0]["Plan"]) if n.get("Relation Name") in holding]
    assert scans and len(holding) == 1
    for scan in scans:
        assert scan["Node Type"] == "Index Only Scan", scan
        assert "_dedup_band_key_0_" in scan["Index Name"], scan
        # The btree's leading columns bound (the SQL function inlined): a descent to the
        # entry, not a scan of the index with the document as a filter.
        cond = scan.get("Index Cond", "")
        assert all(c in cond for c in ("method = ", "(simhash >> 32)", "document_id = ")), cond


def test_warming_reads_each_band_btree_whole_and_nothing_else() -> None:
    """index.band_index_warm: every entry of every partition once a btree, through
    index-only scans of the two band btrees (never the table)."""
    ids, _, _ = _stored(21)
    stored = IndexEntry.objects.count()
    assert stored == len(ids) + 1
    assert index.band_index_warm() == 2 * stored
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        for i in range(2):
            cursor.execute(
                "EXPLAIN (FORMAT JSON) SELECT count(*) FROM ingest_indexentry "
                f"WHERE dedup_band_key_{i}(simhash) >= -2147483648"
            )
            nodes = _nodes(cursor.fetchone()[0][0]["Plan"])
            scans = [n for n in nodes if "Scan" in n["Node Type"]]
            assert scans and all(n["Node Type"] == "Index Only Scan" for n in scans)
            assert all(f"dedup_band_key_{i}" in n["Index Name"] for n in scans)
