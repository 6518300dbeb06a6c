"""The band index on PostgreSQL after migration 0029: covering btrees, one index-only
branch per half, and the lookup still answers exactly what brute force answers."""

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from ingest import index
from ingest.core.simhash import hamming
from ingest.models import Document, Site

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


def test_the_band_btrees_cover_the_lookup() -> None:
    """Migration 0029: each half's btree carries what the lookup reads, on every
    partition, so the planner can answer from the index alone (table scans off to ask
    which indexes could answer, on a tiny test table)."""
    _stored(14)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indrelid"
            " JOIN pg_inherits h ON h.inhrelid = c.oid"
            " WHERE h.inhparent = 'ingest_indexentry'::regclass"
            " AND pg_get_indexdef(i.indexrelid) LIKE '%%dedup_band_key_%%'"
        )
        defs = cursor.fetchall()
        cursor.execute("ANALYZE ingest_indexentry")
        # On a tiny table the planner would rather read the primary key (rolled back).
        cursor.execute(
            "SELECT conname FROM pg_constraint"
            " WHERE conrelid = 'ingest_indexentry'::regclass AND contype = 'p'"
        )
        (pk,) = cursor.fetchone()
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending checks before DDL
        cursor.execute(f"ALTER TABLE ingest_indexentry DROP CONSTRAINT {pk}")
    assert defs
    partitions = {name for name, _ in defs}
    assert all(sum(1 for name, _ in defs if name == p) == 2 for p in partitions), (
        "two band btrees on every partition"
    )
    assert index.INCLUDE == ("simhash", "document_id", "fetched_at")
    assert all(f"INCLUDE ({', '.join(index.INCLUDE)})" in d for _, d in defs)
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
