"""Where raw bytes go: the database (BODY_STORE=database) or the desk's own archive
(BODY_STORE=archive), on real pages (docs/archive.md).

For each store, in turn (database, archive, database, archive, …), on the real-page WARC
of ``ingest_bench.py`` (``bench/out/ingest-real-N.warc.gz``): a fresh PostgreSQL
database (``BENCH_DB_NAME``, dropped, recreated, migrated) and a fresh archive directory;
``services.batch_ingest`` of the whole file in this process with the broker pointed at
an unused Redis database (nothing consumes the processing tasks; flushed after), timed
in CPU (``time.process_time``: reading the WARC, storing, enqueueing); then

- the database's bytes per document: ``pg_total_relation_size`` of the body table and
  the archive file table (heap, TOAST and indexes), and the mean stored body row
  (``pg_column_size``);
- the archive's bytes per document (the sealed files' sizes);
- the read latency of one body as a page reads it (``DocumentBody`` by document with
  its document and file, then ``raw()``: decompressed, or read and verified), median
  and 90th percentile over every document, and per body in bulk as the workers read
  (``DocumentBody.bulk_read`` then ``raw()``); wall clock and this process's CPU (the
  wall clock on a loaded machine mostly measures the load). The archive files were
  just written: they are in the page cache, as recently ingested bodies are when the
  workers read them.

    BENCH_DB_NAME=dedup_harc_bench BENCH_REDIS_URL=redis://127.0.0.1:6379/6 \\
      .venv/bin/python bench/body_store_bench.py --records 200 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PG = "postgres://postgres@127.0.0.1:5432"


def _recreate(name: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _one_round(store: str, warc: Path, records: int) -> dict[str, float]:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from ingest import body_store, services
    from ingest.core.readers import read_warc
    from ingest.models import ArchiveFile, Document, DocumentBody

    connection.close()
    _recreate(settings.DATABASES["default"]["NAME"])
    call_command("migrate", verbosity=0)
    archive = Path(tempfile.mkdtemp(prefix="body-store-bench-"))
    settings.ARCHIVE_DIR = archive
    settings.BODY_STORE = store

    with warc.open("rb") as fh:
        started = time.process_time()
        summary = services.batch_ingest(source=str(warc), fmt="warc", items=read_warc(fh))
        body_store.archive_seal_own()
        ingest_cpu = time.process_time() - started
    assert summary.stored == records, summary

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_total_relation_size('ingest_documentbody'), "
            "pg_total_relation_size('ingest_archivefile'), "
            "pg_total_relation_size('ingest_document'), "
            "(SELECT avg(pg_column_size(b.*)) FROM ingest_documentbody b)"
        )
        body_bytes, file_bytes, document_bytes, row_bytes = cursor.fetchone()
    archive_bytes = sum(f.size or 0 for f in ArchiveFile.objects.all())

    ids = list(Document.objects.order_by("pk").values_list("pk", flat=True))
    single: list[float] = []
    single_cpu: list[float] = []
    for document_id in ids:
        start, start_cpu = time.perf_counter(), time.process_time()
        body = DocumentBody.objects.select_related("document", "archive_file").get(
            document_id=document_id
        )
        body.raw()
        single.append(time.perf_counter() - start)
        single_cpu.append(time.process_time() - start_cpu)
    start, start_cpu = time.perf_counter(), time.process_time()
    for body_read in DocumentBody.bulk_read(ids).values():
        body_read.raw()
    bulk = (time.perf_counter() - start) / len(ids)
    bulk_cpu = (time.process_time() - start_cpu) / len(ids)

    from redis import Redis

    Redis.from_url(os.environ["BENCH_REDIS_URL"]).flushdb()
    return {
        "db bytes/doc (body table + file table)": (body_bytes + file_bytes) / records,
        "db bytes/doc (body row, mean)": float(row_bytes),
        "db bytes/doc (document table, for scale)": document_bytes / records,
        "archive bytes/doc": archive_bytes / records,
        "ingest CPU ms/page": 1000 * ingest_cpu / records,
        "read one body ms (median)": 1000 * statistics.median(single),
        "read one body ms (p90)": 1000 * statistics.quantiles(single, n=10)[-1],
        "read one body client CPU ms (median)": 1000 * statistics.median(single_cpu),
        "bulk read ms/body": 1000 * bulk,
        "bulk read client CPU ms/body": 1000 * bulk_cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    name = os.environ.get("BENCH_DB_NAME", "dedup_body_store_bench")
    redis_url = os.environ.setdefault("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6")
    os.environ.update(
        DATABASE_URL=f"{PG}/{name}",
        CELERY_BROKER_URL=redis_url,
        DJANGO_SETTINGS_MODULE="dedup_site.settings",
    )
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    sys.path[:0] = [str(ROOT), str(BENCH)]
    import django

    django.setup()
    from benchenv import machine
    from ingest_bench import real_warc_for

    from dedup_site.celery import app

    app.conf.task_always_eager = False
    warc = real_warc_for(args.records).path
    results: dict[str, list[dict[str, float]]] = {"database": [], "archive": []}
    for _ in range(args.rounds):
        for store in results:
            results[store].append(_one_round(store, warc, args.records))
    print(f"{args.records} real pages, {args.rounds} rounds (medians); {machine()}")
    keys = list(results["database"][0])
    print(f"{'':44} {'database':>10} {'archive':>10}")
    for key in keys:
        cells = [statistics.median(r[key] for r in results[s]) for s in results]
        print(f"{key:44} " + " ".join(f"{c:10.2f}" for c in cells))


if __name__ == "__main__":
    main()
