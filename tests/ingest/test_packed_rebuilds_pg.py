"""Ingest 0039-0042 on a database that holds passage sets, fingerprints and pairs: the
passage sets' table rebuilt with its columns widest first (every partition, its rows,
bounds, keys, GIN, triggers and grants kept), the fingerprints' status columns gone
(read from the SimHashes), the pairs keyed (a, method, b) and their rows packed (ids,
numbering, indexes, triggers and grants kept); and back.

A scratch database is loaded at ingest 0038 by the scale bench, then migrated by
`manage.py migrate`."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.scratch_postgres import scratch_postgres

ROOT = Path(__file__).resolve().parents[2]
ROLE = "dedup_packed_app"

pytestmark = pytest.mark.postgres


def _migrate(target: str, env: dict[str, str], name: str) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "ingest", name],
        cwd=ROOT,
        env={**env, "DATABASE_URL": target},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _columns(cur: psycopg.Cursor, table: str) -> list[str]:
    cur.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped ORDER BY attnum",
        [table],
    )
    return [name for (name,) in cur.fetchall()]


def _catalogue(cur: psycopg.Cursor, table: str) -> dict[str, Any]:
    cur.execute(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal "
        "AND tgparentid = 0 ORDER BY tgname",
        [table],
    )
    triggers = [name for (name,) in cur.fetchall()]
    cur.execute(
        "SELECT contype, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype IN ('f', 'p') ORDER BY contype, conname",
        [table],
    )
    keys = cur.fetchall()
    cur.execute(
        "SELECT i.relname, am.amname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
        "JOIN pg_am am ON am.oid = i.relam WHERE x.indrelid = %s::regclass ORDER BY i.relname",
        [table],
    )
    indexes = cur.fetchall()
    cur.execute(
        "SELECT grantee, privilege_type FROM information_schema.role_table_grants "
        "WHERE table_name = %s AND grantee <> current_user ORDER BY grantee, privilege_type",
        [table],
    )
    grants = cur.fetchall()
    cur.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass "
        "ORDER BY c.relname",
        [table],
    )
    partitions = cur.fetchall()
    return {
        "triggers": triggers,
        "keys": keys,
        "indexes": indexes,
        "grants": grants,
        "partitions": partitions,
    }


def _sets(cur: psycopg.Cursor) -> dict[tuple[int, int], tuple[Any, ...]]:
    cur.execute("SELECT method, document_id, site_id, fetched_at, hashes FROM ingest_passageset")
    return {(m, d): (s, t, bytes(h)) for m, d, s, t, h in cur.fetchall()}


def _pairs(cur: psycopg.Cursor) -> dict[int, tuple[Any, ...]]:
    cur.execute("SELECT to_jsonb(p) FROM ingest_candidatepair p")
    rows = [row for (row,) in cur.fetchall()]
    return {row["id"]: tuple(sorted(row.items())) for row in rows}


def _prints(cur: psycopg.Cursor) -> dict[tuple[int, int], tuple[Any, ...]]:
    cur.execute(
        "SELECT document_id, method_id, id, simhash, full_simhash, token_count, text_sha256 "
        "FROM ingest_fingerprint"
    )
    return {(d, m): (i, s, f, t, bytes(x)) for d, m, i, s, f, t, x in cur.fetchall()}


def test_0039_to_0042_rebuild_the_rows_packed_and_back(tmp_path: Path) -> None:
    url, env, admin = scratch_postgres()
    name = f"{url.rsplit('/', 1)[1]}_packed_{os.getpid()}"
    target = f"{url.rsplit('/', 1)[0]}/{name}"
    state = tmp_path / "state.json"
    try:
        done = subprocess.run(
            [
                sys.executable,
                "bench/scale_bench.py",
                *("--database", name, "--state", str(state), "--size", "600"),
                *("--chunk", "300", "--base", "600", "--spacing", "80000"),
                *("--migrate-to", "0038_fingerprint_id_brin", "--stage", "load"),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        with psycopg.connect(target, autocommit=True) as conn, conn.cursor() as cur:
            # A grant as a deployment's application role has one (docs/database-permanence.md).
            cur.execute(f"DROP ROLE IF EXISTS {ROLE}")
            cur.execute(f"CREATE ROLE {ROLE}")
            for table in ("ingest_fingerprint", "ingest_passageset", "ingest_candidatepair"):
                cur.execute(f"GRANT SELECT, INSERT ON {table} TO {ROLE}")
            # One document without a main-text SimHash (as the table's owner: the
            # append-only triggers bind the application's role).
            cur.execute(
                "UPDATE ingest_fingerprint SET simhash = NULL, status = 'insufficient_features' "
                "WHERE document_id = (SELECT min(document_id) FROM ingest_fingerprint)"
            )
            sets, prints, pairs = _sets(cur), _prints(cur), _pairs(cur)
            old_pairs = _catalogue(cur, "ingest_candidatepair")
            cur.execute("SELECT avg(pg_column_size(p.*)) FROM ingest_candidatepair p")
            (pair_size,) = cur.fetchone() or (0,)
            old_sets, old_prints = (
                _catalogue(cur, "ingest_passageset"),
                _catalogue(cur, "ingest_fingerprint"),
            )
            cur.execute("SELECT max(id) FROM ingest_fingerprint")
            (top,) = cur.fetchone() or (0,)
        assert len(sets) == len(prints) == 600
        assert pairs
        assert len(old_sets["partitions"]) > 2  # months of the load and the default

        _migrate(target, env, "0042_pair_columns_packed")
        with psycopg.connect(target, autocommit=True) as conn, conn.cursor() as cur:
            assert _columns(cur, "ingest_passageset") == [
                "document_id",
                "fetched_at",
                "site_id",
                "method",
                "hashes",
            ]
            assert "status" not in _columns(cur, "ingest_fingerprint")
            assert "full_status" not in _columns(cur, "ingest_fingerprint")
            assert _sets(cur) == sets
            assert _prints(cur) == prints
            new_sets = _catalogue(cur, "ingest_passageset")
            assert new_sets == old_sets
            new_prints = _catalogue(cur, "ingest_fingerprint")
            assert new_prints["triggers"] == old_prints["triggers"] and new_prints["triggers"]
            assert new_prints["grants"] == old_prints["grants"]
            assert [k for k in new_prints["keys"] if k[0] == "f"] == [
                k for k in old_prints["keys"] if k[0] == "f"
            ]
            assert ("fingerprint_id", "brin") in new_prints["indexes"]
            # Every partition holds its own key and GIN (made on the parent).
            cur.execute(
                "SELECT count(*) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                "JOIN pg_inherits h ON h.inhrelid = x.indrelid "
                "WHERE h.inhparent = 'ingest_passageset'::regclass"
            )
            assert cur.fetchone() == (2 * len(old_sets["partitions"]),)
            cur.execute("SELECT nextval(pg_get_serial_sequence('ingest_fingerprint', 'id'))")
            assert cur.fetchone() == (top + 1,)
            assert _pairs(cur) == pairs
            columns = _columns(cur, "ingest_candidatepair")
            assert columns[:5] == ["id", "a_id", "b_id", "created_at", "cosine"]
            assert columns[-3:] == ["doc_type", "guard_details", "evidence"]
            new_pairs = _catalogue(cur, "ingest_candidatepair")
            assert new_pairs["triggers"] == old_pairs["triggers"] and new_pairs["triggers"]
            assert new_pairs["grants"] == old_pairs["grants"]
            assert ("p", "PRIMARY KEY (a_id, method_id, b_id)") in new_pairs["keys"]
            assert {n for n, _ in new_pairs["indexes"]} == {
                n for n, _ in old_pairs["indexes"] if n != "pair_once_per_method"
            } | {"pair_id"}
            cur.execute("SELECT avg(pg_column_size(p.*)) FROM ingest_candidatepair p")
            (packed_size,) = cur.fetchone() or (0,)
            assert packed_size <= pair_size - 8
            cur.execute("SELECT max(id) FROM ingest_candidatepair")
            (top_pair,) = cur.fetchone() or (0,)
            cur.execute("SELECT nextval(pg_get_serial_sequence('ingest_candidatepair', 'id'))")
            assert (cur.fetchone() or (0,))[0] > top_pair
            cur.execute(f"SET ROLE {ROLE}")
            with pytest.raises(psycopg.Error):
                cur.execute("UPDATE ingest_candidatepair SET distance = 0")
            with pytest.raises(psycopg.Error):
                cur.execute("UPDATE ingest_passageset SET site_id = 0")
            with pytest.raises(psycopg.Error):
                cur.execute("UPDATE ingest_fingerprint SET token_count = 0")
            cur.execute("RESET ROLE")

        _migrate(target, env, "0038_fingerprint_id_brin")
        with psycopg.connect(target, autocommit=True) as conn, conn.cursor() as cur:
            assert _columns(cur, "ingest_passageset") == [
                "method",
                "site_id",
                "fetched_at",
                "hashes",
                "document_id",
            ]
            assert _sets(cur) == sets
            assert _prints(cur) == prints
            assert _pairs(cur) == pairs
            cur.execute(
                "SELECT status, count(*) FROM ingest_fingerprint GROUP BY status ORDER BY status"
            )
            assert cur.fetchall() == [("insufficient_features", 1), ("ok", 599)]
            cur.execute(
                "SELECT count(*) FROM pg_constraint WHERE conrelid = "
                "'ingest_fingerprint'::regclass AND contype = 'c'"
            )
            assert cur.fetchone() == (2,)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f"DROP ROLE IF EXISTS {ROLE}")
