"""Candidate index benchmark: the project's own code on PostgreSQL.

Everything timed goes through the code the service runs: `ingest.index.entries_add`
(insert), `ingest.index.query` (the band-index lookup: two 32-bit halves, btree
expression indexes of migration 0003, a prepared statement with server-side binding and
the generic plan the settings ask for) and `POST /api/v1/check` through
`django.test.Client` (URL routing, middleware, bearer-token auth, `candidates.check`).

Steps, in a subprocess whose DATABASE_URL points at a fresh database
(`dedup_bench_candidates`, dropped and created, then `migrate` of contenttypes, auth,
sessions and ingest, the apps the measured path touches):

1. For N = 100,000 then 1,000,000 fingerprints of real-looking text (bench/corpus.py,
   default profile, seed 1: biased bits, ~10% near-copies; the first 100,000 of the 1M
   corpus are the 100k corpus), COPY the Document rows the foreign key needs (one Site,
   minimal valid columns) and the IndexEntry rows (document i+1 = fingerprint i), each
   load timed apart, then VACUUM ANALYZE. For each N the index table is emptied
   (TRUNCATE) and all N rows are copied in with its btrees in place, so the indexes
   grow by inserts as a crawl's would (not by CREATE INDEX).
2. Size per fingerprint = (pg_relation_size + pg_indexes_size of ingest_indexentry,
   its partitions summed) / rows, and without the primary key (method, document_id,
   fetched_at; none since ingest 0036); again after a REINDEX at the end of each N
   (freshly built btrees are denser than the ones grown by inserts).
3. `index.query` for k = 3 and k = 6 over 500 queries (half random stored documents,
   half stored near-copies of stored documents, shuffled), after 100 warm-up queries
   on other documents: median and p95, matches per query, rows the band probes nominate
   (a separate COUNT, untimed), recall against numpy brute force on the same stored set
   for every query (must be 1.000; any miss is printed).
4. Insert throughput: 20 batches of 1,000 new rows through `index.entries_add` (one
   INSERT ... ON CONFLICT DO NOTHING per batch, autocommit), values drawn from the stored
   ones under new document ids; the rows are deleted again afterwards.
5. At 1M: 2,000 of the indexed documents get their texts back (the corpus generator is
   replayed for its first 2,000 documents; every text's fingerprint through
   `fingerprint_text` must equal the stored one), stored as Extraction rows and
   Fingerprint rows (the full page the main text); then 300 timed
   `POST /api/v1/check {"text": ...}` (doc type "other"), half stored texts with 1-5
   words edited, half new texts of the same generator, after 20 warm-up requests.
   Matched documents outside the 2,000 get a stand-in text of the same generator
   beforehand, so every match pays its similarity.
6. Comparisons on the same fingerprints and queries: numpy brute force per query, and
   the PyPI `simhash` package's SimhashIndex (k + 1 blocks, Python dicts) on the first
   100 queries (its 1M build is skipped when the 100k build predicts > 3 minutes).

    .venv/bin/python bench/candidates_bench.py [--sizes 100000 1000000] [--keep-db]
    .venv/bin/python bench/bench.py --candidates-only

JSON: bench/out/candidates-<date>-<time>.json. The database is dropped at the end
unless --keep-db. Environment: BENCH_CANDIDATES_DB (default dedup_bench_candidates).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
# The code under test: this checkout, or an export of a commit (bench.py --rev).
PROJECT = Path(os.environ.get("BENCH_PROJECT_ROOT") or ROOT).resolve()
for _path in (BENCH, PROJECT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

PG = "postgres://postgres@127.0.0.1:5432"
DB_NAME = os.environ.get("BENCH_CANDIDATES_DB", "dedup_bench_candidates")
PY = sys.executable

SIZES = (100_000, 1_000_000)
SEED = 1
KS = (3, 6)
QUERIES = 500
WARMUP_QUERIES = 100
INSERT_ROWS = 20_000
INSERT_BATCH = 1_000
CHECK_DOCS = 2_000
CHECK_REQUESTS = 300
CHECK_WARMUP = 20
PKG_QUERIES = 100
PKG_BUILD_LIMIT_S = 180.0
FETCH_STEP_S = 30  # document i was fetched 30 s after document i - 1 (1M: ~347 days)
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
MIGRATE_APPS = ("contenttypes", "auth", "sessions", "ingest")

TARGETS = {
    "recall": 1.0,
    "k3_p95_ms": 5.0,
    "k6_p95_ms": 25.0,
    "bytes_per_fp": 150.0,
    "check_p95_ms": 50.0,
}


def summary(values: list[float] | np.ndarray) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    if not arr.size:
        return {"median": 0.0, "p95": 0.0, "mean": 0.0, "max": 0.0, "n": 0}
    return {
        "median": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "mean": float(arr.mean()),
        "max": float(arr.max()),
        "n": int(arr.size),
    }


# --- the measuring subprocess (Django set up against the bench database) -------------


def database_recreate() -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def database_drop() -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')


def progress(message: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _timestamps(first: int, last: int) -> list[str]:
    """fetched_at of documents first..last-1 (0-based) as PostgreSQL text."""
    base = np.datetime64(BASE_TIME.replace(tzinfo=None), "s")
    stamps = base + np.arange(first, last, dtype=np.int64) * np.timedelta64(FETCH_STEP_S, "s")
    return [s + "+00" for s in np.datetime_as_string(stamps, unit="s").tolist()]


def fetched_at(i: int) -> datetime:
    return BASE_TIME + timedelta(seconds=FETCH_STEP_S * i)


def _copy_lines(sql: str, lines: Any, chunk: int = 50_000) -> None:
    from django.db import connection

    connection.ensure_connection()
    with connection.connection.cursor() as cur, cur.copy(sql) as copy:
        buf: list[str] = []
        for line in lines:
            buf.append(line)
            if len(buf) >= chunk:
                copy.write("".join(buf))
                buf = []
        if buf:
            copy.write("".join(buf))


def documents_copy(site_id: int, first: int, last: int) -> float:
    """Document rows for fingerprints first..last-1 (id = i + 1), minimal valid columns;
    url and raw_sha256 grow with the id, as a crawl's would not, so the document
    indexes are filled in order (their cost is not what this measures)."""
    now = datetime.now(UTC).isoformat()
    stamps = _timestamps(first, last)
    lines = (
        f"{i + 1}\t{site_id}\thttps://bench.example/doc/{i + 1:08d}\t\t200\t{stamps[i - first]}"
        # raw_sha256 is bytea: COPY's text form of bytes is \x and the hex digits.
        f"\ttext/html\t\tutf-8\t\\\\x{i + 1:064x}\t12000\tarticle\t\t\t{{}}\tf\t{now}\n"
        for i in range(first, last)
    )
    started = time.perf_counter()
    _copy_lines(
        "COPY ingest_document (id, site_id, url, final_url, http_status, fetched_at, "
        "content_type, declared_encoding, detected_encoding, raw_sha256, raw_size, doc_type, "
        "doc_type_source, doc_type_evidence, headers, charset_forced, created_at) FROM STDIN",
        lines,
    )
    return time.perf_counter() - started


def entries_copy(method_id: int, values: np.ndarray, first: int, last: int) -> float:
    signed = values[first:last].view(np.int64).tolist()
    stamps = _timestamps(first, last)
    lines = (f"{method_id}\t{first + j + 1}\t{v}\t{stamps[j]}\n" for j, v in enumerate(signed))
    started = time.perf_counter()
    _copy_lines(
        "COPY ingest_indexentry (method, document_id, simhash, fetched_at) FROM STDIN", lines
    )
    return time.perf_counter() - started


def sql(statement: str, params: list[Any] | None = None) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def vacuum_analyze() -> float:
    started = time.perf_counter()
    sql("VACUUM ANALYZE ingest_indexentry")
    return time.perf_counter() - started


def index_sizes() -> dict[str, Any]:
    # Summed over the partitions (ingest 0026); no primary key since ingest 0036 (the
    # unique band btree 0 keeps one row per method and document).
    tree = (
        "SELECT relid FROM pg_partition_tree(%s::regclass)"
        " UNION SELECT %s::regclass WHERE (SELECT relkind FROM pg_class"
        " WHERE oid = %s::regclass) <> 'p'"
    )
    rows = sql("SELECT count(*) FROM ingest_indexentry")[0][0]
    table, indexes = sql(
        "SELECT sum(pg_relation_size(relid))::bigint, sum(pg_indexes_size(relid))::bigint"
        f" FROM ({tree}) t",
        ["ingest_indexentry"] * 3,
    )[0]
    found = sql(
        "SELECT c.relname, i.indisprimary, c.oid::regclass::text FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = 'ingest_indexentry'::regclass ORDER BY c.relname"
    )
    each = {
        name: sql(f"SELECT sum(pg_relation_size(relid))::bigint FROM ({tree}) t", [oid] * 3)[0][0]
        for name, _, oid in found
    }
    pk = sum(each[name] for name, primary, _ in found if primary)
    return {
        "rows": rows,
        "table_bytes": table,
        "indexes_bytes": indexes,
        "pkey_bytes": pk,
        "each_index_bytes": each,
        "bytes_per_fp": (table + indexes) / rows,
        "bytes_per_fp_without_pkey": (table + indexes - pk) / rows,
    }


def pick_queries(sources: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Half random stored documents, half stored near-copies of stored documents,
    shuffled (so every prefix is a mix)."""
    copies = np.flatnonzero((sources[:n] >= 0) & (sources[:n] < n))
    half = QUERIES // 2
    picked = rng.choice(copies, size=min(half, len(copies)), replace=False)
    rest = np.setdiff1d(np.arange(n), picked)
    others = rng.choice(rest, size=QUERIES - len(picked), replace=False)
    out = np.concatenate([others, picked])
    rng.shuffle(out)
    return out


def queries_run(
    method_id: int, values: np.ndarray, queries: np.ndarray, warmup: np.ndarray, k: int
) -> dict[str, Any]:
    from django.db import connection

    from ingest import index

    for qi in warmup.tolist():  # statement prepared, caches warm; not the timed queries
        index.query(method_id=method_id, value=int(values[qi]), k=k)
    latencies, matches, found = [], [], []
    for qi in queries.tolist():
        value = int(values[qi])
        started = time.perf_counter()
        hits = index.query(method_id=method_id, value=value, k=k)
        latencies.append((time.perf_counter() - started) * 1000)
        matches.append(len(hits))
        found.append(hits)
    # Rows the band probes nominate before the exact Hamming filter (diagnostic, untimed).
    count_sql = (
        "SELECT count(*) FROM ingest_indexentry WHERE method = %s AND "
        + index.SCHEME.sql_probe_condition(index.SQL_FUNCTION)
    )
    import psycopg

    nominated = []
    with psycopg.Cursor(connection.connection) as cur:
        for qi in queries.tolist():
            cur.execute(
                count_sql,
                [method_id, *index.SCHEME.probes(int(values[qi]), k)],
                prepare=True,
            )
            nominated.append(cur.fetchone()[0])  # type: ignore[index]
    # Recall against numpy brute force on the same stored set (document id = i + 1).
    brute_ms, misses, extras, truth_total = [], [], [], 0
    for qi, hits in zip(queries.tolist(), found, strict=True):
        value = np.uint64(values[qi])
        started = time.perf_counter()
        dist = np.bitwise_count(values ^ value)
        truth = np.flatnonzero(dist <= k)
        brute_ms.append((time.perf_counter() - started) * 1000)
        want = {int(i) + 1: int(dist[i]) for i in truth}
        got = {h.document_id: h.distance for h in hits}
        truth_total += len(want)
        for doc, d in want.items():
            if got.get(doc) != d:
                misses.append({"query": int(qi) + 1, "document": doc, "distance": d})
        for doc in got.keys() - want.keys():
            extras.append({"query": int(qi) + 1, "document": doc, "distance": got[doc]})
    found_true = truth_total - len(misses)
    return {
        "k": k,
        "queries": len(queries),
        "warmup_queries": len(warmup),
        "probes_per_query": index.SCHEME.probe_count(k),
        "latency_ms": summary(latencies),
        "latency_ms_all": [round(x, 4) for x in latencies],
        "matches_per_query": summary(matches),
        "nominated_per_query": summary(nominated),
        "recall_queries": len(queries),
        "true_matches": truth_total,
        "recall": found_true / truth_total if truth_total else 1.0,
        "misses": misses[:50],
        "miss_count": len(misses),
        "false_matches": len(extras),
        "false_match_examples": extras[:20],
        "numpy_brute_force_ms": summary(brute_ms),
    }


def inserts_run(method_id: int, values: np.ndarray, first_doc: int) -> dict[str, Any]:
    """INSERT_ROWS rows in batches of INSERT_BATCH through index.entries_add."""
    from ingest import index

    rng = np.random.default_rng([SEED, 77])
    picks = values[rng.choice(len(values), size=INSERT_ROWS)].tolist()
    rows = [
        (method_id, first_doc + j, int(v), fetched_at(first_doc - 1 + j))
        for j, v in enumerate(picks)
    ]
    batches = []
    for start in range(0, INSERT_ROWS, INSERT_BATCH):
        batch = rows[start : start + INSERT_BATCH]
        started = time.perf_counter()
        index.entries_add(batch)
        batches.append(time.perf_counter() - started)
    total = sum(batches)
    return {
        "rows": INSERT_ROWS,
        "batch": INSERT_BATCH,
        "seconds": total,
        "rows_per_s": INSERT_ROWS / total,
        "batch_ms": summary([b * 1000 for b in batches]),
    }


def simhash_package(values: np.ndarray, queries: np.ndarray, k: int) -> dict[str, Any]:
    """The PyPI simhash package's SimhashIndex (k + 1 blocks, dict buckets) on the same
    fingerprints: build time, query time, recall."""
    from simhash import Simhash, SimhashIndex

    logging.getLogger("simhash").setLevel(logging.ERROR)  # "Big bucket found" per query
    started = time.perf_counter()
    index = SimhashIndex([], k=k)
    for i, v in enumerate(values.tolist()):
        index.add(str(i), Simhash(v))
    build_s = time.perf_counter() - started
    latencies: list[float] = []
    truth_total = hit_total = 0
    for qi in queries.tolist():
        q = Simhash(int(values[qi]))
        started = time.perf_counter()
        got = {int(x) for x in index.get_near_dups(q)}
        latencies.append((time.perf_counter() - started) * 1000)
        truth = set(np.flatnonzero(np.bitwise_count(values ^ values[qi]) <= k).tolist())
        truth_total += len(truth)
        hit_total += len(truth & got)
    del index
    return {
        "k": k,
        "queries": len(queries),
        "build_s": build_s,
        "latency_ms": summary(latencies),
        "recall": hit_total / truth_total if truth_total else 1.0,
    }


# --- check API ---------------------------------------------------------------------


def _render(words: list[str], seed: int) -> str:
    """Sentences and paragraphs around the words; punctuation and capitals do not change
    the method's tokens (casefolded \\w+ words), so the fingerprint is the bag's."""
    rng = random.Random(seed)
    sentences, i = [], 0
    while i < len(words):
        n = rng.randint(6, 28)
        text = " ".join(words[i : i + n])
        i += n
        sentences.append(text[:1].upper() + text[1:] + ".")
    paragraphs, i = [], 0
    while i < len(sentences):
        n = rng.randint(2, 7)
        paragraphs.append(" ".join(sentences[i : i + n]))
        i += n
    return "\n\n".join(paragraphs)


def _title(words: list[str]) -> str:
    return " ".join(words[:8]).capitalize()


def corpus_documents(count: int) -> list[np.ndarray]:
    """The first `count` documents (word ids) of corpus chunk 0, replayed with the same
    random calls as corpus._chunk: their fingerprints are values[:count]."""
    import corpus

    if count > corpus.RECENT:
        raise ValueError(f"replay supports up to {corpus.RECENT} documents")
    world = corpus._world(SEED, "default")
    rng = np.random.default_rng([SEED, 0])
    recent: list[np.ndarray] = []
    for _ in range(count):
        if recent and rng.random() < corpus.NEAR_COPY_SHARE:
            back = int(rng.integers(1, len(recent) + 1))
            doc = corpus._near_copy(world, rng, recent[-back])
        else:
            doc = corpus._new_document(world, rng)
        recent.append(doc)
    return recent


def _edited(doc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    import corpus

    world = corpus._world(SEED, "default")
    out = doc.copy()
    for _ in range(int(rng.integers(1, 6))):
        at = int(rng.integers(len(out)))
        word = np.int32(np.searchsorted(world.cdf, rng.random(), side="right"))
        kind = int(rng.integers(3))
        if kind == 0:
            out[at] = word
        elif kind == 1:
            out = np.insert(out, at, word)
        else:
            out = np.delete(out, at)
    return out


def check_api_run(method_id: int, values: np.ndarray) -> dict[str, Any]:
    import corpus
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from dedup_site.roles import CRAWLER
    from ingest import index
    from ingest.candidates import threshold_for
    from ingest.core.extract import EXTRACTOR_VERSION
    from ingest.core.methods import fingerprint_text
    from ingest.core.simhash import to_signed64
    from ingest.models import ApiToken, Extraction, Fingerprint

    key = settings.ACTIVE_METHOD
    world = corpus._world(SEED, "default")
    started = time.perf_counter()
    docs = corpus_documents(CHECK_DOCS)
    words = [[world.words[i] for i in doc] for doc in docs]
    texts = [_render(w, seed=i) for i, w in enumerate(words)]
    extractions, prints, drift = [], [], 0
    for i, text in enumerate(texts):
        res = fingerprint_text(key, text, min_tokens=settings.FINGERPRINT_MIN_TOKENS)
        if res.simhash != int(values[i]):
            drift += 1
            continue
        extractions.append(
            Extraction(
                document_id=i + 1,
                extractor_version=EXTRACTOR_VERSION,
                status="ok",
                title=_title(words[i]),
                main_text=text,
                full_text=text,
                main_tokens=res.token_count,
                full_tokens=res.token_count,
            )
        )
        prints.append(
            Fingerprint(
                document_id=i + 1,
                method_id=method_id,
                simhash=to_signed64(res.simhash),
                text_sha256=res.text_sha256,
                token_count=res.token_count,
                full_simhash=to_signed64(res.simhash),
            )
        )
    if drift:
        raise RuntimeError(
            f"{drift} of {CHECK_DOCS} replayed corpus texts do not fingerprint to the "
            "stored value: bench/corpus.py changed; update corpus_documents()"
        )
    Extraction.objects.bulk_create(extractions, batch_size=500)
    Fingerprint.objects.bulk_create(prints, batch_size=500)
    setup_texts_s = time.perf_counter() - started

    # Requests: stored texts with 1-5 words edited, and new texts of the same generator.
    rng = np.random.default_rng([SEED, 4242])
    total = CHECK_REQUESTS + CHECK_WARMUP
    sources = rng.choice(CHECK_DOCS, size=total // 2, replace=False)
    requests: list[dict[str, Any]] = []
    for s in sources.tolist():
        doc = _edited(docs[s], rng)
        w = [world.words[i] for i in doc]
        requests.append({"kind": "edited", "source": s + 1, "text": _render(w, s), "title": ""})
        requests[-1]["title"] = _title(words[s])
    new_rng = np.random.default_rng([SEED, 999_999])
    for j in range(total - len(requests)):
        w = [world.words[i] for i in corpus._new_document(world, new_rng)]
        requests.append({"kind": "new", "source": None, "text": _render(w, 10**6 + j)})
        requests[-1]["title"] = _title(w)
    order = rng.permutation(len(requests))
    requests = [requests[i] for i in order]

    # Matched documents without a text get a stand-in one of the same generator, so the
    # similarity work of every match is paid (the real text of those is not generated).
    k = threshold_for("other")
    have = set(range(1, CHECK_DOCS + 1))
    need: set[int] = set()
    for r in requests:
        res = fingerprint_text(key, r["text"], min_tokens=settings.FINGERPRINT_MIN_TOKENS)
        if res.simhash is not None:
            need |= {
                h.document_id for h in index.query(method_id=method_id, value=res.simhash, k=k)
            }
    need -= have
    stand_rng = np.random.default_rng([SEED, 31337])
    stand_ins = []
    for d in sorted(need):
        w = [world.words[i] for i in corpus._new_document(world, stand_rng)]
        text = _render(w, d)
        stand_ins.append(
            Extraction(
                document_id=d,
                extractor_version=EXTRACTOR_VERSION,
                status="ok",
                title=_title(w),
                main_text=text,
                full_text=text,
                main_tokens=len(w),
                full_tokens=len(w),
            )
        )
    Extraction.objects.bulk_create(stand_ins, batch_size=500)

    user = User.objects.create_user(username="bench-crawler", password=secrets.token_hex(8))
    # The check API answers the crawler role only (a user without a role gets a 403).
    user.groups.add(Group.objects.get_or_create(name=CRAWLER)[0])
    token = secrets.token_urlsafe(24)
    ApiToken.objects.create(
        name="bench", user=user, key_sha256=hashlib.sha256(token.encode()).hexdigest()
    )
    client = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def post(r: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        body = json.dumps({"text": r["text"], "title": r["title"], "doc_type": "other"})
        started = time.perf_counter()
        response = client.post(
            "/api/v1/check", data=body, content_type="application/json", **headers
        )
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"/api/v1/check: {response.status_code} {response.content[:300]!r}")
        return elapsed, response.json()

    for r in requests[:CHECK_WARMUP]:
        post(r)
    by_kind: dict[str, list[float]] = {"edited": [], "new": []}
    verdicts: dict[str, dict[str, int]] = {"edited": {}, "new": {}}
    matches: list[int] = []
    source_found = 0
    all_ms = []
    for r in requests[CHECK_WARMUP:]:
        ms, out = post(r)
        all_ms.append(ms)
        by_kind[r["kind"]].append(ms)
        v = verdicts[r["kind"]]
        v[out["verdict"]] = v.get(out["verdict"], 0) + 1
        matches.append(len(out["matches"]))
        if r["source"] and any(m["document_id"] == r["source"] for m in out["matches"]):
            source_found += 1
    words_per_text = [len(r["text"].split()) for r in requests]
    return {
        "requests": len(all_ms),
        "warmup_requests": CHECK_WARMUP,
        "doc_type": "other",
        "threshold": k,
        "texts_stored": len(extractions),
        "stand_in_texts": len(stand_ins),
        "setup_texts_s": setup_texts_s,
        "words_per_text": summary(words_per_text),
        "latency_ms": summary(all_ms),
        "latency_ms_edited": summary(by_kind["edited"]),
        "latency_ms_new": summary(by_kind["new"]),
        "verdicts": verdicts,
        "matches_per_request": summary(matches),
        "edited_source_found": source_found,
        "edited_requests": len(by_kind["edited"]),
    }


# --- the measuring run ---------------------------------------------------------------


def measure(sizes: list[int], keep_db: bool) -> dict[str, Any]:
    import django

    started_all = time.perf_counter()
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    database_recreate()
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    progress(f"database {DB_NAME} recreated; migrate {', '.join(MIGRATE_APPS)}")
    t = time.perf_counter()
    # The apps the measured path touches: other apps' migrations in progress cannot
    # break this section.
    for app in MIGRATE_APPS:
        call_command("migrate", app, interactive=False, verbosity=0)
    migrate_s = time.perf_counter() - t

    import corpus

    from ingest import index
    from ingest.models import Site
    from ingest.services import methods_ensure

    method = methods_ensure()[settings.ACTIVE_METHOD]
    site = Site.objects.create(host="bench.example", priority=1)
    pg = {
        "version": sql("SHOW server_version")[0][0],
        "shared_buffers": sql("SHOW shared_buffers")[0][0],
        "plan_cache_mode": sql("SHOW plan_cache_mode")[0][0],
        "jit": sql("SHOW jit")[0][0],
    }
    sql("SET maintenance_work_mem = '512MB'")
    t = time.perf_counter()
    biggest = max(sizes)
    # The first m fingerprints of a corpus of n > m are the corpus of m: slice the cached
    # 1M corpus rather than generate a new one for a smaller run.
    all_values, all_sources = corpus.real_looking_fingerprints(
        max(biggest, SIZES[-1]), SEED, with_sources=True
    )
    all_values, all_sources = all_values[:biggest], all_sources[:biggest]
    corpus_s = time.perf_counter() - t
    bias = corpus.bias_report(all_values, all_sources, sample=500)
    progress(f"corpus: {biggest:,} fingerprints in {corpus_s:.1f}s (cached under bench/out/)")
    insert_first_doc = biggest + 1  # documents for the insert test, after the corpus
    documents_copy(site.pk, biggest, biggest + INSERT_ROWS)

    result: dict[str, Any] = {
        "database": DB_NAME,
        "load_avg_at_start": load_at_start,
        "postgres": pg,
        "scheme": index.SCHEME.name,
        "k_max": index.K_MAX,
        "migrate_s": migrate_s,
        "corpus": {"seed": SEED, "profile": "default", "loaded_s": corpus_s, **bias},
        "runs": [],
    }
    documents = 0  # document rows so far (they stay; the index is reloaded per N)
    pkg_100k_build = None
    for n in sorted(sizes):
        run: dict[str, Any] = {"n": n}
        values, sources = all_values[:n], all_sources[:n]
        progress(f"N={n:,}: COPY documents {documents + 1:,}..{n:,}")
        docs_s = documents_copy(site.pk, documents, n)
        docs_added, documents = n - documents, n
        # Every N loads into an empty table whose indexes are in place (TRUNCATE), as a
        # crawl fills it: the btrees grow by inserts, not by CREATE INDEX.
        sql("TRUNCATE ingest_indexentry")
        progress(f"N={n:,}: COPY index rows ({docs_s:.1f}s for the documents)")
        entries_s = entries_copy(method.pk, all_values, 0, n)
        vac_s = vacuum_analyze()
        run["load"] = {
            "documents_added": docs_added,
            "index_rows": n,
            "documents_copy_s": docs_s,
            "index_copy_s": entries_s,
            "index_copy_rows_per_s": n / entries_s,
            "vacuum_analyze_s": vac_s,
        }
        run["size"] = index_sizes()
        progress(
            f"N={n:,}: index rows in {entries_s:.1f}s, VACUUM ANALYZE {vac_s:.1f}s, "
            f"{run['size']['bytes_per_fp']:.1f} B/fp"
        )
        rng = np.random.default_rng([SEED, n])
        queries = pick_queries(sources, n, rng)
        warmup = rng.choice(np.setdiff1d(np.arange(n), queries), WARMUP_QUERIES, replace=False)
        run["queries"] = []
        for k in KS:
            res = queries_run(method.pk, values, queries, warmup, k)
            run["queries"].append(res)
            progress(
                f"N={n:,} k={k}: p50 {res['latency_ms']['median']:.2f} ms, "
                f"p95 {res['latency_ms']['p95']:.2f} ms, recall {res['recall']:.3f}"
            )
        if n == biggest:
            progress(f"N={n:,}: /api/v1/check")
            run["check_api"] = check_api_run(method.pk, values)
            c = run["check_api"]["latency_ms"]
            progress(f"N={n:,}: check p50 {c['median']:.1f} ms, p95 {c['p95']:.1f} ms")
        run["insert"] = inserts_run(method.pk, values, insert_first_doc)
        progress(f"N={n:,}: insert {run['insert']['rows_per_s']:,.0f} rows/s")
        # The same N rows with freshly built indexes (denser than the grown ones).
        sql("DELETE FROM ingest_indexentry WHERE document_id >= %s", [insert_first_doc])
        vacuum_analyze()  # first, or REINDEX would index the deleted rows' versions
        t = time.perf_counter()
        sql("SET maintenance_work_mem = '512MB'")
        sql("REINDEX TABLE ingest_indexentry")
        reindex_s = time.perf_counter() - t
        vacuum_analyze()
        run["size_after_reindex"] = {**index_sizes(), "reindex_s": reindex_s}
        # PyPI simhash SimhashIndex on the same values and the first PKG_QUERIES queries.
        run["simhash_package"] = []
        subset = queries[:PKG_QUERIES]
        skip = ""
        if pkg_100k_build is not None and n > 100_000:
            predicted = pkg_100k_build * n / 100_000 * 1.3
            if predicted > PKG_BUILD_LIMIT_S:
                skip = f"build predicted {predicted:.0f}s > {PKG_BUILD_LIMIT_S:.0f}s"
        run["simhash_package_skipped"] = skip
        if not skip:
            for k in KS:
                progress(f"N={n:,} k={k}: PyPI SimhashIndex build and {len(subset)} queries")
                res = simhash_package(values, subset, k)
                ours = next(q for q in run["queries"] if q["k"] == k)
                ours_subset = summary(ours["latency_ms_all"][:PKG_QUERIES])
                res["ours_same_queries_ms"] = ours_subset
                res["ratio_median"] = res["latency_ms"]["median"] / ours_subset["median"]
                res["ratio_p95"] = res["latency_ms"]["p95"] / ours_subset["p95"]
                run["simhash_package"].append(res)
                if n == 100_000:
                    pkg_100k_build = max(pkg_100k_build or 0.0, res["build_s"])
        result["runs"].append(run)
    if keep_db:
        result["database_kept"] = True
    else:
        from django.db import connections

        connections.close_all()
        database_drop()
        result["database_kept"] = False
    result["measure_s"] = time.perf_counter() - started_all
    return result


# --- the parent: start the subprocess, report ----------------------------------------


def bench_env() -> dict[str, str]:
    env = dict(os.environ)
    # DEBUG is off: settings need a key (a throwaway one; the bench serves no one).
    env.setdefault("SECRET_KEY", "bench-only-not-secret")
    env.update(
        DATABASE_URL=f"{PG}/{DB_NAME}",
        DJANGO_SETTINGS_MODULE="dedup_site.settings",
        ALLOWED_HOSTS="testserver,localhost",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=str(PROJECT),
        BENCH_PROJECT_ROOT=str(PROJECT),
        DEBUG="0",
    )
    # The project's defaults, not the caller's shell.
    for name in (
        "ACTIVE_METHOD",
        "CANDIDATE_THRESHOLDS",
        "CANDIDATE_METHODS",
        "FINGERPRINT_MIN_TOKENS",
        "SIMILARITY_FLOORS",
        "SIMILARITY_MAX_CHARS",
        "CANDIDATE_LOOKBACK_DAYS",
        "DB_CONN_MAX_AGE",
    ):
        env.pop(name, None)
    return env


def run(
    sizes: list[int] | None = None, keep_db: bool = False, machine: dict | None = None
) -> dict[str, Any]:
    """Run the measuring subprocess (its progress goes to stderr) and return its figures;
    also writes them, with `machine`, to bench/out/candidates-<date>-<time>.json."""
    sizes = sorted(sizes or SIZES)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(suffix=".json", dir=OUT, delete=False) as tmp:
        tmp_path = Path(tmp.name)
    try:
        command = [PY, str(Path(__file__)), "--measure", "--json", str(tmp_path)]
        command += ["--sizes", *map(str, sizes)]
        if keep_db:
            command.append("--keep-db")
        proc = subprocess.run(command, cwd=PROJECT, env=bench_env())
        if proc.returncode != 0:
            raise RuntimeError(f"candidates benchmark failed (exit {proc.returncode})")
        res = json.loads(tmp_path.read_text())
    finally:
        tmp_path.unlink(missing_ok=True)
    if machine:
        res = {"machine": machine, **res}
    stamp = datetime.now().strftime("%Y-%m-%d-%H%M%S")
    path = OUT / f"candidates-{stamp}.json"
    path.write_text(json.dumps(res, indent=2, default=str))
    res["json_path"] = str(path.relative_to(ROOT))
    return res


def _ratio(x: float) -> str:
    return f"{x:,.1f}x" if x >= 1 else f"{x:.2f}x"


def _mark(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def report(res: dict) -> list[str]:
    c, pg = res["corpus"], res["postgres"]
    lines = [
        f"load average at the start of this section: "
        f"{' '.join(str(x) for x in res['load_avg_at_start'])}",
        f"PostgreSQL {pg['version']}, shared_buffers {pg['shared_buffers']}, plan_cache_mode "
        f"{pg['plan_cache_mode']}, jit {pg['jit']}; scheme {res['scheme']} (two 32-bit "
        f"halves, btree each), database {res['database']}",
        f"corpus: bench/corpus.py {c['profile']}, seed {c['seed']}, {c['n']:,} fingerprints, "
        f"{c['near_copies']:,} near-copies; bits {c['bit_ones_min']:.0%}-"
        f"{c['bit_ones_max']:.0%} ones ({c['bits_outside_40_60']} of 64 outside 40-60%); "
        f"{c['share_with_unrelated_neighbour_within_3']:.1%} of documents have an unrelated "
        f"neighbour within 3 bits (uniform bits: {c['uniform_expectation_within_3']:.1e})",
        "",
        "Load (COPY; the index rows into the emptied table with its 3 btrees in place)",
    ]
    for r in res["runs"]:
        ld = r["load"]
        lines.append(
            f"  N={r['n']:>9,}: +{ld['documents_added']:,} documents {ld['documents_copy_s']:.1f}s;"
            f" {ld['index_rows']:,} index rows into the emptied table "
            f"{ld['index_copy_s']:.1f}s ({ld['index_copy_rows_per_s']:,.0f} rows/s);"
            f" VACUUM ANALYZE {ld['vacuum_analyze_s']:.1f}s"
        )
    lines += [
        "",
        "Query: ingest.index.query, prepared, after 100 warm-up queries on other documents;"
        " recall vs numpy brute force on every query",
        "| N | k | probes | queries | p50 ms | p95 ms | max ms | matches p50/p95/mean |"
        " nominated p50/p95 | recall | numpy p50/p95 ms | numpy/ours p50 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["runs"]:
        for q in r["queries"]:
            lat, m, nom, b = (
                q["latency_ms"],
                q["matches_per_query"],
                q["nominated_per_query"],
                q["numpy_brute_force_ms"],
            )
            lines.append(
                f"| {r['n']:,} | {q['k']} | {q['probes_per_query']:,} | {q['queries']} |"
                f" {lat['median']:.2f} | {lat['p95']:.2f} | {lat['max']:.1f} |"
                f" {m['median']:.0f}/{m['p95']:.0f}/{m['mean']:.1f} |"
                f" {nom['median']:,.0f}/{nom['p95']:,.0f} | {q['recall']:.3f} |"
                f" {b['median']:.2f}/{b['p95']:.2f} | {_ratio(b['median'] / lat['median'])} |"
            )
    misses = [(r["n"], q) for r in res["runs"] for q in r["queries"] if q["miss_count"]]
    for n, q in misses:
        lines.append(f"  MISSES at N={n:,} k={q['k']}: {q['miss_count']}: {q['misses'][:20]}")
    extras = [(r["n"], q) for r in res["runs"] for q in r["queries"] if q["false_matches"]]
    for n, q in extras:
        lines.append(
            f"  FALSE MATCHES at N={n:,} k={q['k']}: {q['false_matches']}: "
            f"{q['false_match_examples'][:10]}"
        )
    lines += ["", "PyPI simhash SimhashIndex (in-memory dicts), same values, first 100 queries"]
    for r in res["runs"]:
        if r["simhash_package_skipped"]:
            lines.append(f"  N={r['n']:,}: skipped ({r['simhash_package_skipped']})")
        for p in r["simhash_package"]:
            o = p["ours_same_queries_ms"]
            lines.append(
                f"  N={r['n']:>9,} k={p['k']}: build {p['build_s']:.1f}s; p50 "
                f"{p['latency_ms']['median']:.2f} ms, p95 {p['latency_ms']['p95']:.2f} ms, recall"
                f" {p['recall']:.3f}; ours on the same queries p50 {o['median']:.2f} / p95 "
                f"{o['p95']:.2f} ms -> SimhashIndex/ours {_ratio(p['ratio_median'])} (p50), "
                f"{_ratio(p['ratio_p95'])} (p95)"
            )
    lines += ["", "Size of ingest_indexentry (table + all indexes) / rows"]
    for r in res["runs"]:
        for label, s in (("as loaded", r["size"]), ("after REINDEX", r.get("size_after_reindex"))):
            if not s:
                continue
            idx = ", ".join(f"{k} {v / 2**20:.1f}" for k, v in s["each_index_bytes"].items())
            lines.append(
                f"  N={r['n']:>9,} {label:13}: {s['bytes_per_fp']:.1f} B/fp "
                f"({s['bytes_per_fp_without_pkey']:.1f} without the primary key); rows "
                f"{s['rows']:,}, table {s['table_bytes'] / 2**20:.1f} MB, indexes MB: {idx}"
            )
    lines += ["", "Insert: ingest.index.entries_add, 20 batches of 1,000 new rows, autocommit"]
    for r in res["runs"]:
        i = r["insert"]
        lines.append(
            f"  N={r['n']:>9,}: {i['rows_per_s']:,.0f} rows/s (batch p50 "
            f"{i['batch_ms']['median']:.0f} ms, p95 {i['batch_ms']['p95']:.0f} ms)"
        )
    big = max(res["runs"], key=lambda r: r["n"])
    ck = big.get("check_api")
    if ck:
        lat, le, ln = ck["latency_ms"], ck["latency_ms_edited"], ck["latency_ms_new"]
        mr = ck["matches_per_request"]
        lines += [
            "",
            f"POST /api/v1/check {{text}} via django.test.Client, N={big['n']:,} indexed,"
            f" doc type {ck['doc_type']} (k={ck['threshold']}), {ck['requests']} requests after"
            f" {ck['warmup_requests']} warm-up",
            f"  {ck['texts_stored']:,} documents with their texts (Extraction + Fingerprint);"
            f" {ck['stand_in_texts']} other matched documents given stand-in texts; "
            f"{ck['words_per_text']['median']:.0f} words per text (median)",
            f"  all    : p50 {lat['median']:.1f} ms, p95 {lat['p95']:.1f} ms, max "
            f"{lat['max']:.1f} ms; matches per request p50 {mr['median']:.0f}, max "
            f"{mr['max']:.0f}",
            f"  edited : p50 {le['median']:.1f} ms, p95 {le['p95']:.1f} ms; verdicts "
            f"{ck['verdicts']['edited']}; source document among the matches "
            f"{ck['edited_source_found']}/{ck['edited_requests']}",
            f"  new    : p50 {ln['median']:.1f} ms, p95 {ln['p95']:.1f} ms; verdicts "
            f"{ck['verdicts']['new']}",
        ]
    # Targets.
    recall = min(q["recall"] for r in res["runs"] for q in r["queries"])
    q1m = {q["k"]: q for q in big["queries"]}
    lines += ["", f"Targets (at N={big['n']:,})"]
    rows = [("recall (every N, k)", f"{recall:.3f}", "1.000", recall >= TARGETS["recall"])]
    if 3 in q1m:
        p95 = q1m[3]["latency_ms"]["p95"]
        rows.append(("k=3 query p95", f"{p95:.2f} ms", "< 5 ms", p95 < TARGETS["k3_p95_ms"]))
    if 6 in q1m:
        p95 = q1m[6]["latency_ms"]["p95"]
        rows.append(("k=6 query p95", f"{p95:.2f} ms", "< 25 ms", p95 < TARGETS["k6_p95_ms"]))
    bpf = big["size"]["bytes_per_fp"]
    rows.append(
        ("bytes per fingerprint with its indexes", f"{bpf:.1f} B", "<= 150 B", bpf <= 150.0)
    )
    if ck:
        p95 = ck["latency_ms"]["p95"]
        rows.append(
            (
                "/api/v1/check p95, text (no extraction)",
                f"{p95:.1f} ms",
                "< 50 ms",
                p95 < TARGETS["check_p95_ms"],
            )
        )
    for name, got, want, ok in rows:
        lines.append(f"  {name:42} {got:>10}   target {want:9} {_mark(ok)}")
    kept = "kept" if res.get("database_kept") else "dropped"
    lines.append(
        f"(section took {res['measure_s']:.0f}s; database {res['database']} {kept}; JSON: "
        f"{res.get('json_path', '?')})"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        res = measure(sorted(args.sizes), args.keep_db)
        args.json.write_text(json.dumps(res, default=str))
        return 0
    from benchenv import machine

    info = machine()
    print("Dedup Desk benchmark: candidate index")
    print(
        f"machine: {info['cpu']}, {info['nproc']} CPUs, {info['ram_gb']:g} GB RAM, Python "
        f"{info['python']}, {info['date']}, load average at start "
        f"{' '.join(str(x) for x in info['load_avg_at_start'])}\ncode under test: commit "
        f"{info['commit']}",
        flush=True,
    )
    res = run(args.sizes, args.keep_db, machine=info)
    print("\n".join(report(res)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
