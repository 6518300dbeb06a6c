"""Passage index at scale on PostgreSQL: query p95, insert rate and bytes per document.

Everything timed goes through the product's code: `ingest.passages.lookup` (template
passages and recorded stock phrases dropped, then one GIN probe per remaining passage;
a prepared statement) and `ingest.passages.entries_add` (the insert plus the counts on
the whole index and per site).

Synthetic passage sets with a realistic frequency distribution (seeded):
- passages per document drawn from the real distribution of the gold article texts
  in ../shared/data/extraction-dev (ingest/core/passages.py, capped at STORED_MAX);
- most passages unique (random 64-bit hashes, as winnowed 5-gram hashes of distinct
  text are);
- 10% of the documents are partial copies of an earlier one (a contiguous 30–70% of its
  passages, plus their own);
- 1,000 sites, each with 4 template passages, 2–4 of them on every page of the site;
- a pool of 5,000 common passages (stock phrases, wire credits) drawn Zipf(1.3), 0–2
  per page.
Template passages (per-site df >= PASSAGE_TEMPLATE_DF) and stock phrases (df >=
PASSAGE_COMMON_DF over the index) are recorded as the workers do.

Steps for N = 100,000 then (with --max 1000000) 1,000,000 documents: COPY Document and
PassageSet rows with the GIN index in place (grown by inserts, like a crawl's), VACUUM
ANALYZE, size per document (table + TOAST + GIN + the template and stock-phrase tables),
300 lookups
after 50 warm-ups (half stored documents' own sets, half new partial copies of stored
documents), 10 batches of 200 new documents through entries_add (then removed).

    .venv/bin/python bench/passage_index_bench.py [--max 1000000] [--json OUT]
        [--db NAME] [--reuse] [--only N] [--data DIR]

Uses (drops and recreates) the database dedup_passages_bench, or the one named by --db
(or BENCH_DB). --reuse keeps a database that already holds the sets of an earlier run
(the corpus is seeded: the same sets are regenerated in memory, only missing ones are
loaded; pending migrations are applied). --only N measures that size alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")


def _db_name() -> str:
    for j, arg in enumerate(sys.argv):
        if arg == "--db" and j + 1 < len(sys.argv):
            return sys.argv[j + 1]
        if arg.startswith("--db="):
            return arg.split("=", 1)[1]
    return os.environ.get("BENCH_DB", "dedup_passages_bench")


DB_NAME = _db_name()  # before Django reads DATABASE_URL
os.environ["DATABASE_URL"] = f"{PG}/{DB_NAME}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")  # settings refuse none with DEBUG off

SITES = 1000
TEMPLATES_PER_SITE = 4
COMMON_POOL = 5000
COPY_SHARE = 0.10
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)


def progress(message: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def database_recreate(reuse: bool) -> bool:
    """True when an existing database is kept."""
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME]).fetchone()
        if reuse and exists:
            return True
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    return False


DATA = ROOT.parent / "shared" / "data"


def real_counts(data: Path = DATA) -> np.ndarray:
    from ingest.core import passages as P

    with open(data / "extraction-dev" / "manifest.jsonl") as f:
        texts = [json.loads(line)["gold_text"] for line in f]
    counts = [min(len(P.hash_set(P.passages(t))), P.STORED_MAX) for t in texts]
    return np.array([c for c in counts if c > 0])


class Corpus:
    def __init__(self, seed: int = 1, data: Path = DATA) -> None:
        self.rng = np.random.default_rng(seed)
        self.counts = real_counts(data)
        self.templates = self.rng.integers(
            -(2**63), 2**63 - 1, size=(SITES, TEMPLATES_PER_SITE), dtype=np.int64
        )
        self.common = self.rng.integers(-(2**63), 2**63 - 1, size=COMMON_POOL, dtype=np.int64)
        weights = 1.0 / np.arange(1, COMMON_POOL + 1) ** 1.3
        self.common_p = weights / weights.sum()
        self.sets: list[np.ndarray] = []
        self.sites: list[int] = []

    def document(self, site: int, source: np.ndarray | None) -> np.ndarray:
        rng = self.rng
        n = int(rng.choice(self.counts))
        own = rng.integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64)
        parts = [own]
        if source is not None and len(source) > 2:
            keep = max(2, int(len(source) * rng.uniform(0.3, 0.7)))
            start = int(rng.integers(0, len(source) - keep + 1))
            parts = [source[start : start + keep], own[: max(1, n // 3)]]
        parts.append(self.templates[site, : int(rng.integers(2, TEMPLATES_PER_SITE + 1))])
        parts.append(rng.choice(self.common, size=int(rng.integers(0, 3)), p=self.common_p))
        return np.unique(np.concatenate(parts))

    def grow(self, n: int) -> None:
        rng = self.rng
        for _ in range(n):
            site = int(rng.integers(0, SITES))
            source = None
            if self.sets and rng.random() < COPY_SHARE:
                source = self.sets[int(rng.integers(0, len(self.sets)))]
            self.sets.append(self.document(site, source))
            self.sites.append(site)


def copy_lines(sql: str, lines: Any, chunk: int = 20_000) -> None:
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


def sql(statement: str, params: list[Any] | None = None) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def stamp(i: int) -> str:
    return (BASE_TIME + timedelta(seconds=30 * i)).isoformat()


def load(corpus: Corpus, first: int, last: int, site_ids: list[int]) -> dict[str, float]:
    now = datetime.now(UTC).isoformat()
    t0 = time.perf_counter()
    copy_lines(
        "COPY ingest_document (id, site_id, url, final_url, http_status, fetched_at, "
        "content_type, declared_encoding, detected_encoding, raw_sha256, raw_size, doc_type, "
        "headers, charset_forced, created_at) FROM STDIN",
        (
            f"{i + 1}\t{site_ids[corpus.sites[i]]}\thttps://b.example/{i + 1}\t\t200\t{stamp(i)}"
            f"\ttext/html\t\tutf-8\t{i + 1:064x}\t12000\tarticle\t{{}}\tf\t{now}\n"
            for i in range(first, last)
        ),
    )
    t1 = time.perf_counter()
    copy_lines(
        "COPY ingest_passageset (method, document_id, site_id, fetched_at, hashes) FROM STDIN",
        (
            f"1\t{i + 1}\t{site_ids[corpus.sites[i]]}\t{stamp(i)}"
            f"\t{{{','.join(map(str, corpus.sets[i].tolist()))}}}\n"
            for i in range(first, last)
        ),
    )
    t2 = time.perf_counter()
    return {"documents_s": t1 - t0, "passagesets_s": t2 - t1}


def kept_sets_match(corpus: Corpus, loaded: int, sample: int = 50) -> bool:
    """The kept database holds this corpus's sets (checked on a sample)."""
    ids = np.random.default_rng(3).integers(0, loaded, size=sample).tolist()
    stored = dict(
        sql(
            "SELECT document_id, hashes FROM ingest_passageset WHERE document_id = ANY(%s)",
            [[i + 1 for i in ids]],
        )
    )
    return all(sorted(stored[i + 1]) == corpus.sets[i].tolist() for i in ids)


def templates_record(corpus: Corpus, site_ids: list[int], df_min: int) -> int:
    """What the workers' per-site count would have recorded by now."""
    from collections import Counter

    from ingest.models import PassageTemplate

    PassageTemplate.objects.all().delete()
    by_site: dict[int, Counter[int]] = {}
    for s, hashes in zip(corpus.sites, corpus.sets, strict=True):
        by_site.setdefault(s, Counter()).update(hashes.tolist())
    rows = [
        PassageTemplate(method=1, site_id=site_ids[s], hash=h, df=n)
        for s, counts in by_site.items()
        for h, n in counts.items()
        if n >= df_min
    ]
    PassageTemplate.objects.bulk_create(rows, batch_size=5000, ignore_conflicts=True)
    return len(rows)


def commons_record(corpus: Corpus, df_min: int) -> int:
    """The stock phrases the workers' count on the whole index would have recorded."""
    from ingest.models import PassageCommon

    PassageCommon.objects.all().delete()
    values, counts = np.unique(np.concatenate(corpus.sets), return_counts=True)
    keep = counts >= df_min
    rows = [PassageCommon(method=1, hash=int(h), df=df_min) for h in values[keep].tolist()]
    PassageCommon.objects.bulk_create(rows, batch_size=5000, ignore_conflicts=True)
    return len(rows)


def sizes(n: int) -> dict[str, float]:
    total, table, gin = sql(
        "SELECT pg_total_relation_size('ingest_passageset'), "
        "pg_table_size('ingest_passageset'), pg_indexes_size('ingest_passageset')"
    )[0]
    templates = sql(
        "SELECT pg_total_relation_size('ingest_passagetemplate') "
        "+ pg_total_relation_size('ingest_passagecommon')"
    )[0][0]
    return {
        "bytes_per_doc": (total + templates) / n,
        "table_bytes_per_doc": table / n,
        "index_bytes_per_doc": gin / n,
        "template_tables_bytes_per_doc": templates / n,
        "total_mb": (total + templates) / 1e6,
    }


def queries(corpus: Corpus, n_docs: int, count: int = 300, warm: int = 50) -> dict[str, Any]:
    from ingest import passages
    from ingest.core import passages as P

    rng = np.random.default_rng(99)
    picks = rng.integers(0, n_docs, size=count + warm)
    times: list[float] = []
    hits: list[int] = []
    found_source = 0
    for j, i in enumerate(picks.tolist()):
        stored = corpus.sets[i]
        if j % 2:
            keep = max(3, int(len(stored) * rng.uniform(0.3, 0.7)))
            start = int(rng.integers(0, max(1, len(stored) - keep + 1)))
            fresh = rng.integers(-(2**63), 2**63 - 1, size=keep // 2, dtype=np.int64)
            query = np.concatenate([stored[start : start + keep], fresh])
            exclude = None
        else:
            query, exclude = stored, i + 1
        unsigned = [P.to_unsigned(int(h)) for h in query.tolist()]
        t0 = time.perf_counter()
        result = passages.lookup(hashes=unsigned, exclude_document=exclude)
        t1 = time.perf_counter()
        if j >= warm:
            times.append((t1 - t0) * 1000)
            hits.append(len(result))
            if j % 2:
                found_source += any(h.document_id == i + 1 for h in result)
    arr = np.array(times)
    return {
        "queries": len(times),
        "median_ms": float(np.percentile(arr, 50)),
        "p95_ms": float(np.percentile(arr, 95)),
        "max_ms": float(arr.max()),
        "hits_per_query_mean": float(np.mean(hits)),
        "copies_finding_their_source": found_source / (len(times) // 2),
    }


INSERT_BATCHES, INSERT_PER_BATCH = 10, 200


def insert_sets(corpus: Corpus, n_docs: int) -> list[tuple[int, np.ndarray]]:
    """The new documents of the insert step (site, passage set). They draw on the
    corpus's generator, so a step not measured still makes them: the next size's
    sets are then the same whichever steps ran (what --reuse relies on)."""
    rng = np.random.default_rng(7)
    out = []
    for _ in range(INSERT_BATCHES * INSERT_PER_BATCH):
        site = int(rng.integers(0, SITES))
        source = corpus.sets[int(rng.integers(0, n_docs))] if rng.random() < 0.1 else None
        out.append((site, corpus.document(site, source)))
    return out


def inserts(corpus: Corpus, n_docs: int, site_ids: list[int]) -> dict[str, float]:
    from ingest import passages
    from ingest.core import passages as P
    from ingest.models import Document, PassageSet

    new = insert_sets(corpus, n_docs)
    first = n_docs + 1_000_000_000  # ids far from the loaded ones
    now = datetime.now(UTC)
    batches, per = INSERT_BATCHES, INSERT_PER_BATCH
    elapsed = 0.0
    made: list[int] = []
    for b in range(batches):
        docs = []
        entries = []
        for k in range(per):
            i = first + b * per + k
            site, hashes = new[b * per + k]
            docs.append(
                Document(
                    id=i,
                    site_id=site_ids[site],
                    url=f"https://b.example/new/{i}",
                    fetched_at=now,
                    raw_sha256=f"{i:064x}",
                    raw_size=1,
                    doc_type="article",
                )
            )
            ps = [P.Passage(P.to_unsigned(int(h)), j) for j, h in enumerate(hashes.tolist())]
            entries.append(passages.Entry(i, site_ids[site], now, ps))
        Document.objects.bulk_create(docs)
        t0 = time.perf_counter()
        passages.entries_add(entries)
        elapsed += time.perf_counter() - t0
        made += [d.id for d in docs]
    PassageSet.objects.filter(document_id__in=made).delete()
    Document.objects.filter(id__in=made).delete()
    return {"documents": batches * per, "docs_per_s": batches * per / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="development data directory")
    parser.add_argument("--max", type=int, default=100_000)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--db", help="database name (default BENCH_DB or dedup_passages_bench)")
    parser.add_argument("--reuse", action="store_true", help="keep the sets already loaded")
    parser.add_argument("--only", type=int, help="measure this size only")
    args = parser.parse_args()
    kept = database_recreate(args.reuse)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from ingest.models import Site

    call_command("migrate", verbosity=0)
    site_ids = list(
        Site.objects.filter(host__endswith=".bench.example")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not site_ids:
        made = Site.objects.bulk_create([Site(host=f"s{i}.bench.example") for i in range(SITES)])
        site_ids = [s.pk for s in made]
    stored = sql("SELECT count(*) FROM ingest_passageset")[0][0] if kept else 0
    corpus = Corpus(data=args.data)
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load_avg": os.getloadavg()},
        "passages_per_doc_real_mean": float(corpus.counts.mean()),
        "sizes": {},
    }
    loaded = 0
    target = args.only or args.max
    stages = sorted({s for s in (100_000, 1_000_000) if s <= target} | {target})
    for n in stages:
        progress(f"N={n:,}: generating {n - len(corpus.sets):,} passage sets")
        corpus.grow(n - len(corpus.sets))
        if args.only and n != args.only:
            insert_sets(corpus, n)  # the corpus as a run measuring this size leaves it
            continue
        loaded = max(loaded, stored)
        if loaded > n:
            sys.exit(f"{DB_NAME} holds {loaded:,} sets, more than {n:,}")
        if loaded and not kept_sets_match(corpus, loaded):
            sys.exit(f"{DB_NAME} holds other sets than this corpus: drop it (no --reuse)")
        progress(f"N={n:,}: COPY {n - loaded:,} (kept {loaded:,})")
        timing = load(corpus, loaded, n, site_ids)
        loaded = n
        progress(f"N={n:,}: templates, VACUUM ANALYZE")
        templates = templates_record(corpus, site_ids, settings.PASSAGE_TEMPLATE_DF)
        commons = commons_record(corpus, settings.PASSAGE_COMMON_DF)
        sql("VACUUM ANALYZE ingest_passageset")
        sql("VACUUM ANALYZE ingest_passagetemplate")
        sql("VACUUM ANALYZE ingest_passagecommon")
        res: dict[str, Any] = {
            "load": timing,
            "template_passages": templates,
            "common_passages": commons,
            "passages_per_doc_mean": float(np.mean([len(s) for s in corpus.sets])),
        }
        res.update(sizes(n))
        progress(f"N={n:,}: queries")
        res["query"] = queries(corpus, n)
        progress(f"N={n:,}: inserts")
        res["insert"] = inserts(corpus, n, site_ids)
        out["sizes"][str(n)] = res
        print(json.dumps({str(n): res}, indent=2), flush=True)
    text = json.dumps(out, indent=2)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
