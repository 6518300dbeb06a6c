"""Scale bench: the dedup state of N documents in the product's own tables, in stages.

Stages, each resumable (the state lives in a named database and a small JSON file under
var/; a fresh machine rebuilds what it needs):

- ``load``: creates and migrates the database if missing, then loads documents in
  chunks with COPY: the document row, its fingerprint row (main and full branch), its
  band index entry, its passage set, and, for the 15% of documents that are in groups of
  2–50 (wire stories), the group, its memberships and its pairs as the product stores
  them (one row per near pair of the group). Each chunk commits with the state file, so
  an interrupted load resumes at the next chunk. The band index's btrees (with
  ``--build-after all``: every secondary index of the dedup tables that is not a
  constraint's) are dropped before the first chunk (their definitions kept in the state
  file) and built once after the last: maintained row by row, their random keys made the
  1M load take an hour. A group's member keeps pairs with at most ``--pair-cap`` members
  before it (the product's CANDIDATES_PER_DOCUMENT_MAX by default); ``--passages-until``
  loads passage sets for the first documents only (the passage index at 10M outlasts a
  session; its bytes are then given per set).
- ``passages``: after a load with ``--passages-until``, the remaining documents' passage
  sets, chunk by chunk (resumable), inserted into the indexes as they stand: the GIN
  grows by inserts, as in the product, where the load's is built after it.
- ``measure``: bytes per document per table (heap, indexes, total), the band query at
  k=3 and k=6 (latency, recall against numpy brute force, probes, index entries
  nominated, and whether the most crowded lookup read the table: heap fetches), the
  passage lookup, the check of a 5 KB article text (the check API's service call,
  `ingest.candidates.check`), the review queue page, and PostgreSQL's memory
  (shared_buffers, the backends' peak RSS).

Fingerprints: the real-distribution generator (bench/corpus.py) gives the first
``--base`` documents (cached in bench/out/); larger sizes repeat that base, each copy
XORed with its own random 64-bit mask, which keeps every distance inside a copy and
puts copies far apart (copies never crowd each other's band keys: for the band index
at 10M, give ``--base`` the whole size). Passages: per document a count drawn around the real pages'
one passage per 18 words (articles of 200–1,500 words), hashes unique to the document
except a share taken from a Zipf-distributed pool of common passages (stock phrases,
bylines) and, for a group's members, most of the group's first member's passages.

    python bench/scale_bench.py --size 1000000 --stage all
    python bench/scale_bench.py --size 1000000 --stage measure --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from corpus import real_looking_fingerprints  # noqa: E402

STATE_DIR = ROOT / "var"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
SITES = 200
GROUPED_SHARE = 0.15
COMMON_POOL = 50_000
# Seconds between two documents' fetch times (--spacing): 30 puts 1M documents over a
# year; a smaller load spread over a year takes a larger spacing.
SPACING_SECONDS = 30
# The tables of the dedup state (embeddings and MinHash apart), and what each holds.
DEDUP_TABLES = {
    "ingest_fingerprint": "SimHash: the fingerprint row (main, full) with the text digests",
    "ingest_indexentry": "SimHash band index",
    "ingest_passageset": "passages and their GIN index",
    "ingest_candidatepair": "pairs",
    "ingest_candidategroup": "groups",
    "ingest_groupmember": "group memberships",
}


def signed(values: np.ndarray) -> np.ndarray:
    return values.astype(np.uint64).view(np.int64)


def database_url(name: str) -> str:
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    return base.rsplit("/", 1)[0] + "/" + name


def django_setup(name: str) -> None:
    os.environ["DATABASE_URL"] = database_url(name)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
    import django

    django.setup()


def ensure_database(name: str) -> bool:
    """Create the database if it is missing; whether it was."""
    import psycopg

    with psycopg.connect(database_url("postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        conn.execute(f'CREATE DATABASE "{name}"')
        return True


class State:
    def __init__(self, path: Path, size: int, database: str) -> None:
        self.path = path
        self.data: dict[str, Any] = {"size": size, "database": database, "loaded": 0}
        if path.exists():
            old = json.loads(path.read_text())
            if old.get("database") == database:
                self.data.update({k: v for k, v in old.items() if k != "size"})
        self.data["size"] = size

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=1))


def fingerprints(n: int, base: int, seed: int) -> np.ndarray:
    b = min(n, base)
    values = np.asarray(real_looking_fingerprints(b, seed, processes=2), dtype=np.uint64)
    if n <= b:
        return values[:n]
    rng = np.random.default_rng(seed + 1)
    copies = -(-n // b)
    masks = rng.integers(0, 2**63, size=copies, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    masks[0] = 0
    return (np.tile(values, copies) ^ np.repeat(masks, b))[:n]


def group_plan(n: int, seed: int, chunk: int) -> list[tuple[int, int]]:
    """(first document index, size) of each group: 15% of documents, sizes 2..50 with
    small groups the most common, each group's members consecutive. Laid out from the
    start, a group then a gap, so the plan of n documents is the start of the plan of
    more (a larger load resumes a smaller one)."""
    rng = np.random.default_rng(seed + 2)
    plan: list[tuple[int, int]] = []
    start = 0
    while start < n:
        size = int(min(50, 1 + rng.zipf(1.8)))
        # Gaps average size * 85/15 documents: 15% of documents end up in groups.
        gap = int(rng.exponential(size * (1 - GROUPED_SHARE) / GROUPED_SHARE))
        start += gap
        # A group loads with the chunk of its first member: it ends inside that chunk.
        end = min(start + size, n, (start // chunk + 1) * chunk)
        if end - start >= 2:
            plan.append((start, end - start))
        start = max(start, end)
    return plan


def groups_of(n: int, seed: int, chunk: int) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The group plan and each document's group (-1: none), by document index."""
    plan = group_plan(n, seed, chunk)
    group_of = np.full(n, -1, dtype=np.int64)
    for g, (start, s) in enumerate(plan):
        group_of[start : start + s] = g
    return plan, group_of


def passage_counts_of(language: str, data: Path) -> list[int] | None:
    """The real texts' passage counts a language's load draws from (None: the model)."""
    return None if language == "model" else real_passage_counts(language, data)


def real_passage_counts(language: str, data: Path) -> list[int]:
    """The passage counts (before storage) of the real gold texts of a language in the
    development data (``--language``): English from extraction-dev's AEB articles,
    Chinese from zh-vi-dev and extraction-dev's Chinese readability pages, Vietnamese
    from zh-vi-dev; each distinct text once, read as the shipped method reads it (mixed
    script: a CJK character is a token). Cached in bench/out/."""
    import gzip

    from ingest.core import passages as core

    cache = BENCH / "out" / f"passage_counts_{language}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    texts: set[str] = set()
    for line in (data / "extraction-dev" / "manifest.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        gold = row.get("gold_text") or ""
        han = sum("\u4e00" <= ch <= "\u9fff" for ch in gold)
        is_zh = han > 0.3 * len(gold.replace(" ", ""))
        if gold and ((language == "en" and row["set"] == "aeb") or (language == "zh" and is_zh)):
            texts.add(gold)
    with gzip.open(data / "zh-vi-dev" / "pages.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("gold_text") and row["lang"] == language:
                texts.add(row["gold_text"])
    if not texts:
        raise SystemExit(f"no gold text of language {language!r} under {data}")
    counts = sorted(len(core.passages(t, method=core.MIXED_METHOD)) for t in texts)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(counts))
    return counts


def passage_hashes(rng: np.random.Generator, count: int) -> np.ndarray:
    own = rng.integers(-(2**63), 2**63 - 1, size=count, dtype=np.int64)
    common = rng.random(count) < 0.05
    if common.any():
        ranks = np.minimum(rng.zipf(1.3, size=int(common.sum())), COMMON_POOL)
        # A fixed odd multiplier spreads the ranks over the 64-bit range (mod 2**64).
        spread = ranks.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        own[common] = spread.view(np.int64)
    return own


def load(args: argparse.Namespace) -> None:
    created = ensure_database(args.database)
    django_setup(args.database)
    from django.core.management import call_command
    from django.db import connection

    state = State(args.state, args.size, args.database)
    if created:  # a fresh machine, or a dropped database: the state file is stale
        state.data = {"size": args.size, "database": args.database, "loaded": 0}
    if not state.data.get("migrated"):
        # --migrate-to: an earlier schema of the ingest app (e.g. 0025, before the time
        # partitions) to measure the same load on it.
        call_command("migrate", verbosity=0)
        if args.migrate_to:
            call_command("migrate", "ingest", args.migrate_to, verbosity=0)
        state.data["migrated"] = True
        state.save()
    values = fingerprints(args.size, args.base, args.seed)
    plan, group_of = groups_of(args.size, args.seed, args.chunk)
    connection.ensure_connection()
    conn = connection.connection
    from django.conf import settings

    from ingest.services import methods_ensure

    method_id = methods_ensure()[settings.ACTIVE_METHOD].pk
    passage_method = passage_method_of(args.passage_storage)
    state.data["passage_method"] = passage_method
    with conn.cursor() as cur:
        if not cur.execute("SELECT count(*) FROM ingest_site").fetchone()[0]:
            with cur.copy(
                "COPY ingest_site (id, host, priority, default_doc_type) FROM STDIN"
            ) as cp:
                for s in range(1, SITES + 1):
                    cp.write_row((s, f"site{s}.example.com", 0, "article"))
            cur.execute("SELECT setval('ingest_site_id_seq', %s)", [SITES])
    state.data["method_id"] = method_id
    # A resumed load keeps the first session's pair cap and passage limit.
    state.data.setdefault("pair_cap", args.pair_cap or settings.CANDIDATES_PER_DOCUMENT_MAX)
    state.data.setdefault("passages_until", args.passages_until or args.size)
    state.data.setdefault("language", args.language)
    state.data.setdefault("chunk", args.chunk)
    # The measure stage compares the band lookups with brute force over these values.
    state.data.setdefault("base", args.base)
    real_counts = passage_counts_of(state.data["language"], args.data)
    state.save()
    t_start = time.perf_counter()
    deferred_indexes_drop(conn, state, args.build_after == "all")
    # A session stops at a chunk's end: a group never straddles two sessions.
    until = min(args.size, -(-(args.until or args.size) // args.chunk) * args.chunk)
    while state.data["loaded"] < until:
        lo = state.data["loaded"]
        hi = min(until, lo + args.chunk)
        t = time.perf_counter()
        with conn.transaction():
            load_chunk(
                conn,
                lo,
                hi,
                values,
                plan,
                group_of,
                method_id,
                args.seed,
                passage_method,
                pair_cap=int(state.data["pair_cap"]),
                passages_until=int(state.data["passages_until"]),
                real_counts=real_counts,
            )
        state.data["loaded"] = hi
        state.data.setdefault("load_seconds", 0.0)
        state.data["load_seconds"] += time.perf_counter() - t
        state.save()
        print(f"loaded {hi}/{args.size} ({time.perf_counter() - t:.1f} s)", flush=True)
    if state.data["loaded"] >= args.size:
        deferred_indexes_build(conn, state)
        common_passages_record(conn, state)
    with conn.cursor() as cur:
        for table in (
            "ingest_document",
            "ingest_fingerprint",
            "ingest_candidatepair",
            "ingest_candidategroup",
        ):  # memberships have no serial id since ingest 0030
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT coalesce(max(id), 1) FROM {table}))"
            )
        cur.execute("VACUUM ANALYZE")
    print(f"load done in {time.perf_counter() - t_start:.1f} s", flush=True)


# Secondary indexes of random keys (the band btrees, the digests, the passage GIN)
# are most of a large load's time when maintained row by row (an hour at 1M for the
# band btrees alone): with --build-after band (the default) the band btrees, with
# --build-after all every index of the dedup tables that is neither a primary key nor
# a constraint's, are dropped before the first chunk and built once after the last, as
# the product's migrations define them. A built index is not the size of one grown by
# inserts: at 200k the built passage GIN was 29% larger than the grown one (built from
# sorted keys, its pages split half full) and the hash digest indexes 5-9% smaller, the
# other indexes the same (bench/results/2026-12-03-scale-10m.md).
_DEFERRABLE = """
SELECT ic.relname, pg_get_indexdef(ic.oid) FROM pg_index x
JOIN pg_class ic ON ic.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = ANY(%s)
    AND NOT x.indisprimary
    AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
    AND (%s OR ic.relname LIKE '%%dedup_band_key_%%')
ORDER BY ic.relname
"""
LOADED_TABLES = ("ingest_document", *DEDUP_TABLES)


def deferred_indexes_drop(conn: Any, state: State, every: bool) -> None:
    """Drop the indexes the load defers, their definitions kept in the state file (a
    resumed load finds them there, and builds them when the last chunk is in)."""
    if state.data.get("indexes_dropped") or state.data["loaded"] >= state.data["size"]:
        return
    with conn.cursor() as cur:
        found = cur.execute(_DEFERRABLE, [list(LOADED_TABLES), every]).fetchall()
    with conn.transaction(), conn.cursor() as cur:
        for name, _ in found:
            cur.execute(f"DROP INDEX {name}")
        state.data["deferred_indexes"] = [definition for _, definition in found]
        state.data["indexes_dropped"] = True
        state.save()
    print(f"indexes dropped for the load: {len(found)}", flush=True)


def deferred_indexes_build(conn: Any, state: State) -> None:
    """Build the indexes dropped for the load (on a partitioned table PostgreSQL builds
    each partition's), each timed. The VACUUM at the load's end then sets the
    visibility map, which lets the band lookup's index-only scans skip the table."""
    if not state.data.get("indexes_dropped"):
        return
    t0 = time.perf_counter()
    seconds = state.data.setdefault("index_build_seconds", {})
    with conn.cursor() as cur:
        cur.execute("SET maintenance_work_mem = '1GB'")
        for definition in state.data["deferred_indexes"]:
            # pg_get_indexdef writes a partitioned index "ON ONLY" the parent (no
            # partition's index made): built on the whole tree instead.
            sql = definition.replace(" ON ONLY ", " ON ", 1)
            sql = re.sub(r"^CREATE (UNIQUE )?INDEX ", r"CREATE \1INDEX IF NOT EXISTS ", sql)
            t = time.perf_counter()
            cur.execute(sql)
            seconds[sql.split(" IF NOT EXISTS ", 1)[1].split(" ", 1)[0]] = round(
                time.perf_counter() - t, 1
            )
            state.save()
        cur.execute("RESET maintenance_work_mem")
    state.data["indexes_dropped"] = False
    state.save()
    print(f"deferred indexes built in {time.perf_counter() - t0:.1f} s", flush=True)


def passage_bytes(cur: Any) -> bool:
    """Whether the passage sets keep their hashes as bytes (ingest 0037 on: a bytea of 8
    bytes a hash) rather than as a bigint[] (before it, --migrate-to earlier)."""
    cur.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'ingest_passageset'"
        " AND column_name = 'hashes' AND table_schema = current_schema()"
    )
    row = cur.fetchone()
    return row is not None and row[0] == "bytea"


def passage_hashes_sql(cur: Any, column: str = "hashes") -> str:
    """SQL reading a passage set's hashes as a bigint[], in either layout."""
    return f"passage_hashes({column})" if passage_bytes(cur) else column


def passage_copy_row(row: tuple[int, int, int, datetime, list[int]], packed: bool) -> tuple:
    """A passage_rows row as COPY writes it: the hashes packed when the column is bytea."""
    from ingest.models import hashes_pack

    return (*row[:4], hashes_pack(row[4])) if packed else row


def common_passages_record(conn: Any, state: State) -> None:
    """Record the stock phrases as ingest would have: a passage on PASSAGE_COMMON_DF
    pages or more is in ingest_passagecommon (ingest.passages: the probe that first
    finds it on that many pages records it, its count stopped there), and the lookup
    drops it without reading its posting list. Once, after the last chunk."""
    if state.data.get("common_recorded"):
        return
    from django.conf import settings

    t = time.perf_counter()
    common_df = settings.PASSAGE_COMMON_DF
    with conn.transaction(), conn.cursor() as cur:
        hashes = passage_hashes_sql(cur, "p.hashes")
        cur.execute(
            "INSERT INTO ingest_passagecommon (method, hash, df, created_at)"
            " SELECT p.method, h, least(count(*), %s), now()"
            f" FROM ingest_passageset p, unnest({hashes}) AS h"
            " GROUP BY p.method, h HAVING count(*) >= %s ON CONFLICT DO NOTHING",
            [common_df, common_df],
        )
        state.data["common_passages"] = cur.rowcount
    state.data["common_recorded"] = True
    state.save()
    print(
        f"stock phrases recorded: {state.data['common_passages']} "
        f"({time.perf_counter() - t:.1f} s)",
        flush=True,
    )


def months_ensure(fetched: list[datetime]) -> None:
    """The channel indexes' partitions for these fetch times, made the way the product's
    writers make them before their rows go in (ingest/partitions.py); nothing on a
    database from before the partitions (--migrate-to)."""
    from ingest import partitions

    if not partitions.partitioned():
        return
    for table in partitions.TABLES:
        partitions.months_ensure(table, fetched)


def relation_sizes(cur: Any, table: str) -> tuple[int, int, int, dict[str, int]]:
    """(heap, indexes, total, bytes per index) of a table, its partitions summed when it
    is partitioned (the parent itself holds nothing)."""
    # pg_partition_tree lists a partitioned table's tree, and nothing for a plain table.
    cur.execute(
        "SELECT coalesce(sum(pg_relation_size(r)), 0), coalesce(sum(pg_indexes_size(r)), 0),"
        " coalesce(sum(pg_total_relation_size(r)), 0) FROM ("
        " SELECT relid AS r FROM pg_partition_tree(%s::regclass)"
        " UNION SELECT %s::regclass WHERE (SELECT relkind FROM pg_class"
        " WHERE oid = %s::regclass) <> 'p') AS t",
        [table, table, table],
    )
    heap, idx, total = cur.fetchone()
    cur.execute(
        "SELECT i.relname, greatest(pg_relation_size(i.oid), (SELECT coalesce("
        "sum(pg_relation_size(t.relid)), 0) FROM pg_partition_tree(i.oid) t))"
        " FROM pg_index x JOIN pg_class i "
        "ON i.oid = x.indexrelid WHERE x.indrelid = %s::regclass ORDER BY 1",
        [table],
    )
    return int(heap), int(idx), int(total), {name: int(size) for name, size in cur.fetchall()}


def passage_method_of(storage_key: str) -> int:
    """The words passage method (its number) of a passage storage."""
    from ingest import passages
    from ingest.core import passages as core

    storage = core.STORAGES[storage_key]
    return next(
        i
        for i, name in passages.METHODS.items()
        if name == core.METHOD and passages.STORAGES[i] == storage
    )


def stored_set(hashes: np.ndarray, passage_method: int) -> list[int]:
    """What the passage method's storage keeps of a document's passages (signed): the
    generated hashes read as a text's passages one per 18 words in their order, so a
    group member's share of its first member's passages is a shared run of text."""
    from ingest import passages
    from ingest.core import passages as core

    found = [core.Passage(core.to_unsigned(int(h)), 18 * j) for j, h in enumerate(hashes.tolist())]
    return [core.to_signed(h) for h in passages.STORAGES[passage_method].stored(found)]


def chunk_draws(
    seed: int, lo: int, hi: int, real_counts: list[int] | None
) -> tuple[np.random.Generator, np.ndarray, list[datetime], np.ndarray, np.ndarray, np.ndarray]:
    """A chunk's documents and its first draws: (rng, ids, fetch times, sites, word
    counts, passage counts), the rng left where the passages draw next."""
    rng = np.random.default_rng([seed, lo])
    ids = np.arange(lo + 1, hi + 1)
    fetched = [fetched_of(int(i)) for i in ids]
    sites = (ids % SITES) + 1
    words = rng.integers(200, 1500, size=hi - lo)
    # A text's passage count: one per 18 words of its 200-1,500 (the default), or drawn
    # from a language's real texts (--language).
    counts = (
        np.maximum(3, words // 18)
        if real_counts is None
        else rng.choice(np.asarray(real_counts), size=hi - lo)
    )
    return rng, ids, fetched, sites, words, counts


def passage_rows(
    draws: tuple[np.random.Generator, np.ndarray, list[datetime], np.ndarray, np.ndarray],
    plan: list[tuple[int, int]],
    group_of: np.ndarray,
    passage_method: int,
    passages_until: int,
) -> Iterator[tuple[int, int, int, datetime, list[int]]]:
    """The chunk's passage set rows up to document `passages_until`: a group's members
    take most of its first member's passages (a group never straddles two chunks)."""
    rng, ids, fetched, sites, counts = draws
    first_passages: dict[int, np.ndarray] = {}
    for j, i in enumerate(ids):
        if i > passages_until:
            break
        hashes = passage_hashes(rng, int(counts[j]))
        g = int(group_of[i - 1])
        if g >= 0:
            start = plan[g][0]
            if start == i - 1:
                first_passages[g] = hashes
            elif g in first_passages:
                src = first_passages[g]
                take = min(len(src), int(len(hashes) * 0.8))
                hashes[:take] = src[:take]
        yield (
            passage_method,
            int(i),
            int(sites[j]),
            fetched[j],
            stored_set(hashes, passage_method),
        )


# What a forked worker of the passages stage reads: the load's group plan (set before
# the fork, so the worker shares it rather than receiving it).
_EXTEND: dict[str, Any] = {}


def _extend_rows(lo: int, hi: int) -> list[tuple]:
    """A chunk's passage set rows as COPY writes them (in the passages stage's worker)."""
    e = _EXTEND
    rng, ids, fetched, sites, _, counts = chunk_draws(e["seed"], lo, hi, e["real_counts"])
    rows = passage_rows(
        (rng, ids, fetched, sites, counts), e["plan"], e["group_of"], e["method"], hi
    )
    return [passage_copy_row(row, e["packed"]) for row in rows]


def passages_extend(args: argparse.Namespace) -> None:
    """Stage ``passages``: after a load made with --passages-until, add the passage sets
    of the documents after that limit, chunk by chunk (resumable: the limit moves with
    each committed chunk), into the indexes as they stand, so that the GIN grows by
    inserts as in the product. The sets are those a load of every set would have made
    (the same draws); the stock phrases are then recorded again. A forked worker draws
    the next chunk's sets while the database takes this one's (two cores: about half
    the time of one after the other)."""
    django_setup(args.database)
    from django.db import connection

    state = State(args.state, args.size, args.database)
    if state.data.get("loaded", 0) < args.size:
        raise SystemExit("load every document first (--stage load)")
    if state.data.get("chunk", args.chunk) != args.chunk:
        raise SystemExit(f"--chunk must be the load's ({state.data['chunk']}): it plans the groups")
    plan, group_of = groups_of(args.size, args.seed, args.chunk)
    if int(state.data["passages_until"]) % args.chunk:
        raise SystemExit("the sets resume at a chunk's start: --passages-until was not one")
    connection.ensure_connection()
    conn = connection.connection
    with conn.cursor() as cur:
        packed = passage_bytes(cur)
    _EXTEND.update(
        seed=args.seed,
        real_counts=passage_counts_of(state.data.get("language", "model"), args.data),
        plan=plan,
        group_of=group_of,
        method=int(state.data["passage_method"]),
        packed=packed,
    )
    until = min(args.size, args.until or args.size)
    # The worker never touches the database; it exits without closing the inherited
    # connection (a pool worker leaves by os._exit).
    with multiprocessing.get_context("fork").Pool(1) as pool:
        lo = int(state.data["passages_until"])
        pending = (
            pool.apply_async(_extend_rows, (lo, min(until, lo + args.chunk)))
            if lo < until
            else None
        )
        while pending is not None:
            t = time.perf_counter()
            lo = int(state.data["passages_until"])
            hi = min(until, lo + args.chunk)
            rows = pending.get()
            drawn = time.perf_counter() - t
            pending = (
                pool.apply_async(_extend_rows, (hi, min(until, hi + args.chunk)))
                if hi < until
                else None
            )
            with (
                conn.transaction(),
                conn.cursor() as cur,
                cur.copy(
                    "COPY ingest_passageset (method, document_id, site_id, fetched_at, hashes) "
                    "FROM STDIN"
                ) as cp,
            ):
                for row in rows:
                    cp.write_row(row)
            state.data["passages_until"] = hi
            state.data["common_recorded"] = False
            state.data.setdefault("passages_extend_seconds", 0.0)
            state.data["passages_extend_seconds"] += time.perf_counter() - t
            state.save()
            print(
                f"passage sets {hi}/{args.size} ({time.perf_counter() - t:.1f} s, "
                f"{drawn:.1f} s of it waiting for the draws)",
                flush=True,
            )
    if state.data["passages_until"] >= args.size:
        common_passages_record(conn, state)  # adds the phrases the new sets made common
        with conn.cursor() as cur:
            cur.execute("VACUUM ANALYZE ingest_passageset")


def load_chunk(
    conn: Any,
    lo: int,
    hi: int,
    values: np.ndarray,
    plan: list[tuple[int, int]],
    group_of: np.ndarray,
    method_id: int,
    seed: int,
    passage_method: int,
    *,
    pair_cap: int,
    passages_until: int,
    real_counts: list[int] | None = None,
) -> None:
    rng, ids, fetched, sites, words, counts = chunk_draws(seed, lo, hi, real_counts)
    sims = signed(values[lo:hi])
    with conn.cursor() as cur:
        with cur.copy(
            "COPY ingest_document (id, site_id, url, final_url, http_status, fetched_at, "
            "content_type, declared_encoding, detected_encoding, raw_sha256, raw_size, "
            "doc_type, doc_type_source, doc_type_evidence, headers, charset_forced, "
            "created_at) FROM STDIN"
        ) as cp:
            for j, i in enumerate(ids):
                cp.write_row(
                    (
                        int(i),
                        int(sites[j]),
                        f"https://site{sites[j]}.example.com/a/{i}",
                        "",
                        200,
                        fetched[j],
                        "text/html",
                        "",
                        "utf-8",
                        hashlib.sha256(b"raw%d" % i).digest(),
                        40_000,
                        "article",
                        "",
                        "",
                        "{}",
                        False,
                        fetched[j],
                    )
                )
        # One row a document and method from ingest 0035 on, without status columns
        # from 0040 on; before 0035 a row a branch, and before 0034 with a creation time
        # (--migrate-to earlier).
        cur.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'ingest_fingerprint'"
        )
        layout = {name for (name,) in cur.fetchall()}
        if "branch" not in layout:
            stored = "status" in layout
            with cur.copy(
                "COPY ingest_fingerprint (document_id, method_id, simhash, text_sha256, "
                "token_count, full_simhash"
                f"{', status, full_status' if stored else ''}) FROM STDIN"
            ) as cp:
                for j, i in enumerate(ids):
                    digest = hashlib.sha256(b"text%d" % i).digest()
                    value = int(sims[j])
                    row = (int(i), method_id, value, digest, int(words[j]), value)
                    cp.write_row((*row, "ok", "ok") if stored else row)
        else:
            dated = "created_at" in layout
            with cur.copy(
                "COPY ingest_fingerprint (document_id, method_id, branch, status, simhash, "
                f"text_sha256, token_count{', created_at' if dated else ''}) FROM STDIN"
            ) as cp:
                for j, i in enumerate(ids):
                    digest = hashlib.sha256(b"text%d" % i).digest()
                    for branch in ("main", "full"):
                        row = (int(i), method_id, branch, "ok", int(sims[j]), digest, int(words[j]))
                        cp.write_row((*row, fetched[j]) if dated else row)
        months_ensure(fetched)
        with cur.copy(
            "COPY ingest_indexentry (method, document_id, simhash, fetched_at) FROM STDIN"
        ) as cp:
            for j, i in enumerate(ids):
                cp.write_row((method_id, int(i), int(sims[j]), fetched[j]))
        # A bytea of 8 bytes a hash from ingest 0037 on; before it a bigint[].
        packed = passage_bytes(cur)
        with cur.copy(
            "COPY ingest_passageset (method, document_id, site_id, fetched_at, hashes) FROM STDIN"
        ) as cp:
            draws = (rng, ids, fetched, sites, counts)
            for row in passage_rows(draws, plan, group_of, passage_method, passages_until):
                cp.write_row(passage_copy_row(row, packed))
        # Groups whose first member is in this chunk: the group, its members, its pairs.
        starting = [(g, a, s) for g, (a, s) in enumerate(plan) if lo <= a < hi]
        if not starting:
            return
        with cur.copy(
            "COPY ingest_candidategroup (id, method_id, kind, rule, rule_params, "
            "representative_id, representative_reason, representative_by, "
            "representative_locked, size, diameter, chained, oversized, needs_review, "
            "review_note, dissolved, version, created_at, updated_at) FROM STDIN"
        ) as cp:
            for g, a, s in starting:
                cp.write_row(
                    (
                        g + 1,
                        method_id,
                        "near",
                        "single-link",
                        "{}",
                        a + 1,
                        "oldest",
                        "",
                        False,
                        s,
                        3,
                        False,
                        False,
                        False,
                        "",
                        False,
                        1,
                        T0,
                        T0,
                    )
                )
        with cur.copy(
            "COPY ingest_groupmember (group_id, document_id, method_id, added_by, created_at) "
            "FROM STDIN"
        ) as cp:
            for g, a, s in starting:
                for m in range(s):
                    cp.write_row((g + 1, a + m + 1, method_id, "rule:single-link", T0))
        with cur.copy(
            "COPY ingest_candidatepair (method_id, a_id, b_id, doc_type, distance, "
            "full_distance, band, exact, ratio, token_set_ratio, length_ratio, "
            "containment, numbers_differ, ids_differ, title_differs, guard_details, "
            "below_floor, created_at, a_in_b, b_in_a, channels, shared_passages, "
            "uncertainty, cosine, evidence) FROM STDIN"
        ) as cp:
            for _g, a, s in starting:
                # Each member, as it arrives, keeps pairs with at most `pair_cap` of
                # the members before it (CANDIDATES_PER_DOCUMENT_MAX, nearest first):
                # a group of n under the cap is its n(n-1)/2 pairs.
                for y in range(1, s):
                    for x in range(max(0, y - pair_cap), y):
                        d = int(rng.integers(0, 7))
                        # Drawn as when pairs stored their XOR (ingest 0030 dropped
                        # it): the same distances before and after.
                        rng.integers(-(2**63), 2**63 - 1)
                        cp.write_row(
                            (
                                method_id,
                                a + x + 1,
                                a + y + 1,
                                "article",
                                d,
                                d,
                                0,
                                d == 0,
                                0.93,
                                0.97,
                                0.98,
                                0.95,
                                False,
                                False,
                                False,
                                None,  # no number nor id on either side: no guard details
                                False,
                                T0,
                                0.8,
                                0.8,
                                6,
                                30,
                                abs(d - 3),
                                None,
                                # The evidence its columns give is not stored
                                # (CandidatePair.evidence_to_keep): nothing else here.
                                None,
                            )
                        )


def pctl(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def timed(fn: Any, items: list[Any]) -> dict[str, float]:
    ms = []
    for item in items:
        t = time.perf_counter()
        fn(item)
        ms.append((time.perf_counter() - t) * 1000)
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(pctl(ms, 0.95), 3),
        "n": len(ms),
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    django_setup(args.database)
    from django.db import connection

    state = State(args.state, args.size, args.database)
    n = int(state.data["loaded"])
    method_id = int(state.data["method_id"])
    out: dict[str, Any] = {"documents": n, "database": args.database}
    connection.ensure_connection()
    with connection.cursor() as cur:
        tables: dict[str, Any] = {}
        for table in ("ingest_document", *DEDUP_TABLES):
            heap, idx, total, per_index = relation_sizes(cur, table)
            cur.execute("SELECT count(*) FROM " + table)
            (rows,) = cur.fetchone()
            # Passage sets loaded for the first documents only (--passages-until): their
            # bytes a document are per set.
            basis = rows if table == "ingest_passageset" and rows else n
            tables[table] = {
                "rows": rows,
                "documents": basis,
                "heap_b_per_doc": round(heap / basis, 1),
                "indexes_b_per_doc": round(idx / basis, 1),
                "total_b_per_doc": round(total / basis, 1),
                "indexes": {name: round(size / basis, 1) for name, size in per_index.items()},
            }
        cur.execute(
            "SELECT pg_relation_size('document_raw_sha256'), "
            "(SELECT sum(pg_column_size(raw_sha256)) FROM ingest_document)"
        )
        raw_index, raw_column = cur.fetchone()
        exact = (raw_index + int(raw_column)) / n
        out["tables"] = tables
        out["exact_b_per_doc"] = round(exact, 1)
        out["dedup_state_b_per_doc"] = round(
            exact + sum(tables[t]["total_b_per_doc"] for t in DEDUP_TABLES), 1
        )
        cur.execute("SHOW shared_buffers")
        out["shared_buffers"] = cur.fetchone()[0]
        out["load"] = {
            k: state.data.get(k)
            for k in (
                "pair_cap",
                "passages_until",
                "language",
                "common_passages",
                "load_seconds",
                "index_build_seconds",
            )
        }

    from ingest import index, passages

    if args.warm:
        # What a worker does when it starts (ingest.tasks): the band btrees read whole.
        started = time.perf_counter()
        out["band_index_warm"] = {
            "entries_read": index.band_index_warm(),
            "seconds": round(time.perf_counter() - started, 1),
        }
    rng = np.random.default_rng(7)
    with connection.cursor() as cur:
        picks = sorted(rng.choice(np.arange(1, n + 1), size=min(n, args.queries), replace=False))
        cur.execute(
            "SELECT document_id, simhash FROM ingest_indexentry WHERE document_id = ANY(%s)",
            [[int(p) for p in picks]],
        )
        probes = [(d, int(v) & (2**64 - 1)) for d, v in cur.fetchall()]
        with_sets = min(n, int(state.data.get("passages_until") or n))
        set_picks = rng.choice(np.arange(1, with_sets + 1), size=min(with_sets, args.queries))
        cur.execute(
            f"SELECT document_id, {passage_hashes_sql(cur)} FROM ingest_passageset"
            " WHERE document_id = ANY(%s)",
            [sorted({int(p) for p in set_picks})],
        )
        sets = [(d, [int(h) & (2**64 - 1) for h in hs]) for d, hs in cur.fetchall()]
    flips = [
        (v ^ (1 << int(rng.integers(0, 64))) ^ (1 << int(rng.integers(0, 64)))) for _, v in probes
    ]
    # The loaded values (the load's --base, kept in the state file): recall and the
    # entries read are counted over them, so they must be the stored ones.
    values = fingerprints(n, int(state.data.get("base", args.base)), args.seed)
    differ = [d for d, v in probes if int(values[d - 1]) != v]
    if differ:
        raise SystemExit(
            f"the fingerprints generated are not the stored ones (documents {differ[:5]}):"
            " give the load's --base"
        )
    for k in (3, 6):
        index.query(method_id=method_id, value=flips[0], k=k)  # warm
        out[f"band_k{k}"] = timed(
            lambda v, k=k: index.query(method_id=method_id, value=v, k=k), flips
        )
        hits = [len(index.query(method_id=method_id, value=v, k=k)) for v in flips[:50]]
        out[f"band_k{k}"]["hits_mean"] = round(sum(hits) / len(hits), 2)
        out[f"band_k{k}"]["recall_vs_brute_force"] = band_recall(
            index, method_id, flips[:50], k, values
        )
        out[f"band_k{k}"].update(band_work(index, method_id, flips[:50], k, values))
        # The same lookups with a 7-day lookback window around each probe's own fetch
        # time: on partitioned indexes, only the window's months are read.
        windowed = [(v, fetched_of(d)) for (d, _), v in zip(probes, flips, strict=True)]
        out[f"band_k{k}_lookback7"] = timed(
            lambda p, k=k: index.query(
                method_id=method_id, value=p[0], k=k, around=p[1], lookback_days=7
            ),
            windowed,
        )
    passage_method = int(state.data.get("passage_method", 1))
    out["passage_method"] = passages.method_name(passage_method)
    out["passage_lookup"] = timed(
        lambda s: passages.lookup(hashes=s[1], exclude_document=s[0], method=passage_method),
        sets,
    )
    out["passage_lookup_lookback7"] = timed(
        lambda s: passages.lookup(
            hashes=s[1],
            exclude_document=s[0],
            around=fetched_of(s[0]),
            lookback_days=7,
            method=passage_method,
        ),
        sets,
    )
    with connection.cursor() as cur:
        count = "length(hashes) / 8" if passage_bytes(cur) else "cardinality(hashes)"
        cur.execute(
            f"SELECT avg({count}) FROM ingest_passageset WHERE method = %s",
            [passage_method],
        )
        out["stored_passages_mean"] = round(float(cur.fetchone()[0] or 0), 2)
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_partition_tree('ingest_indexentry') WHERE isleaf")
        out["index_partitions"] = cur.fetchone()[0]
    out["check_5kb"] = check_timing(args)
    out["queue_page"] = queue_timing(args)
    out["document_list"] = queue_timing(args, "/")
    out["postgres_backend_peak_rss_mb"] = backend_rss()
    return out


def fetched_of(document_id: int) -> datetime:
    """A loaded document's fetch time (load_chunk's rule)."""
    return T0 + timedelta(seconds=int(document_id) * SPACING_SECONDS)


def band_recall(index: Any, method_id: int, probes: list[int], k: int, values: np.ndarray) -> float:
    """Share of the documents within k bits (numpy over every stored value) that the
    band query returns; 1.0 when it misses none."""
    want = got = 0
    for v in probes:
        near = np.flatnonzero(np.bitwise_count(values ^ np.uint64(v)) <= k) + 1
        found = {h.document_id for h in index.query(method_id=method_id, value=v, k=k)}
        want += len(near)
        got += len(found & set(near.tolist()))
    return round(got / want, 4) if want else 1.0


def band_work(index: Any, method_id: int, probes: list[int], k: int, values: np.ndarray) -> dict:
    """What a band lookup reads: probe keys, index entries nominated (numpy over the
    stored values, both halves counted), and, from one EXPLAIN ANALYZE of the most
    crowded probe, the scan types and the heap fetches (0: index-only)."""
    scheme = index.SCHEME
    halves = [
        (values >> np.uint64(shift)) & np.uint64((1 << width) - 1) for shift, width in scheme.blocks
    ]
    nominated = []
    for v in probes:
        total = 0
        for i, r in enumerate(scheme.radii(k)):
            if r >= 0:
                near = np.bitwise_count(halves[i] ^ np.uint64(scheme.combo_value(v, i))) <= r
                total += int(near.sum())
        nominated.append(float(total))
    crowded = probes[int(np.argmax(nominated))]
    sql, params = index.pg_statement(method_id, crowded, k)
    with index.pg_cursor() as cur:
        cur.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
        plan = cur.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes, heap_fetches = set(), 0
    stack = [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        if "Relation Name" in node:
            nodes.add(node["Node Type"])
        heap_fetches += int(node.get("Heap Fetches", 0))
        stack += node.get("Plans", [])
    return {
        "probes": scheme.probe_count(k),
        "nominated_p50": pctl(nominated, 0.5),
        "nominated_p95": pctl(nominated, 0.95),
        "crowded_plan_scans": sorted(nodes),
        "crowded_plan_heap_fetches": heap_fetches,
        "crowded_plan_ms": plan[0]["Execution Time"],
    }


def check_timing(args: argparse.Namespace) -> dict[str, Any]:
    from ingest import candidates
    from tests.factories import article_text

    texts = []
    for i in range(20):
        t = article_text(100 + i, words=900)
        texts.append(t[:5000])
    try:
        return timed(lambda t: candidates.check(text=t, title="", doc_type="article"), texts)
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


def queue_timing(args: argparse.Namespace, path: str = "/review/") -> dict[str, Any]:
    """A desk page's latency through the test client, as a signed-in editor: the review
    queue (`/review/`) by default; the document list is `/` (figures labelled "queue
    page" before 2026-12-03's 10M run were the document list's)."""
    from django.contrib.auth.models import User
    from django.test import Client

    user, _ = User.objects.get_or_create(
        username="scale-bench", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    try:
        status = client.get(path).status_code
        result = timed(lambda _: client.get(path), list(range(10)))
        result["status"] = status
        return result
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


def backend_rss() -> dict[str, Any]:
    """Peak resident memory (VmHWM, MB) of this database's backends, the largest and in
    all (shared buffers a backend touched count in its RSS)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        pids = [pid for (pid,) in cur.fetchall()]
    peaks = []
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    if not peaks:
        return {}
    return {"max_mb": round(max(peaks), 1), "sum_mb": round(sum(peaks), 1), "backends": len(peaks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--stage", choices=["load", "passages", "measure", "all"], default="all")
    parser.add_argument("--database", default="dedup_scale_bench")
    parser.add_argument("--state", type=Path, default=None)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument(
        "--until", type=int, default=0, help="stop this session's load after so many documents"
    )
    parser.add_argument("--base", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--warm",
        action="store_true",
        help="measure: read the band btrees into memory first, as a starting worker does",
    )
    parser.add_argument("--spacing", type=int, default=30, help="seconds between fetch times")
    parser.add_argument("--migrate-to", default="", help="ingest migration to stop at")
    parser.add_argument(
        "--build-after",
        choices=["band", "all"],
        default="band",
        help="which indexes the load drops and builds after its last chunk",
    )
    parser.add_argument(
        "--pair-cap",
        type=int,
        default=0,
        help="pairs a member keeps with earlier members (default CANDIDATES_PER_DOCUMENT_MAX)",
    )
    parser.add_argument(
        "--passages-until",
        type=int,
        default=0,
        help="load passage sets for the first so many documents only (default all)",
    )
    parser.add_argument(
        "--language",
        choices=["model", "en", "zh", "vi"],
        default="model",
        help="passage counts: one per 18 words of 200-1,500 (model) or a language's real texts",
    )
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument(
        "--passage-storage",
        default="coarse-w150-whole24-v1",
        help="what the passage sets keep (ingest.core.passages.STORAGES)",
    )
    args = parser.parse_args()
    global SPACING_SECONDS
    SPACING_SECONDS = args.spacing
    args.state = args.state or STATE_DIR / f"scale_bench_{args.database}.json"
    if args.stage in ("load", "all"):
        load(args)
    if args.stage == "passages":
        passages_extend(args)
    if args.stage in ("measure", "all"):
        result = measure(args)
        text = json.dumps(result, indent=1)
        print(text)
        if args.json:
            args.json.write_text(text)


if __name__ == "__main__":
    main()
