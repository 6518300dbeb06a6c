"""Band index layouts at 10M: the product's index-entry table, side by side, one session.

Loads N real-looking fingerprints (bench/corpus.py, generated chunk by chunk into
bench/out/chunks/ by `--stage generate`, resumable) by COPY into two tables shaped like
the product's `ingest_indexentry` (partitioned by RANGE (fetched_at), the year 2026 and a
default partition; fetch times spread over the year), builds the layouts' indexes after
the load, then VACUUM ANALYZE (visibility map: index-only scans), and measures every
layout on the same queries, interleaved query by query:

- `b32x2` (the scheme shipped before): two btrees on (method, half), probes ORed, a
  bitmap heap scan visits every nominated row;
- `b32x2-cover`: the same keys, btrees INCLUDE (simhash, document_id), one index-only
  branch per half (UNION): nominated rows are read from the index alone;
- `b21x3`, `b21x3-cover`: thirds (22, 21, 21 bits), radii from `BandScheme.radii`.

Plain layouts live on table `a`, covering ones on table `b` (a key expression would
otherwise match both a plain and a covering index). Bytes per document = heap + the
primary key (method, document_id, fetched_at) + the layout's indexes, over N.

Queries (--queries, half a stored document's own fingerprint, half that fingerprint with
1 to 3 bits flipped: what the product asks when a page arrives); per query and layout:
client wall time of probe generation + statement + fetch (prepared, generic plan),
candidates nominated (distinct rows and index entries read, by numpy on the same values),
recall against numpy brute force.

    nice -n 5 python bench/experiments/band10m_experiment.py --stage generate --size 10000000
    python bench/experiments/band10m_experiment.py --stage load --size 10000000
    python bench/experiments/band10m_experiment.py --stage index --size 10000000
    python bench/experiments/band10m_experiment.py --stage measure --size 10000000
    python bench/experiments/band10m_experiment.py --stage fit --size 2260000  # -> 10M

DATABASE_URL names the server (its database part is replaced by --database).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import psycopg.adapt
import psycopg.postgres
import psycopg.pq

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import corpus  # noqa: E402

from ingest.core.bands import SCHEMES, BandScheme, int4_array_binary  # noqa: E402

CHUNKS = corpus.OUT / "chunks"
METHOD_ID = 1
T0 = datetime(2026, 1, 1, tzinfo=UTC)
YEAR = timedelta(days=365)
LAYOUTS = (
    "b32x2",
    "b32x2-cover",
    "b21x3",
    "b21x3-cover",
    "b21x3w-cover",
    "b24-20-20-cover",
)
INCLUDE = "simhash, document_id"


def url_for(database: str) -> str:
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    return base.rsplit("/", 1)[0] + "/" + database


# --- generation, chunk by chunk (the same values as corpus.real_looking_fingerprints) ---


def chunk_path(start: int) -> Path:
    return CHUNKS / f"c_{start:09d}.npz"


def _generate(args: tuple[int, int, int]) -> int:
    seed, start, size = args
    path = chunk_path(start)
    if not path.exists():
        values, sources = corpus._chunk((seed, start, size, "default"))
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, v=values, s=sources)
        tmp.rename(path)
    return start


def generate(n: int, seed: int) -> None:
    CHUNKS.mkdir(parents=True, exist_ok=True)
    tasks = [(seed, s, min(corpus.CHUNK, n - s)) for s in range(0, n, corpus.CHUNK)]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        for i, start in enumerate(pool.imap(_generate, tasks, chunksize=1)):
            if i % 25 == 0:
                print(f"generated {start + corpus.CHUNK:,}", flush=True)


def load_values(n: int, *, with_sources: bool = False) -> Any:
    parts, srcs = [], []
    for start in range(0, n, corpus.CHUNK):
        with np.load(chunk_path(start)) as f:
            parts.append(f["v"])
            srcs.append(f["s"])
    values = np.concatenate(parts)[:n]
    return (values, np.concatenate(srcs)[:n]) if with_sources else values


# --- tables and layouts ---


def table(n: int, group: str) -> str:
    return f"ie{n // 1000}k_{group}"


class Layout:
    def __init__(self, name: str) -> None:
        self.name = name
        self.covering = name.endswith("-cover")
        self.scheme: BandScheme = SCHEMES[name.removesuffix("-cover")]
        self.fn = "x_" + self.scheme.name.replace("-", "_")
        if self.scheme.name == "b21x3w":  # the same keys as b21x3: the same indexes
            self.fn = "x_b21x3"
        self.group = "b" if self.covering else "a"

    def indexes(self, tbl: str) -> list[tuple[str, str]]:
        out = []
        for i in range(len(self.scheme.combos)):
            name = f"{tbl}_{self.fn}_{i}"
            include = f" INCLUDE ({INCLUDE})" if self.covering else ""
            key = f"{self.fn}_{i}(simhash)"
            sql = f"CREATE INDEX IF NOT EXISTS {name} ON {tbl} (method, {key}){include}"
            out.append((name, sql))
        return out

    def sql(self, tbl: str) -> str:
        hamming = "bit_count((simhash # %b)::bit(64))"
        if not self.covering:
            cond = self.scheme.sql_probe_condition(self.fn, "%b")
            return (
                f"SELECT document_id, simhash, {hamming} FROM {tbl} WHERE method = %b"
                f" AND {cond} AND {hamming} <= %b"
            )
        branches = [
            f"SELECT document_id, simhash, {hamming} FROM {tbl} WHERE method = %b"
            f" AND {self.fn}_{i}(simhash) = ANY(%b::int4[]) AND {hamming} <= %b"
            for i in range(len(self.scheme.combos))
        ]
        return "\nUNION\n".join(branches)

    def params(self, value: int, k: int) -> list[Any]:
        s = signed(value)
        probes = [Int4Array(p) for p in self.scheme.probe_arrays(value, k)]
        if not self.covering:
            return [s, METHOD_ID, *probes, s, k]
        out: list[Any] = []
        for p in probes:
            out += [s, METHOD_ID, p, s, k]
        return out


def signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


class Int4Array:
    def __init__(self, values: np.ndarray) -> None:
        self.values = values


class _Int4ArrayDumper(psycopg.adapt.Dumper):
    format = psycopg.pq.Format.BINARY
    oid = psycopg.postgres.types["int4"].array_oid

    def dump(self, obj: Int4Array) -> bytes:
        return int4_array_binary(obj.values)


def connect(database: str) -> psycopg.Connection:
    conn = psycopg.connect(url_for(database), autocommit=True)
    conn.adapters.register_dumper(Int4Array, _Int4ArrayDumper)
    return conn


def ensure_database(database: str) -> None:
    with psycopg.connect(url_for("postgres"), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            conn.execute(f'CREATE DATABASE "{database}"')


def create_table(conn: psycopg.Connection, tbl: str) -> None:
    """The product's shape (ingest 0026): partitioned by fetched_at, a year's partition."""
    conn.execute(
        f"""CREATE TABLE IF NOT EXISTS {tbl} (
            document_id bigint NOT NULL,
            simhash bigint NOT NULL,
            fetched_at timestamptz NOT NULL,
            method smallint NOT NULL
        ) PARTITION BY RANGE (fetched_at)"""
    )
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {tbl}_p202601 PARTITION OF {tbl}"
        " FOR VALUES FROM ('2026-01-01 00:00+00') TO ('2027-01-01 00:00+00')"
    )
    conn.execute(f"CREATE TABLE IF NOT EXISTS {tbl}_default PARTITION OF {tbl} DEFAULT")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS bench_loaded (tbl text, start bigint, PRIMARY KEY (tbl, start))"
    )


def load(conn: psycopg.Connection, n: int, groups: set[str]) -> None:
    """COPY chunk by chunk, each chunk committed with its mark (resumable); no index.
    Only the tables the layouts measured need (``groups``: plain ``a``, covering ``b``)."""
    for group in sorted(groups):
        tbl = table(n, group)
        create_table(conn, tbl)
        done = {r[0] for r in conn.execute("SELECT start FROM bench_loaded WHERE tbl = %s", [tbl])}
        started = time.perf_counter()
        for start in range(0, n, corpus.CHUNK):
            if start in done:
                continue
            while not chunk_path(start).exists():
                time.sleep(5)
            with np.load(chunk_path(start)) as f:
                values = f["v"][: n - start]
            step = YEAR / n
            with conn.transaction(), conn.cursor() as cur:
                with cur.copy(
                    f"COPY {tbl} (document_id, simhash, fetched_at, method) FROM STDIN"
                ) as copy:
                    for j, v in enumerate(values.view(np.int64).tolist()):
                        i = start + j
                        copy.write_row((i + 1, v, T0 + step * i, METHOD_ID))
                cur.execute("INSERT INTO bench_loaded VALUES (%s, %s)", [tbl, start])
            if start // corpus.CHUNK % 50 == 0:
                print(f"{tbl}: {start + len(values):,} ({time.perf_counter() - started:.0f} s)")
        print(f"{tbl} loaded in {time.perf_counter() - started:.0f} s", flush=True)


def build(conn: psycopg.Connection, n: int, layouts: list[Layout]) -> dict[str, float]:
    conn.execute("SET maintenance_work_mem = '1GB'")
    took: dict[str, float] = {}
    groups = sorted({layout.group for layout in layouts})
    # The primary key, for its bytes: on the first table loaded (both hold the same rows).
    tbl = table(n, groups[0])
    t = time.perf_counter()
    if not conn.execute("SELECT 1 FROM pg_constraint WHERE conname = %s", [f"{tbl}_pk"]).fetchone():
        conn.execute(
            f"ALTER TABLE {tbl} ADD CONSTRAINT {tbl}_pk"
            " PRIMARY KEY (method, document_id, fetched_at)"
        )
    took["pkey"] = time.perf_counter() - t
    for layout in layouts:
        conn.execute(layout.scheme.sql_key_functions(layout.fn))
        t = time.perf_counter()
        for _, sql in layout.indexes(table(n, layout.group)):
            conn.execute(sql)
        took[layout.name] = time.perf_counter() - t
        print(f"built {layout.name} in {took[layout.name]:.0f} s", flush=True)
    for group in groups:
        conn.execute(f"VACUUM (ANALYZE) {table(n, group)}")
    return took


def rel_size(conn: psycopg.Connection, name: str) -> int:
    """Bytes of a relation, its partitions' relations summed (a partitioned index too)."""
    row = conn.execute(
        "SELECT coalesce(sum(pg_relation_size(relid)), 0) FROM pg_partition_tree(%s)", [name]
    ).fetchone()
    assert row is not None
    return int(row[0])


def pick_queries(values: np.ndarray, count: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(values), size=count, replace=False)
    out = []
    for j, i in enumerate(picked):
        v = int(values[i])
        if j % 2:
            for b in rng.choice(64, size=int(rng.integers(1, 4)), replace=False):
                v ^= 1 << int(b)
        out.append(v)
    return out


def pctl(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs, dtype=np.float64), q)) if xs else 0.0


def measure(
    conn: psycopg.Connection, n: int, layouts: list[Layout], ks: list[int], count: int, seed: int
) -> dict[str, Any]:
    values = load_values(n)
    queries = pick_queries(values, count, seed)
    conn.execute("SET plan_cache_mode = force_generic_plan")
    pk = rel_size(conn, f"{table(n, min(x.group for x in layouts))}_pk")
    out: dict[str, Any] = {"n": n, "queries": count, "layouts": {}}
    for layout in layouts:
        tbl = table(n, layout.group)
        heap = rel_size(conn, tbl)
        idx = sum(rel_size(conn, name) for name, _ in layout.indexes(tbl))
        out["layouts"][layout.name] = {
            "heap_b_per_doc": heap / n,
            "pkey_b_per_doc": pk / n,
            "band_indexes_b_per_doc": idx / n,
            "total_b_per_doc": (heap + pk + idx) / n,
            "by_k": {},
        }
    # Candidates and truth by numpy, once per scheme and query.
    combos: dict[str, list[np.ndarray]] = {}
    for layout in layouts:
        s = layout.scheme
        if s.name not in combos:
            combos[s.name] = [_combo_values(s, values, i) for i in range(len(s.combos))]
    for k in ks:
        lat: dict[str, list[float]] = {x.name: [] for x in layouts}
        cpu: dict[str, list[float]] = {x.name: [] for x in layouts}
        found: dict[str, list[set[int]]] = {x.name: [] for x in layouts}
        with conn.cursor() as cur:
            sqls = {x.name: x.sql(table(n, x.group)) for x in layouts}
            for v in queries[: min(50, len(queries))]:  # warm-up: plans, caches
                for x in layouts:
                    cur.execute(sqls[x.name], x.params(v, k), prepare=True)
                    cur.fetchall()
            for qi, v in enumerate(queries):
                order = layouts if qi % 2 == 0 else layouts[::-1]
                for x in order:
                    c0, t0 = time.process_time(), time.perf_counter()
                    cur.execute(sqls[x.name], x.params(v, k), prepare=True)
                    rows = cur.fetchall()
                    lat[x.name].append((time.perf_counter() - t0) * 1000)
                    cpu[x.name].append((time.process_time() - c0) * 1000)
                    found[x.name].append({r[0] - 1 for r in rows})
            plans = {}
            for x in layouts:
                slow = queries[int(np.argmax(lat[x.name]))]
                plans[x.name] = [
                    r[0][:200]
                    for r in cur.execute(
                        "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sqls[x.name], x.params(slow, k)
                    ).fetchall()
                ]
        truths = [
            set(np.flatnonzero(np.bitwise_count(values ^ np.uint64(v)) <= k).tolist())
            for v in queries
        ]
        for x in layouts:
            s = x.scheme
            radii = s.radii(k)
            distinct, entries = [], []
            for v in queries:
                hit = np.zeros(n, dtype=bool)
                total = 0
                for i, r in enumerate(radii):
                    if r < 0:
                        continue
                    m = np.bitwise_count(combos[s.name][i] ^ np.uint64(s.combo_value(v, i))) <= r
                    total += int(m.sum())
                    hit |= m
                distinct.append(float(hit.sum()))
                entries.append(float(total))
            want = sum(len(t) for t in truths)
            got = sum(len(t & f) for t, f in zip(truths, found[x.name], strict=True))
            extra = sum(len(f - t) for t, f in zip(truths, found[x.name], strict=True))
            res = {
                "probes": s.probe_count(k),
                "radii": radii,
                "p50_ms": pctl(lat[x.name], 50),
                "p95_ms": pctl(lat[x.name], 95),
                "max_ms": max(lat[x.name]),
                "client_cpu_p50_ms": pctl(cpu[x.name], 50),
                "candidates_p50": pctl(distinct, 50),
                "candidates_p95": pctl(distinct, 95),
                "entries_read_p95": pctl(entries, 95),
                "matches_p95": pctl([float(len(t)) for t in truths], 95),
                "recall": got / want if want else 1.0,
                "false_matches": extra,
                "slowest_plan": plans[x.name],
            }
            out["layouts"][x.name]["by_k"][str(k)] = res
            print(
                f"n={n:,} {x.name:12} k={k} probes {res['probes']:5} p50 {res['p50_ms']:6.2f}"
                f" p95 {res['p95_ms']:6.2f} ms  cand p50/p95 {res['candidates_p50']:7.0f}/"
                f"{res['candidates_p95']:7.0f}  recall {res['recall']:.3f}"
                f"  {out['layouts'][x.name]['total_b_per_doc']:.0f} B/doc",
                flush=True,
            )
    out["loadavg"] = os.getloadavg()
    return out


def fit(
    conn: psycopg.Connection, n: int, layouts: list[Layout], ks: list[int], count: int, seed: int
) -> dict[str, Any]:
    """Server execution time (EXPLAIN ANALYZE, TIMING OFF) of every query, fitted as a
    fixed part plus a cost per index entry read; then each query's entries scaled to
    `--project` documents (entries grow about linearly with N) gives projected
    percentiles. Less noisy than the client's wall time on a shared machine."""
    values = load_values(n)
    queries = pick_queries(values, count, seed + 4)
    conn.execute("SET plan_cache_mode = force_generic_plan")
    out: dict[str, Any] = {"n": n, "queries": count, "loadavg_start": os.getloadavg()}
    for x in layouts:
        s = x.scheme
        sql = x.sql(table(n, x.group))
        combos = [_combo_values(s, values, i) for i in range(len(s.combos))]
        for k in ks:
            entries, server = [], []
            for v in queries[:30]:  # warm-up: caches
                conn.execute(sql, x.params(v, k)).fetchall()
            for v in queries:
                e = 0
                for i, r in enumerate(s.radii(k)):
                    if r >= 0:
                        near = np.bitwise_count(combos[i] ^ np.uint64(s.combo_value(v, i))) <= r
                        e += int(near.sum())
                entries.append(float(e))
                row = conn.execute(
                    "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql, x.params(v, k)
                ).fetchone()
                assert row is not None
                server.append(float(row[0][0]["Execution Time"]))
            ent, srv = np.asarray(entries), np.asarray(server)
            design = np.vstack([np.ones_like(ent), ent]).T
            (fixed, per_entry), *_ = np.linalg.lstsq(design, srv, rcond=None)
            projected = srv + per_entry * ent * (PROJECT / n - 1)
            res = {
                "server_p50_ms": pctl(server, 50),
                "server_p95_ms": pctl(server, 95),
                "fixed_ms": float(fixed),
                "us_per_entry": float(per_entry) * 1000,
                "entries_p95": pctl(entries, 95),
                "projected_n": PROJECT,
                "projected_p50_ms": pctl(projected.tolist(), 50),
                "projected_p95_ms": pctl(projected.tolist(), 95),
            }
            out[f"{x.name} k={k}"] = res
            print(x.name, k, {a: round(b, 3) for a, b in res.items()}, flush=True)
    out["loadavg_end"] = os.getloadavg()
    return out


PROJECT = 10_000_000


def _combo_values(s: BandScheme, values: np.ndarray, i: int) -> np.ndarray:
    out = np.zeros(len(values), dtype=np.uint64)
    for b in s.combos[i]:
        shift, width = s.blocks[b]
        out = (out << np.uint64(width)) | (
            (values >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage", choices=["generate", "load", "index", "measure", "fit", "all"])
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--database", default="dedup_hband_exp")
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=LAYOUTS)
    parser.add_argument("--ks", type=int, nargs="+", default=[3, 6])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    layouts = [Layout(x) for x in args.layouts]
    if args.stage == "generate":
        generate(args.size, args.seed)
        return
    ensure_database(args.database)
    with connect(args.database) as conn:
        if args.stage in ("load", "all"):
            load(conn, args.size, {x.group for x in layouts})
        if args.stage in ("index", "all"):
            print(json.dumps(build(conn, args.size, layouts)))
        if args.stage == "fit":
            res = fit(conn, args.size, layouts, args.ks, args.queries, args.seed)
            if args.json:
                args.json.write_text(json.dumps(res, indent=1, default=str))
        if args.stage in ("measure", "all"):
            print(f"load average {os.getloadavg()}", flush=True)
            res = measure(conn, args.size, layouts, args.ks, args.queries, args.seed)
            res["args"] = {k: str(v) for k, v in vars(args).items()}
            if args.json:
                args.json.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
