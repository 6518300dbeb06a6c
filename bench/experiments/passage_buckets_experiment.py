"""Passage index: the plain GIN on the 64-bit hashes against a GIN on buckets of them.

The question (issue #32, point 1): the plain GIN costs ~28 B a stored passage hash
because almost every hash is its own leaf entry. A GIN over each hash's top B bits
(`passage_buckets_<B>(hashes)`, an IMMUTABLE SQL function returning int4[]) lets many
documents share one entry whose posting list is compressed; the exact `hashes @>
ARRAY[h]` test stays, as a recheck on the heap rows the bucket names.

Loads N passage sets shaped like bench/scale_bench.py's (its `passage_hashes`,
`stored_set` and `group_plan`, chunk by chunk with the same random draws, so the sets are
the scale bench's) by COPY into a table shaped like one partition of the product's
`ingest_passageset` (the yearly default puts a year's documents in one partition), with
the product's template and stock-phrase tables (stock phrases: the pool passages held by
PASSAGE_COMMON_DF pages or more, as the ingest would have recorded them). Then builds, on
the same table, the plain GIN (the product's, fastupdate off) and the bucketed GIN for
each B, and measures:

- bytes per document of each index (pg_relation_size / N), and the heap's;
- the product's lookup statement (`ingest.passages._PG_QUERY`, prepared, as `lookup`
  runs it), and the same statement with the bucket probe and the exact recheck, on the
  same 200 queries: 5 KB articles (47 passages), half a new copy of a stored group's
  first member (80% of its passages), half random texts; client wall time p50/p95, and
  the shared buffers a query touched (EXPLAIN ANALYZE BUFFERS on a sample);
- recall: every query's answer (document, passages shared, stored size) under each
  index must equal the one a scan of every stored set gives by the statement's rules
  (`truth`): the plain index's and the bucketed ones' alike.

Each variant is measured with the other indexes dropped inside a transaction that is
rolled back (the planner would otherwise pick the plain GIN for the recheck's
`hashes @>`), in rounds that alternate the variants' order.

    python bench/experiments/passage_buckets_experiment.py --stage load --size 1000000
    python bench/experiments/passage_buckets_experiment.py --stage index
    python bench/experiments/passage_buckets_experiment.py --stage measure --json out.json
    # growth: copies of the 1M base to 3M (indexes dropped first), index, measure again
    python bench/experiments/passage_buckets_experiment.py --stage copy --size 3000000

DATABASE_URL names the server (its database part is replaced by --database).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import scale_bench as sb  # noqa: E402

BUCKET_BITS = (20, 22, 24)
PASSAGE_METHOD = 3  # words, coarse-w150-whole24-v1: what new databases store
ARTICLE_PASSAGES = 47  # a 5 KB article: ~850 words, one passage per 18
COPY_SHARE = 0.8  # of a copy's passages taken from the stored text it copies
SAVE_EVERY = 50  # keep the whole passages of every 50th group's first member (queries)
STATE_DIR = ROOT / "var"

TABLES = """
CREATE TABLE IF NOT EXISTS ingest_passageset (
    method smallint NOT NULL, document_id bigint NOT NULL, site_id integer NOT NULL,
    fetched_at timestamptz NOT NULL, hashes bigint[] NOT NULL,
    PRIMARY KEY (method, document_id, fetched_at));
CREATE TABLE IF NOT EXISTS ingest_passagetemplate (
    id bigserial PRIMARY KEY, method smallint NOT NULL, hash bigint NOT NULL,
    df integer NOT NULL, site_id integer NOT NULL);
CREATE INDEX IF NOT EXISTS template_method_hash ON ingest_passagetemplate (method, hash);
CREATE TABLE IF NOT EXISTS ingest_passagecommon (
    id bigserial PRIMARY KEY, method smallint NOT NULL, hash bigint NOT NULL,
    df integer NOT NULL, UNIQUE (method, hash));
"""
PLAIN_INDEX = "exp_passageset_hashes_gin"


def bucket_function(bits: int) -> str:
    # The top `bits` bits of each hash (an arithmetic shift of the signed bigint: a
    # bijection of the top bits onto int4). Repeated buckets in one array are one GIN key.
    return (
        f"CREATE OR REPLACE FUNCTION passage_buckets_{bits}(bigint[]) RETURNS int4[] "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE "
        f"AS $$ SELECT array_agg((h >> {64 - bits})::int4) FROM unnest($1) AS h $$"
    )


def index_name(bits: int) -> str:
    return f"exp_passageset_buckets{bits}_gin"


def index_sql(variant: str) -> str:
    if variant == "plain":
        return (
            f"CREATE INDEX {PLAIN_INDEX} ON ingest_passageset USING gin (hashes) "
            "WITH (fastupdate = off)"
        )
    bits = int(variant[1:])
    return (
        f"CREATE INDEX {index_name(bits)} ON ingest_passageset "
        f"USING gin (passage_buckets_{bits}(hashes)) WITH (fastupdate = off)"
    )


VARIANTS = ["plain", *(f"b{b}" for b in BUCKET_BITS)]
_chosen: list[str] = VARIANTS


def variants() -> list[str]:
    """The variants built and measured (--variants: at 10M, the plain GIN's build is
    the longest and its bytes a hash are known from 1M and 3M)."""
    return list(_chosen)


def all_indexes() -> dict[str, str]:
    names = {"plain": PLAIN_INDEX, **{f"b{b}": index_name(b) for b in BUCKET_BITS}}
    return {v: names[v] for v in variants()}


def any_indexes() -> list[str]:
    return [PLAIN_INDEX, *(index_name(b) for b in BUCKET_BITS)]


def url(database: str) -> str:
    return sb.database_url(database)


def state_path(database: str) -> Path:
    return STATE_DIR / f"passage_buckets_{database}.json"


def state_load(database: str) -> dict[str, Any]:
    path = state_path(database)
    return json.loads(path.read_text()) if path.exists() else {"loaded": 0, "saved": {}}


def state_save(database: str, state: dict[str, Any]) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    state_path(database).write_text(json.dumps(state))


# --- load ---

_PLAN: list[tuple[int, int]] = []
_GROUP_OF: np.ndarray = np.zeros(0, dtype=np.int64)


def _chunk_rows(job: tuple[int, int, int]) -> tuple[int, list[tuple], dict[str, list[int]]]:
    """The scale bench's passage sets of documents lo..hi (load_chunk's draws, in its
    order) and the whole passages of the sampled groups' first members."""
    seed, lo, hi = job
    rng = np.random.default_rng([seed, lo])
    ids = np.arange(lo + 1, hi + 1)
    sites = (ids % sb.SITES) + 1
    words = rng.integers(200, 1500, size=hi - lo)
    first: dict[int, np.ndarray] = {}
    saved: dict[str, list[int]] = {}
    rows = []
    for j, i in enumerate(ids):
        hashes = sb.passage_hashes(rng, max(3, int(words[j]) // 18))
        g = int(_GROUP_OF[i - 1])
        if g >= 0:
            if _PLAN[g][0] == i - 1:
                first[g] = hashes
                if g % SAVE_EVERY == 0:
                    saved[str(int(i))] = [int(h) for h in hashes]
            elif g in first:
                src = first[g]
                take = min(len(src), int(len(hashes) * 0.8))
                hashes[:take] = src[:take]
        stored = sb.stored_set(hashes, PASSAGE_METHOD)
        rows.append((PASSAGE_METHOD, int(i), int(sites[j]), sb.fetched_of(int(i)), stored))
    return lo, rows, saved


def load(args: argparse.Namespace) -> None:
    global _PLAN, _GROUP_OF
    if sb.ensure_database(args.database):
        state_path(args.database).unlink(missing_ok=True)  # a dropped database: stale
    state = state_load(args.database)
    with psycopg.connect(url(args.database), autocommit=True) as conn:
        conn.execute(TABLES)
        for name in any_indexes():  # maintained row by row, the load crawls
            conn.execute(f"DROP INDEX IF EXISTS {name}")
    _PLAN = sb.group_plan(args.size, args.seed, args.chunk)
    _GROUP_OF = np.full(args.size, -1, dtype=np.int64)
    for g, (start, s) in enumerate(_PLAN):
        _GROUP_OF[start : start + s] = g
    jobs = [
        (args.seed, lo, min(args.size, lo + args.chunk))
        for lo in range(state["loaded"], args.size, args.chunk)
    ]
    t0 = time.perf_counter()
    with (
        psycopg.connect(url(args.database)) as conn,
        multiprocessing.get_context("fork").Pool(args.processes) as pool,
    ):
        for lo, rows, saved in pool.imap(_chunk_rows, jobs, chunksize=1):
            with (
                conn.transaction(),
                conn.cursor() as cur,
                cur.copy(
                    "COPY ingest_passageset (method, document_id, site_id, fetched_at, hashes)"
                    " FROM STDIN"
                ) as cp,
            ):
                for row in rows:
                    cp.write_row(row)
            state["loaded"] = lo + len(rows)
            state["saved"].update(saved)
            state_save(args.database, state)
            print(f"loaded {state['loaded']:,} ({time.perf_counter() - t0:.0f} s)", flush=True)
    common_record(args.database)


def common_record(database: str) -> None:
    """The stock phrases the ingest would have recorded: pool passages on
    PASSAGE_COMMON_DF pages or more (only pool passages repeat past a group's size)."""
    pool = pool_hashes()
    with psycopg.connect(url(database), autocommit=True) as conn:
        conn.execute("TRUNCATE ingest_passagecommon")
        conn.execute("SET work_mem = '256MB'")
        conn.execute(
            "INSERT INTO ingest_passagecommon (method, hash, df) "
            "SELECT %s, u.h, count(*) FROM ingest_passageset p, unnest(p.hashes) AS u(h) "
            "WHERE u.h = ANY(%s::bigint[]) GROUP BY u.h HAVING count(*) >= %s",
            [PASSAGE_METHOD, pool, common_df()],
        )
        conn.execute("ANALYZE")


def common_df() -> int:
    return int(os.environ.get("PASSAGE_COMMON_DF", 200))


def pool_hashes() -> list[int]:
    """The scale bench's pool of common passages (stock phrases, bylines), signed."""
    ranks = np.arange(1, sb.COMMON_POOL + 1, dtype=np.uint64)
    return (ranks * np.uint64(0x9E3779B97F4A7C15)).view(np.int64).tolist()


def copy(args: argparse.Namespace) -> None:
    """Grow the load past the generated base (the generator makes ~1,200 sets a second
    a core): copy k of the first `--base` sets gets ids `k * base + id` and every hash
    XORed with copy k's own random 64-bit mask, except the pool's (the scale bench's
    rule for fingerprints past its base: the structure of each copy, its groups and
    their shared runs, is the base's, and copies share nothing by chance; the pool's
    passages stay, so stock phrases gather pages as N grows)."""
    state = state_load(args.database)
    base = args.base
    assert state["loaded"] >= base, "load the base first"
    copies = -(-args.size // base)
    rng = np.random.default_rng(args.seed + 3)
    masks = rng.integers(-(2**63), 2**63 - 1, size=copies, dtype=np.int64).tolist()
    masks[0] = 0
    state["base"], state["masks"] = base, masks
    with psycopg.connect(url(args.database), autocommit=True) as conn:
        for name in any_indexes():
            conn.execute(f"DROP INDEX IF EXISTS {name}")
        conn.execute("CREATE TEMP TABLE pool (h bigint PRIMARY KEY)")
        conn.execute("INSERT INTO pool SELECT unnest(%s::bigint[])", [pool_hashes()])
        conn.execute("ANALYZE pool")
        for k in range(1, copies):
            lo = k * base
            if state.get("copied", 1) > k:
                continue
            t = time.perf_counter()
            with conn.transaction():
                conn.execute(
                    "INSERT INTO ingest_passageset (method, document_id, site_id, fetched_at,"
                    " hashes) SELECT p.method, p.document_id + %(lo)s, p.site_id,"
                    " p.fetched_at, ARRAY(SELECT CASE WHEN pool.h IS NULL THEN u.h # %(mask)s"
                    " ELSE u.h END FROM unnest(p.hashes) AS u(h) LEFT JOIN pool ON pool.h = u.h)"
                    " FROM ingest_passageset p WHERE p.document_id <= %(last)s",
                    {"lo": lo, "mask": masks[k], "last": min(base, args.size - lo)},
                )
            state["copied"] = k + 1
            state["loaded"] = min(args.size, lo + base)
            state_save(args.database, state)
            print(f"copy {k}: {state['loaded']:,} ({time.perf_counter() - t:.0f} s)", flush=True)
    common_record(args.database)


# --- indexes ---


def index(args: argparse.Namespace) -> None:
    with psycopg.connect(url(args.database), autocommit=True) as conn:
        conn.execute(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'")
        for bits in BUCKET_BITS:
            conn.execute(bucket_function(bits))
        existing = {
            r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname='public'")
        }
        for variant, name in all_indexes().items():
            if name in existing:
                continue
            t = time.perf_counter()
            conn.execute(index_sql(variant))
            print(f"{variant}: built in {time.perf_counter() - t:.0f} s", flush=True)
        conn.execute("VACUUM ANALYZE ingest_passageset")


# --- measure ---


def statements() -> dict[str, str]:
    """The product's lookup statement and its bucketed twin (the exact test kept as the
    heap recheck, inside the LIMIT: the limit counts true holders only)."""
    from ingest import passages

    # The product's statement (bucketed since ingest 0032) with its bucket test taken
    # out: the plain GIN's probe, as before 0031.
    product = passages._PG_QUERY.format(window="")
    probe = "p.hashes @> ARRAY[wanted.h]"
    plain = re.sub(
        r"passage_buckets\(p\.hashes\) @> passage_buckets\(ARRAY\[wanted\.h\]\)\s+AND ", "", product
    )
    assert probe in plain and "passage_buckets" not in plain
    out = {"plain": plain}
    for bits in BUCKET_BITS:
        bucketed = (
            f"passage_buckets_{bits}(p.hashes) @> passage_buckets_{bits}(ARRAY[wanted.h]) "
            f"AND {probe}"
        )
        out[f"b{bits}"] = plain.replace(probe, bucketed)
    return out


def params(signed: list[int]) -> list[object]:
    df = common_df()
    m = PASSAGE_METHOD
    return [signed, m, m, df, m, df, df]


def queries(state: dict[str, Any], n: int, seed: int) -> list[list[int]]:
    """Half new copies of a stored group's first member (80% of its passages, the rest
    new), half random texts: each a 5 KB article's passages, signed, sorted, distinct."""
    rng = np.random.default_rng(seed)
    firsts = sorted(state["saved"].items(), key=lambda kv: int(kv[0]))
    masks = np.array(state.get("masks", [0])[: state.get("copied", 1)], dtype=np.int64)
    pool = np.array(pool_hashes(), dtype=np.int64)
    out = []
    for q in range(n):
        hashes = sb.passage_hashes(rng, ARTICLE_PASSAGES)
        if q % 2 == 0 and firsts:
            # A stored group's first member, in any copy of the base.
            src = np.array(firsts[int(rng.integers(0, len(firsts)))][1], dtype=np.int64)
            mask = masks[int(rng.integers(0, len(masks)))]
            src = np.where(np.isin(src, pool), src, src ^ mask)
            take = min(len(src), int(ARTICLE_PASSAGES * COPY_SHARE))
            hashes[:take] = src[:take]
        out.append(sorted({int(h) for h in hashes.tolist()}))
    return out


def truth(conn: Any, qs: list[list[int]]) -> list[list[tuple]]:
    """Each query's answer from one scan of every stored set (no index): what the
    statement answers by its rules — template passages and recorded stock phrases never
    probed, a passage on PASSAGE_COMMON_DF pages or more dropped, the rest counted per
    page with the page's stored size."""
    wanted = sorted(set().union(*map(set, qs)))
    df = common_df()
    m = PASSAGE_METHOD
    unused = {
        h
        for (h,) in conn.execute(
            "SELECT hash FROM ingest_passagecommon WHERE method = %s AND df >= %s"
            " UNION SELECT hash FROM ingest_passagetemplate WHERE method = %s",
            [m, df, m],
        )
    }
    conn.execute("CREATE TEMP TABLE wanted (h bigint PRIMARY KEY) ON COMMIT DROP")
    conn.execute(
        "INSERT INTO wanted SELECT unnest(%s::bigint[])", [[h for h in wanted if h not in unused]]
    )
    conn.execute("ANALYZE wanted")
    holders: dict[int, list[tuple[int, int]]] = {}
    for h, d, size in conn.execute(
        "SELECT u.h, p.document_id, cardinality(p.hashes) FROM ingest_passageset p"
        " CROSS JOIN LATERAL unnest(p.hashes) AS u(h) JOIN wanted w ON w.h = u.h"
        " WHERE p.method = %s",
        [m],
    ):
        holders.setdefault(h, []).append((d, size))
    conn.rollback()
    out = []
    for q in qs:
        shared: dict[int, list[int]] = {}
        for h in q:
            held = holders.get(h, [])
            if h in unused or len(held) >= df:
                continue
            for d, size in held:
                shared.setdefault(d, []).append(size)
        out.append(sorted((d, len(sizes), min(sizes)) for d, sizes in shared.items()))
    return out


def run(conn: Any, sql: str, qs: list[list[int]]) -> tuple[list[float], list[list[tuple]]]:
    ms, answers = [], []
    with conn.cursor() as cur:
        for q in qs[:5]:  # warm: the generic plan, the upper index pages
            cur.execute(sql, params(q), prepare=True).fetchall()
        for q in qs:
            t = time.perf_counter()
            rows = cur.execute(sql, params(q), prepare=True).fetchall()
            ms.append((time.perf_counter() - t) * 1000)
            answers.append(sorted(rows))
    return ms, answers


def buffers(conn: Any, sql: str, qs: list[list[int]]) -> dict[str, Any]:
    touched, plans = [], set()
    with conn.cursor() as cur:
        for q in qs:
            (plan,) = cur.execute(
                "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params(q)
            ).fetchone()
            top = plan[0]["Plan"]
            touched.append(top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0))
            plans.add(index_used(top))
    return {
        "buffers_p50": statistics.median(touched),
        "buffers_p95": sb.pctl(touched, 0.95),
        "indexes_used": sorted(plans),
    }


def index_used(node: dict[str, Any]) -> str:
    found = node.get("Index Name", "")
    for child in node.get("Plans", ()):
        found = found or index_used(child)
    return found


def sizes(conn: Any) -> dict[str, Any]:
    (n,) = conn.execute("SELECT count(*) FROM ingest_passageset").fetchone()
    (hashes,) = conn.execute("SELECT sum(cardinality(hashes)) FROM ingest_passageset").fetchone()
    out: dict[str, Any] = {"documents": n, "stored_hashes": int(hashes)}
    out["stored_per_doc"] = round(int(hashes) / n, 2)
    (heap,) = conn.execute("SELECT pg_table_size('ingest_passageset')").fetchone()
    (pk,) = conn.execute("SELECT pg_relation_size('ingest_passageset_pkey')").fetchone()
    out["heap_b_per_doc"] = round(heap / n, 1)
    out["pkey_b_per_doc"] = round(pk / n, 1)
    for variant, name in all_indexes().items():
        (size,) = conn.execute(
            "SELECT coalesce(pg_relation_size(to_regclass(%s)), 0)", [name]
        ).fetchone()
        out[f"{variant}_b_per_doc"] = round(size / n, 1)
        out[f"{variant}_b_per_hash"] = round(size / int(hashes), 2)
        if variant != "plain":
            out[f"{variant}_hashes_per_bucket"] = round(int(hashes) / 2 ** int(variant[1:]), 2)
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    state = state_load(args.database)
    qs = queries(state, args.queries, args.seed + 7)
    sqls = statements()
    out: dict[str, Any] = {"queries": len(qs), "rounds": args.rounds}
    ms: dict[str, list[float]] = {v: [] for v in variants()}
    answers: dict[str, list[list[tuple]]] = {}
    work: dict[str, Any] = {}
    with psycopg.connect(url(args.database)) as conn:
        out.update(sizes(conn))
        conn.commit()
        t = time.perf_counter()
        expected = truth(conn, qs)
        out["truth_scan_s"] = round(time.perf_counter() - t, 1)
        for r in range(args.rounds):
            order = variants() if r % 2 == 0 else variants()[::-1]
            for variant in order:
                # Only this variant's index, for the planner: the others dropped in a
                # transaction that is rolled back.
                for other, name in all_indexes().items():
                    if other != variant:
                        conn.execute(f"DROP INDEX {name}")
                times, got = run(conn, sqls[variant], qs)
                ms[variant] += times
                answers.setdefault(variant, got)
                if r == 0:
                    work[variant] = buffers(conn, sqls[variant], qs[: args.explain])
                conn.rollback()
                print(f"round {r} {variant}: p50 {statistics.median(times):.2f} ms", flush=True)
    for variant in variants():
        got = answers[variant]
        row: dict[str, Any] = {
            "p50_ms": round(statistics.median(ms[variant]), 2),
            "p95_ms": round(sb.pctl(ms[variant], 0.95), 2),
            **work[variant],
            "answers_equal_scan": sum(a == b for a, b in zip(got, expected, strict=True)),
            "hits_mean": round(sum(len(a) for a in got) / len(got), 2),
        }
        out[variant] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stage", choices=("load", "copy", "index", "measure"), required=True)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--database", default="dedup_pb_exp")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--base", type=int, default=1_000_000, help="generated sets (copy)")
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--explain", type=int, default=40)
    parser.add_argument("--maintenance-work-mem", default="1GB")
    parser.add_argument("--json")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="plain,b20,b22,b24")
    args = parser.parse_args()
    global _chosen
    _chosen = [v for v in VARIANTS if v in args.variants.split(",")]
    # Settings and imports only (stored_set, the statement text): no Django connection.
    sb.django_setup(args.database)
    if args.stage == "load":
        load(args)
    elif args.stage == "copy":
        copy(args)
    elif args.stage == "index":
        index(args)
    else:
        out = measure(args)
        text = json.dumps(out, indent=1)
        print(text)
        if args.json:
            Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
