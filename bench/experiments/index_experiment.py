"""Candidate index experiment: band schemes in PostgreSQL on real-looking fingerprints.

For each corpus size (100k and 1M by default) and each index variant, the script loads
fingerprints of generated real-looking text (bench/corpus.py) into a compact table
with COPY, builds the variant's index, and measures:

- candidate query latency, median and p95, at k = 3 and k = 6, over 500 queries drawn
  from the stored set (half random documents, half near-copies of stored documents),
  each a prepared statement (index lookup of the probe keys, then the exact Hamming
  filter `bit_count((simhash # q)::bit(64)) <= k`), timed from the client;
- candidates examined per query (rows the index nominates before the Hamming filter);
- recall against numpy brute force for every query (must be 1.000);
- numpy brute-force time per query on the same data, and the PyPI `simhash` package's
  SimhashIndex (k + 1 blocks, pure Python dicts) on the same data;
- insert throughput into the indexed table (batched INSERTs; for GIN with fastupdate
  off and on, plus the query latency while the pending list is filling);
- bytes per fingerprint = (pg_relation_size(table) + pg_indexes_size(table)) / rows,
  with the composite primary key (method, document_id) a Django model needs, and
  without it.

Variants (ingest/core/bands.py schemes): `b32x2-btree` (the chosen one: two 32-bit
halves, one btree each on (method, half)), `b16x4-btree`, `b16x4-gin` and
`b8x8-pairs-gin` (the first plan: 28 pair keys in one GIN expression index).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dedup_bench \\
        .venv/bin/python bench/experiments/index_experiment.py [--sizes 100000 1000000]

The database is created if missing; the table `bench_fingerprint` is dropped and
rebuilt. Results go to bench/out/index_experiment.json (and a timestamped copy);
`--profile dense` runs the same on the stress-test corpus (index_experiment_dense.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from candidates_bench import simhash_package  # noqa: E402
from corpus import OUT, PROFILES, bias_report, real_looking_fingerprints  # noqa: E402

from ingest.core.bands import SCHEMES, BandScheme  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/dedup_bench"
TABLE = "bench_fingerprint"
METHOD_ID = 1
DOC_TYPES = 5
HAMMING = "bit_count((simhash # %s)::bit(64)) <= %s"
VARIANTS = ("b32x2-btree", "b16x4-btree", "b16x4-gin", "b8x8-pairs-gin")


def signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


class Variant:
    """One index layout for one scheme: its DDL, its query and its probe parameters."""

    def __init__(self, name: str) -> None:
        self.name = name
        scheme_name, self.kind = name.rsplit("-", 1)
        self.scheme: BandScheme = SCHEMES[scheme_name]
        self.fn = "bench_" + scheme_name.replace("-", "_")
        if self.kind == "gin":
            # One GIN over all combos: each key tagged with method and combo index.
            assert max(self.scheme.widths) <= 16
            self.tag_bits = max(1, (len(self.scheme.combos) - 1).bit_length())
            self.cond = f"{self.fn}(method, simhash) && %b::int4[]"
        else:
            self.cond = self.scheme.sql_probe_condition(self.fn, "%b")

    def create(self, conn: psycopg.Connection) -> list[str]:
        if self.kind == "gin":
            shift = 16 + self.tag_bits
            items = ", ".join(
                f"((method_id::bigint << {shift}) | {i << 16} | {self.scheme.key_expression(i)})"
                "::int4"
                for i in range(len(self.scheme.combos))
            )
            conn.execute(
                f"CREATE OR REPLACE FUNCTION {self.fn}(method_id integer, simhash bigint)"
                f" RETURNS int4[] LANGUAGE sql IMMUTABLE PARALLEL SAFE"
                f" AS $$SELECT ARRAY[{items}]$$"
            )
            index = f"{TABLE}_{self.fn}"
            conn.execute(
                f"CREATE INDEX {index} ON {TABLE} USING gin ({self.fn}(method, simhash))"
                " WITH (fastupdate = off)"
            )
            return [index]
        conn.execute(self.scheme.sql_key_functions(self.fn))
        for sql in self.scheme.sql_indexes(TABLE, self.fn):
            conn.execute(sql)
        return [f"{TABLE}_{self.fn}_{i}" for i in range(len(self.scheme.combos))]

    def params(self, value: int, k: int) -> list[Any]:
        probes = self.scheme.probes(value, k)
        if self.kind == "gin":
            shift = 16 + self.tag_bits
            return [
                [(METHOD_ID << shift) | (i << 16) | p for i, ps in enumerate(probes) for p in ps]
            ]
        return probes

    def query(self) -> str:
        return f"SELECT document_id FROM {TABLE} WHERE method = %s AND {self.cond} AND {HAMMING}"

    def count(self) -> str:
        return f"SELECT count(*) FROM {TABLE} WHERE method = %s AND {self.cond}"


def ensure_database(url: str) -> None:
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {"median": 0.0, "p95": 0.0, "max": 0.0}
    arr = np.asarray(values, dtype=np.float64)
    return {
        "median": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "max": float(arr.max()),
    }


def load_table(conn: psycopg.Connection, values: np.ndarray) -> dict[str, float]:
    """Compact table: 8-byte columns first, so the row has no alignment padding."""
    conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    conn.execute(
        f"""CREATE TABLE {TABLE} (
            document_id bigint NOT NULL,
            simhash bigint NOT NULL,
            fetched_at timestamptz NOT NULL,
            method smallint NOT NULL,
            doc_type smallint NOT NULL
        )"""
    )
    base = datetime(2026, 1, 1, tzinfo=UTC)
    days = [base + timedelta(days=d) for d in range(365)]
    started = time.perf_counter()
    with conn.cursor() as cur:
        sql = f"COPY {TABLE} (document_id, simhash, fetched_at, method, doc_type) FROM STDIN"
        with cur.copy(sql) as copy:
            for i, v in enumerate(values.view(np.int64).tolist()):
                copy.write_row((i + 1, v, days[i % 365], METHOD_ID, i % DOC_TYPES))
    copy_s = time.perf_counter() - started
    started = time.perf_counter()
    conn.execute(f"ALTER TABLE {TABLE} ADD PRIMARY KEY (method, document_id)")
    pk_s = time.perf_counter() - started
    conn.execute(f"VACUUM (ANALYZE) {TABLE}")
    return {"copy_s": copy_s, "copy_rows_per_s": len(values) / copy_s, "pk_build_s": pk_s}


def sizes(conn: psycopg.Connection, indexes: list[str]) -> dict[str, int]:
    row = conn.execute(
        "SELECT pg_relation_size(%s), pg_indexes_size(%s), pg_relation_size(%s)",
        [TABLE, TABLE, f"{TABLE}_pkey"],
    ).fetchone()
    assert row is not None
    band = sum(
        conn.execute("SELECT pg_relation_size(%s)", [i]).fetchone()[0]  # type: ignore[index]
        for i in indexes
    )
    return {"table": row[0], "all_indexes": row[1], "pkey": row[2], "band_indexes": band}


def pick_queries(sources: np.ndarray, n: int, count: int, seed: int) -> np.ndarray:
    """Half random stored documents, half stored near-copies of stored documents."""
    rng = np.random.default_rng(seed)
    copies = np.flatnonzero((sources[:n] >= 0) & (sources[:n] < n))
    half = count // 2
    picked_copies = rng.choice(copies, size=min(half, len(copies)), replace=False)
    picked_random = rng.choice(n, size=count - len(picked_copies), replace=False)
    return np.concatenate([picked_random, picked_copies])


def brute_force(values: np.ndarray, query: int, k: int) -> np.ndarray:
    return np.flatnonzero(np.bitwise_count(values ^ np.uint64(query)) <= k)


def run_queries(
    conn: psycopg.Connection,
    variant: Variant,
    values: np.ndarray,
    queries: np.ndarray,
    k: int,
    *,
    count_candidates: bool = True,
) -> dict[str, Any]:
    sql = variant.query()
    qvals = [int(values[i]) for i in queries]
    latencies: list[float] = []
    found: list[set[int]] = []
    with conn.cursor() as cur:
        for v in qvals:  # warm-up: plans and caches
            cur.execute(sql, [METHOD_ID, *variant.params(v, k), signed(v), k], prepare=True)
            cur.fetchall()
        for v in qvals:  # timed: probe generation + round trip, as the service pays it
            started = time.perf_counter()
            cur.execute(sql, [METHOD_ID, *variant.params(v, k), signed(v), k], prepare=True)
            rows = cur.fetchall()
            latencies.append((time.perf_counter() - started) * 1000)
            found.append({doc_id - 1 for (doc_id,) in rows})
        candidates: list[float] = []
        if count_candidates:
            for v in qvals:
                cur.execute(variant.count(), [METHOD_ID, *variant.params(v, k)], prepare=True)
                candidates.append(float(cur.fetchone()[0]))  # type: ignore[index]
        slowest = qvals[int(np.argmax(latencies))]
        plan = cur.execute(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql,
            [METHOD_ID, *variant.params(slowest, k), signed(slowest), k],
        ).fetchall()
    truth_total = hit_total = extra = 0
    brute_ms: list[float] = []
    for v, got in zip(qvals, found, strict=True):
        started = time.perf_counter()
        truth = set(brute_force(values, v, k).tolist())
        brute_ms.append((time.perf_counter() - started) * 1000)
        truth_total += len(truth)
        hit_total += len(truth & got)
        extra += len(got - truth)
    return {
        "k": k,
        "queries": len(qvals),
        "probes_per_query": variant.scheme.probe_count(k),
        "radii": variant.scheme.radii(k),
        "latency_ms": summary(latencies),
        "candidates": summary(candidates),
        "matches_per_query": summary([float(len(f)) for f in found]),
        "recall": hit_total / truth_total if truth_total else 1.0,
        "true_matches": truth_total,
        "false_matches": extra,
        "numpy_brute_force_ms": summary(brute_ms),
        "slowest_plan": [r[0][:300] for r in plan],
    }


def insert_rows(
    conn: psycopg.Connection, values: np.ndarray, start_id: int, rows: int, batch: int, seed: int
) -> float:
    """Batched INSERTs (one transaction per batch) of stored-like fingerprints under new
    document ids; rows per second."""
    rng = np.random.default_rng(seed)
    picks = values[rng.choice(len(values), size=rows)].view(np.int64).tolist()
    now = datetime(2026, 6, 1, tzinfo=UTC)
    sql = (
        f"INSERT INTO {TABLE} (document_id, simhash, fetched_at, method, doc_type) "
        "VALUES (%s, %s, %s, %s, %s)"
    )
    started = time.perf_counter()
    for first in range(0, rows, batch):
        chunk = picks[first : first + batch]
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                sql,
                [
                    (start_id + first + j, v, now, METHOD_ID, (first + j) % DOC_TYPES)
                    for j, v in enumerate(chunk)
                ],
            )
    return rows / (time.perf_counter() - started)


def measure_variant(
    conn: psycopg.Connection,
    variant: Variant,
    values: np.ndarray,
    queries: np.ndarray,
    args: argparse.Namespace,
) -> dict[str, Any]:
    n = len(values)
    load = load_table(conn, values)  # afresh: no bloat left by the previous variant
    started = time.perf_counter()
    indexes = variant.create(conn)
    build_s = time.perf_counter() - started
    conn.execute(f"ANALYZE {TABLE}")
    size = sizes(conn, indexes)
    run: dict[str, Any] = {
        "n": n,
        "variant": variant.name,
        "keys_per_fingerprint": len(variant.scheme.combos),
        "load": load,
        "index_build_s": build_s,
        "sizes": size,
        "bytes_per_fingerprint": (size["table"] + size["all_indexes"]) / n,
        "bytes_per_fingerprint_without_pkey": (size["table"] + size["band_indexes"]) / n,
        "queries": [],
    }
    for k in args.ks:
        if k > variant.scheme.k_max:
            continue
        res = run_queries(conn, variant, values, queries, k)
        run["queries"].append(res)
        print(
            f"  {variant.name:15} k={k} p50 {res['latency_ms']['median']:6.2f} ms"
            f"  p95 {res['latency_ms']['p95']:6.2f} ms"
            f"  candidates p95 {res['candidates']['p95']:7.0f}  recall {res['recall']:.3f}",
            flush=True,
        )
    rows = args.insert_rows
    run["insert_rows_per_s"] = insert_rows(conn, values, n + 1, rows, args.insert_batch, 1)
    if variant.kind == "gin":
        conn.execute(f"ALTER INDEX {indexes[0]} SET (fastupdate = on)")
        run["insert_rows_per_s_gin_fastupdate_on"] = insert_rows(
            conn, values, n + rows + 1, rows, args.insert_batch, 2
        )
        kq = max(k for k in args.ks if k <= variant.scheme.k_max)
        pending = run_queries(
            conn, variant, values, queries[: len(queries) // 5], kq, count_candidates=False
        )
        run["gin_pending_list_query"] = {
            "k": kq,
            "latency_ms": pending["latency_ms"],
            "recall": pending["recall"],
        }
    print(
        f"  {variant.name:15} build {build_s:5.1f} s  {run['bytes_per_fingerprint']:6.1f} B/fp"
        f"  ({run['bytes_per_fingerprint_without_pkey']:.1f} without the pkey)"
        f"  insert {run['insert_rows_per_s']:,.0f} rows/s",
        flush=True,
    )
    return run


def experiment(args: argparse.Namespace) -> dict[str, Any]:
    url = os.environ.get("DATABASE_URL") or DEFAULT_URL
    ensure_database(url)
    biggest = max(args.sizes)
    started = time.perf_counter()
    all_values, all_sources = real_looking_fingerprints(
        biggest, args.seed, with_sources=True, profile=args.profile
    )
    corpus_s = time.perf_counter() - started
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "corpus": {
            "seed": args.seed,
            "profile": args.profile,
            "generated_or_loaded_s": corpus_s,
            **bias_report(all_values, all_sources, sample=1000),
        },
        "runs": [],
        "simhash_package": [],
    }
    print(
        f"corpus: {biggest:,} fingerprints, bits {results['corpus']['bit_ones_min']:.0%}"
        f" to {results['corpus']['bit_ones_max']:.0%} ones, unrelated neighbour within 3"
        f" bits: {results['corpus']['share_with_unrelated_neighbour_within_3']:.1%}",
        flush=True,
    )
    with psycopg.connect(url, autocommit=True) as conn:
        machine = results["machine"]
        machine["postgres"] = conn.execute("SELECT version()").fetchone()[0]  # type: ignore[index]
        for name in ("shared_buffers", "work_mem", "jit", "max_parallel_workers_per_gather"):
            machine[name] = conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(f"SET plan_cache_mode = {args.plan_cache_mode}")
        machine["plan_cache_mode"] = args.plan_cache_mode
        for n in sorted(args.sizes):
            values, sources = all_values[:n], all_sources[:n]
            print(f"\n== {n:,} fingerprints ==", flush=True)
            queries = pick_queries(sources, n, args.queries, args.seed)
            for name in args.variants:
                results["runs"].append(measure_variant(conn, Variant(name), values, queries, args))
            if args.simhash_package:
                for k in args.ks:
                    res = simhash_package(values, queries[: args.package_queries], k)
                    results["simhash_package"].append({"n": n, **res})
                    print(
                        f"  simhash pkg     k={k} p50 {res['latency_ms']['median']:6.2f} ms"
                        f"  p95 {res['latency_ms']['p95']:6.2f} ms  recall {res['recall']:.3f}"
                        f"  (build {res['build_s']:.0f} s)",
                        flush=True,
                    )
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    return results


def print_table(results: dict[str, Any]) -> None:
    print(
        "\n| n | variant | k | probes | p50 ms | p95 ms | cand. p50 | cand. p95 | recall"
        " | numpy p50 ms | B/fp (no pkey) | insert rows/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in results["runs"]:
        for q in run["queries"]:
            print(
                f"| {run['n']:,} | {run['variant']} | {q['k']} | {q['probes_per_query']:,} |"
                f" {q['latency_ms']['median']:.2f} | {q['latency_ms']['p95']:.2f} |"
                f" {q['candidates']['median']:,.0f} | {q['candidates']['p95']:,.0f} |"
                f" {q['recall']:.3f} | {q['numpy_brute_force_ms']['median']:.2f} |"
                f" {run['bytes_per_fingerprint']:.0f}"
                f" ({run['bytes_per_fingerprint_without_pkey']:.0f})"
                f" | {run['insert_rows_per_s']:,.0f} |"
            )
    for res in results["simhash_package"]:
        print(
            f"| {res['n']:,} | simhash pkg SimhashIndex | {res['k']} | {res['k'] + 1} |"
            f" {res['latency_ms']['median']:.2f} | {res['latency_ms']['p95']:.2f} | | |"
            f" {res['recall']:.3f} | | (in memory) | |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--ks", type=int, nargs="+", default=[3, 6])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", default="default", choices=sorted(PROFILES))
    parser.add_argument("--insert-rows", type=int, default=20_000)
    parser.add_argument("--insert-batch", type=int, default=1_000)
    parser.add_argument(
        "--plan-cache-mode",
        default="force_generic_plan",
        choices=["auto", "force_generic_plan", "force_custom_plan"],
        help="generic: the probe arrays are not re-planned on every call",
    )
    parser.add_argument("--simhash-package", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--package-queries", type=int, default=100)
    args = parser.parse_args()
    started = time.perf_counter()
    results = experiment(args)
    results["args"] = vars(args)
    results["total_s"] = time.perf_counter() - started
    print_table(results)
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    text = json.dumps(results, indent=2, default=str)
    name = "index_experiment" if args.profile == "default" else f"index_experiment_{args.profile}"
    (OUT / f"{name}.json").write_text(text)
    (OUT / f"{name}_{stamp}.json").write_text(text)
    print(f"\ntotal {results['total_s']:.0f} s; results in {OUT / f'{name}.json'}")


if __name__ == "__main__":
    main()
