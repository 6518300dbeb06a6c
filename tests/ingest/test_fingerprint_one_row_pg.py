"""Ingest 0035 on a database that holds fingerprints: the two rows a document (one a
branch) become one, the main text's values and the full page's SimHash and status kept,
the main row's `id` kept (the watermark reads on), the numbering, the append-only
triggers, the foreign keys and the grants as before; going back is refused.

A scratch database is loaded at ingest 0034 by the scale bench (two fingerprint rows a
document), then migrated to 0035 by `manage.py migrate`."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.scratch_postgres import scratch_postgres

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.postgres


def _run(args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _two_rows(cur: psycopg.Cursor) -> dict[tuple[str, int, int], list[Any]]:
    """The fingerprints of ingest 0034's layout by (branch, document, method)."""
    cur.execute(
        "SELECT branch, document_id, method_id, id, simhash, status, text_sha256, "
        "token_count FROM ingest_fingerprint"
    )
    return {(b, d, m): rest for b, d, m, *rest in cur.fetchall()}


def _catalogue(cur: psycopg.Cursor) -> dict[str, list[Any]]:
    cur.execute(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = 'ingest_fingerprint'::regclass "
        "AND NOT tgisinternal ORDER BY tgname"
    )
    triggers = [name for (name,) in cur.fetchall()]
    cur.execute(
        "SELECT contype, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = 'ingest_fingerprint'::regclass AND contype IN ('f', 'p') "
        "ORDER BY contype, conname"
    )
    keys = cur.fetchall()
    cur.execute(
        "SELECT grantee, privilege_type FROM information_schema.role_table_grants "
        "WHERE table_name = 'ingest_fingerprint' AND grantee <> current_user "
        "ORDER BY grantee, privilege_type"
    )
    return {"triggers": triggers, "keys": keys, "grants": cur.fetchall()}


def test_0035_makes_one_row_of_each_documents_two(tmp_path: Path) -> None:
    url, env, admin = scratch_postgres()
    name = f"{url.rsplit('/', 1)[1]}_onerow_{os.getpid()}"
    target = f"{url.rsplit('/', 1)[0]}/{name}"
    state = tmp_path / "state.json"
    try:
        _run(
            [
                "bench/scale_bench.py",
                *("--database", name, "--state", str(state), "--size", "600"),
                *("--chunk", "300", "--base", "600", "--migrate-to", "0034_fingerprint_row_packed"),
                *("--stage", "load"),
            ],
            env,
        )
        with psycopg.connect(target, autocommit=True) as conn, conn.cursor() as cur:
            # A grant as a deployment's application role has one (docs/database-permanence.md).
            cur.execute("DROP ROLE IF EXISTS dedup_onerow_app")
            cur.execute("CREATE ROLE dedup_onerow_app")
            cur.execute("GRANT SELECT, INSERT ON ingest_fingerprint TO dedup_onerow_app")
            before = _two_rows(cur)
            cur.execute("SELECT max(id) FROM ingest_fingerprint")
            (top,) = cur.fetchone() or (0,)
            # One document's full page is made to differ, so the copy is seen to pair the
            # right rows (the bench writes both branches alike).
            cur.execute(
                "UPDATE ingest_fingerprint SET simhash = 7, token_count = 3 "
                "WHERE branch = 'full' AND document_id = (SELECT min(document_id) "
                "FROM ingest_fingerprint)"
            )
            old = _catalogue(cur)
        assert len(before) == 1200
        _run(
            ["manage.py", "migrate", "ingest", "0035_fingerprint_one_row"],
            {**env, "DATABASE_URL": target},
        )
        with psycopg.connect(target, autocommit=True) as conn, conn.cursor() as cur:
            cur.execute(
                "SELECT document_id, method_id, id, simhash, status, text_sha256, token_count, "
                "full_simhash, full_status FROM ingest_fingerprint"
            )
            after = cur.fetchall()
            assert len(after) == 600
            first = min(row[0] for row in after)
            for d, m, id_, value, status, sha, words, full, full_status in after:
                assert (id_, value, status, sha, words) == tuple(before[("main", d, m)])
                full_before = before[("full", d, m)]
                assert full == (7 if d == first else full_before[1])
                assert full_status == full_before[2]
            new = _catalogue(cur)
            assert new["triggers"] == old["triggers"] and new["triggers"]
            assert new["grants"] == old["grants"]
            assert ("p", "PRIMARY KEY (document_id, method_id)") in new["keys"]
            assert [k for k in new["keys"] if k[0] == "f"] == [
                k for k in old["keys"] if k[0] == "f"
            ]
            # The numbering goes on after the largest id the table had.
            cur.execute("SELECT nextval(pg_get_serial_sequence('ingest_fingerprint', 'id'))")
            (following,) = cur.fetchone() or (0,)
            assert following == top + 1
            # The application role cannot change a stored row (the append-only triggers).
            cur.execute("SET ROLE dedup_onerow_app")
            with pytest.raises(psycopg.Error):
                cur.execute("UPDATE ingest_fingerprint SET token_count = 0")
            cur.execute("RESET ROLE")
        # Back to 0034 it does not go with rows stored: the full page's digests are gone.
        done = subprocess.run(
            [sys.executable, "manage.py", "migrate", "ingest", "0034_fingerprint_row_packed"],
            cwd=ROOT,
            env={**env, "DATABASE_URL": target},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode != 0 and "cannot be made again" in done.stderr
        with psycopg.connect(target, autocommit=True) as conn, conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM ingest_fingerprint")
            assert cur.fetchone() == (600,)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute("DROP ROLE IF EXISTS dedup_onerow_app")
