"""A small run of bench/scale_bench.py on PostgreSQL: the load resumes where its last
stage stopped, and the measure stage reports every figure (so the script cannot rot;
the figures are the benchmark's, at 1M and more)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.scratch_postgres import scratch_postgres

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.postgres


def _run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "scale_bench.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_scale_bench_loads_in_resumable_stages_and_measures(tmp_path: Path) -> None:
    url, env, admin = scratch_postgres()
    name = f"{url.rsplit('/', 1)[1]}_scale_{os.getpid()}"
    state = tmp_path / "state.json"
    common = ["--database", name, "--state", str(state), "--base", "1500", "--chunk", "1000"]
    try:
        # A first session stops after 1,000 documents, with every secondary index of the
        # dedup tables dropped for the load, pairs capped at 3 a member and passage sets
        # for the first 2,000 documents; the next one loads the rest under the same rules
        # (its own flags ignored) and builds the indexes.
        first = ["--build-after", "all", "--pair-cap", "3", "--passages-until", "2000"]
        _run(["--size", "3000", "--until", "1000", "--stage", "load", *first, *common], env)
        assert json.loads(state.read_text())["loaded"] == 1000
        log = _run(["--size", "3000", "--stage", "load", "--pair-cap", "50", *common], env)
        assert "loaded 2000/3000" in log and "loaded 1000/3000" not in log
        out = tmp_path / "figures.json"
        _run(
            [
                "--size",
                "3000",
                "--stage",
                "measure",
                "--queries",
                "30",
                "--json",
                str(out),
                *common,
            ],
            env,
        )
        figures = json.loads(out.read_text())
        assert figures["documents"] == 3000
        tables = figures["tables"]
        assert tables["ingest_document"]["rows"] == 3000
        assert tables["ingest_fingerprint"]["rows"] == 3000  # one row, main and full
        assert tables["ingest_indexentry"]["rows"] == 3000
        assert tables["ingest_passageset"]["rows"] == tables["ingest_passageset"]["documents"]
        assert tables["ingest_passageset"]["rows"] == 2000
        members = tables["ingest_groupmember"]["rows"]
        assert 0.10 * 3000 <= members <= 0.16 * 3000  # 15% of documents in groups
        groups = tables["ingest_candidategroup"]["rows"]
        # Each member after a group's first keeps pairs with at most 3 earlier ones.
        assert members - groups <= tables["ingest_candidatepair"]["rows"] <= 3 * members
        assert figures["load"]["pair_cap"] == 3
        # The dropped indexes were built again: the passage GIN, the digests, the bands.
        indexes = {name for t in tables.values() for name in t["indexes"]}
        assert any("gin" in name or "hashes" in name for name in indexes), indexes
        assert sum("band_key" in name for name in indexes) == 2, indexes
        assert "fingerprint_text_sha256" in indexes, indexes
        assert figures["dedup_state_b_per_doc"] > 0
        for k in (3, 6):
            band = figures[f"band_k{k}"]
            assert band["recall_vs_brute_force"] == 1.0
            assert 0 < band["p50_ms"] <= band["p95_ms"]
        for key in ("passage_lookup", "check_5kb", "queue_page", "document_list"):
            assert "p95_ms" in figures[key], figures[key]
        assert figures["queue_page"]["status"] == figures["document_list"]["status"] == 200
        assert figures["shared_buffers"]
        # The stock phrases are recorded as ingest records them: every stored passage on
        # PASSAGE_COMMON_DF (200) pages or more, and no other.
        with psycopg.connect(url.rsplit("/", 1)[0] + "/" + name) as conn:
            recorded = conn.execute("SELECT count(*) FROM ingest_passagecommon").fetchone()
            counted = conn.execute(
                "SELECT count(*) FROM (SELECT h FROM ingest_passageset,"
                " unnest(passage_hashes(hashes)) AS h"
                " GROUP BY h HAVING count(*) >= 200) AS c"
            ).fetchone()
            # The band index as the migrations leave it (ingest 0036): band btree 0
            # unique, built again after the load, and no primary key.
            band = conn.execute(
                "SELECT c.relname, x.indisunique, x.indisprimary FROM pg_index x"
                " JOIN pg_class c ON c.oid = x.indexrelid"
                " WHERE x.indrelid = 'ingest_indexentry'::regclass ORDER BY 1"
            ).fetchall()
        assert recorded is not None and counted is not None
        assert recorded[0] == counted[0] == figures["load"]["common_passages"]
        assert band == [
            ("ingest_indexentry_dedup_band_key_0", True, False),
            ("ingest_indexentry_dedup_band_key_1", False, False),
        ]
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _sets(url: str, name: str) -> tuple[int, str, int]:
    """(sets, a digest of every set in document order, stock phrases recorded)."""
    with psycopg.connect(url.rsplit("/", 1)[0] + "/" + name) as conn:
        row = conn.execute(
            "SELECT count(*), md5(string_agg(document_id || ':' || hashes::text, ','"
            " ORDER BY document_id)), (SELECT count(*) FROM ingest_passagecommon)"
            " FROM ingest_passageset"
        ).fetchone()
    assert row is not None
    return row


def test_the_passages_stage_adds_the_sets_a_whole_load_makes(tmp_path: Path) -> None:
    """A load that stopped its passage sets at 2,000 documents, then the passages stage
    (in two sessions): the sets and the stock phrases are those of a load of them all."""
    url, env, admin = scratch_postgres()
    base = f"{url.rsplit('/', 1)[1]}_sets_{os.getpid()}"
    size = ["--size", "4000", "--base", "1500", "--chunk", "1000"]
    later, whole = f"{base}_later", f"{base}_whole"
    try:
        for name, extra in ((later, ["--passages-until", "2000"]), (whole, [])):
            state = ["--database", name, "--state", str(tmp_path / f"{name}.json")]
            _run([*size, "--stage", "load", *extra, *state], env)
        state = ["--database", later, "--state", str(tmp_path / f"{later}.json")]
        assert _sets(url, later)[0] == 2000
        log = _run([*size, "--stage", "passages", "--until", "3000", *state], env)
        assert "passage sets 3000/4000" in log and "4000/4000" not in log
        log = _run([*size, "--stage", "passages", *state], env)
        assert "passage sets 4000/4000" in log and "3000/4000" not in log
        assert _sets(url, later) == _sets(url, whole)
        assert _sets(url, whole)[0] == 4000
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in (later, whole):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
