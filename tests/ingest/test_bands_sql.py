"""The generated SQL computes exactly what bands.py computes, and the btree probe query
finds exactly what brute force finds. psycopg on the test database's connection; every
object is temporary (pg_temp) and the test's transaction is rolled back."""

import random
from collections.abc import Iterator

import psycopg
import pytest

from ingest.core.bands import B32X2, SCHEMES, BandScheme
from ingest.core.simhash import MASK64, hamming, to_signed64

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

EDGES = [
    0,
    1,
    MASK64,
    1 << 63,
    (1 << 63) - 1,
    1 << 31,
    1 << 32,
    (1 << 32) - 1,
    0x8000_0000_8000_0000,
]


@pytest.fixture
def conn() -> Iterator[psycopg.Connection]:
    from django.db import connection

    connection.ensure_connection()
    yield connection.connection


def values(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return EDGES + [rng.getrandbits(64) for _ in range(n)]


@pytest.mark.parametrize("scheme", SCHEMES.values(), ids=lambda s: s.name)
def test_sql_function_equals_keys(conn: psycopg.Connection, scheme: BandScheme) -> None:
    conn.execute(scheme.sql_function("pg_temp.band_keys_test"))
    vals = values(2000, 1)
    rows = conn.execute(
        "SELECT pg_temp.band_keys_test(v) FROM unnest(%s::bigint[]) WITH ORDINALITY AS t(v, i)"
        " ORDER BY i",
        [[to_signed64(v) for v in vals]],
    ).fetchall()
    assert [row[0] for row in rows] == [scheme.keys(v) for v in vals]


def test_sql_key_functions_equal_keys(conn: psycopg.Connection) -> None:
    conn.execute(B32X2.sql_key_functions("pg_temp.band_key_test"))
    vals = values(500, 2)
    rows = conn.execute(
        "SELECT pg_temp.band_key_test_0(v), pg_temp.band_key_test_1(v)"
        " FROM unnest(%s::bigint[]) WITH ORDINALITY AS t(v, i) ORDER BY i",
        [[to_signed64(v) for v in vals]],
    ).fetchall()
    assert [list(row) for row in rows] == [B32X2.keys(v) for v in vals]


def test_btree_probe_query_finds_what_brute_force_finds(conn: psycopg.Connection) -> None:
    rng = random.Random(3)
    base = [rng.getrandbits(64) for _ in range(300)]
    stored = base + [
        v ^ sum(1 << b for b in rng.sample(range(64), rng.randint(0, 8))) for v in base
    ]
    conn.execute(B32X2.sql_key_functions("pg_temp.bk"))
    conn.execute(
        "CREATE TEMP TABLE fp (document_id bigint, simhash bigint, method smallint) ON COMMIT DROP"
    )
    with conn.cursor().copy("COPY fp FROM STDIN") as copy:
        for i, v in enumerate(stored):
            copy.write_row((i, to_signed64(v), 1))
        copy.write_row((len(stored), to_signed64(stored[0]), 2))  # another method
    for sql in B32X2.sql_indexes("fp", "pg_temp.bk"):
        conn.execute(sql)
    conn.execute("ANALYZE fp")
    condition = B32X2.sql_probe_condition("pg_temp.bk")
    sql = (
        f"SELECT document_id FROM fp WHERE method = %s AND {condition}"
        " AND bit_count((simhash # %s)::bit(64)) <= %s"
    )
    for k in (0, 3, 6):
        for q in stored[:40] + [rng.getrandbits(64)]:
            rows = conn.execute(sql, [1, *B32X2.probes(q, k), to_signed64(q), k]).fetchall()
            truth = {i for i, v in enumerate(stored) if hamming(v, q) <= k}
            assert {row[0] for row in rows} == truth


def test_the_migrated_functions_equal_the_scheme_keys(conn: psycopg.Connection) -> None:
    """Migration 0003 froze the SQL of scheme b32x2; it must still match the code."""
    vals = values(500, 3)
    rows = conn.execute(
        "SELECT dedup_band_key_0(v), dedup_band_key_1(v)"
        " FROM unnest(%s::bigint[]) WITH ORDINALITY AS t(v, i) ORDER BY i",
        [[to_signed64(v) for v in vals]],
    ).fetchall()
    assert [list(row) for row in rows] == [B32X2.keys(v) for v in vals]
