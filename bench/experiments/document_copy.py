"""Does PostgreSQL COPY pay for storing documents on the bulk path? Inserts the same N
Document rows (as ingest.services builds them: site, batch, URL, headers, …) with the
ORM's `bulk_create` (what ingest does) and with `COPY … FROM STDIN` (ids taken from the
sequence first, since COPY returns none), into a fresh database, alternating, and prints
the client CPU and the PostgreSQL backend CPU per row of each.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/dedup_copy_exp \\
     .venv/bin/python bench/experiments/document_copy.py [--rows 1000] [--rounds 4]
(the database is dropped and re-created; it must be one of yours).
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")


def _recreate(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, check=True
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    _recreate(os.environ["DATABASE_URL"])

    import django

    django.setup()
    from django.db import connection, transaction
    from ingest_bench import proc_cpu_s

    from ingest.models import CrawlBatch, Document, Site

    site = Site.objects.create(host="copy.example")
    batch = CrawlBatch.objects.create(source="copy", format="warc")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    base = datetime(2026, 4, 1, tzinfo=UTC)
    serial = [0]

    def rows() -> list[Document]:
        out = []
        for _ in range(args.rows):
            serial[0] += 1
            i = serial[0]
            out.append(
                Document(
                    site=site,
                    batch=batch,
                    url=f"https://copy.example/2026/04/01/a-fairly-long-article-slug-{i}",
                    final_url="",
                    http_status=200,
                    fetched_at=base + timedelta(seconds=37 * i),
                    content_type="text/html; charset=utf-8",
                    raw_sha256=hashlib.sha256(str(i).encode()).hexdigest(),
                    raw_size=40_000,
                    doc_type="other",
                    doc_type_source="site",
                    doc_type_evidence="default of site copy.example",
                    headers={
                        "content-type": "text/html; charset=utf-8",
                        "server": "nginx",
                        "cache-control": "max-age=300",
                        "content-length": "40000",
                    },
                    batch_offset=i * 6000,
                )
            )
        return out

    def by_orm() -> None:
        with transaction.atomic():
            Document.objects.bulk_create(rows())

    columns = (
        "id, site_id, batch_id, url, final_url, http_status, fetched_at, content_type, "
        "declared_encoding, detected_encoding, raw_sha256, raw_size, doc_type, "
        "doc_type_source, doc_type_evidence, headers, charset_forced, batch_offset, created_at"
    )

    def by_copy() -> None:
        docs = rows()
        now = datetime.now(UTC)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence('ingest_document', 'id')) "
                "FROM generate_series(1, %s)",
                [len(docs)],
            )
            ids = [r[0] for r in cursor.fetchall()]
            raw = cursor.cursor  # psycopg's own cursor: COPY
            with raw.copy(f"COPY ingest_document ({columns}) FROM STDIN") as copy:
                for pk, d in zip(ids, docs, strict=True):
                    copy.write_row(
                        (
                            pk,
                            d.site_id,
                            d.batch_id,
                            d.url,
                            d.final_url,
                            d.http_status,
                            d.fetched_at,
                            d.content_type,
                            d.declared_encoding,
                            d.detected_encoding,
                            bytes.fromhex(d.raw_sha256),
                            d.raw_size,
                            d.doc_type,
                            d.doc_type_source,
                            d.doc_type_evidence,
                            json.dumps(d.headers),
                            d.charset_forced,
                            d.batch_offset,
                            now,
                        )
                    )
            for pk, d in zip(ids, docs, strict=True):
                d.pk = pk

    results: dict[str, list[tuple[float, float]]] = {"bulk_create": [], "COPY": []}
    by_orm()  # warm: caches, the table's first pages
    by_copy()
    for _ in range(args.rounds):
        for name, fn in (("bulk_create", by_orm), ("COPY", by_copy)):
            c0, p0 = time.process_time(), proc_cpu_s(backend)
            fn()
            results[name].append(
                (
                    1e3 * (time.process_time() - c0) / args.rows,
                    1e3 * (proc_cpu_s(backend) - p0) / args.rows,
                )
            )
    for name, runs in results.items():
        client = statistics.median(r[0] for r in runs)
        server = statistics.median(r[1] for r in runs)
        print(
            f"{name:<12} client {client:.3f} CPU-ms/row, PostgreSQL backend {server:.3f} "
            f"CPU-ms/row, together {client + server:.3f} (median of {args.rounds} rounds of "
            f"{args.rows} rows)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
