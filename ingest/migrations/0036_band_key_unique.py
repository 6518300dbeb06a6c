"""The band index keeps the one-row rule of ingest_indexentry, and the table loses its
primary key: at 10M documents its btree on (method, document_id, fetched_at) was 40.6 B
of the 199.9 B a document the band index costs (bench/results/2026-12-04-scale-10m.md),
and no lookup needs it (`ingest.index.fingerprints_indexed` finds an entry by its SimHash).

A row is derived from an immutable fingerprint: a document has one main-branch SimHash
per method, written once, and one fetch time. So (method, band key 0 of the SimHash,
document_id, fetched_at) is unique exactly when (method, document_id, fetched_at) is,
and band btree 0 becomes that UNIQUE index: key columns method,
dedup_band_key_0(simhash), document_id, fetched_at, with the SimHash INCLUDEd. It
carries the same columns as before (ingest 0029), in a tuple of the same size, so the
lookup stays an index-only scan and the btree its bytes; it also holds the partition key
(fetched_at), as PostgreSQL requires of a unique index on a partitioned table. A repeat
of a row (`entries_add`: `INSERT ... ON CONFLICT DO NOTHING`, no target) conflicts with
it and is skipped, a concurrent repeat too (the second insert waits for the first).
Measured on a 200k scale-bench load (`bench/scale_bench.py --size 200000 --build-after
all --migrate-to 0034_fingerprint_row_packed`, then this migration, first numbered 0035:
4 s): the band index 200.6 → 159.9 B a document, the key's 40.8 B gone, band btree 0 49.7 B before and after.

Band btree 1 stays as 0029 made it: a second unique index would check every insert a
second time for nothing, and rebuilding it (same bytes either way) would hold the table
against writes for another minute at 10M rows.

The primary key's name is read from the catalogue. Dropping it from the partitioned
table drops every partition's index with it; a partition detached before (a table of its
own) keeps its own key until it is attached back (PostgreSQL then builds the unique
index on it, and ingest.partitions.month_attach drops what the table no longer has). A
partition made later (dedup_partition_ensure) gets the unique index like any other.

Django's state keeps `pk = CompositePrimaryKey("method", "document")`: the ORM needs a
primary key, and SQLite (the embedded default) keeps the real one; nothing on PostgreSQL
looks a row up by it. Backward: the primary key and the plain covering btree again.
"""

from typing import Any

from django.db import migrations

TABLE = "ingest_indexentry"
BAND_0 = "ingest_indexentry_dedup_band_key_0"
PKEY = "ingest_indexentry_pkey"  # Django's name, which 0026 kept
UNIQUE = (
    f"CREATE UNIQUE INDEX {BAND_0} ON {TABLE} "
    "(method, dedup_band_key_0(simhash), document_id, fetched_at) INCLUDE (simhash)"
)
COVERING = (
    f"CREATE INDEX {BAND_0} ON {TABLE} "
    "(method, dedup_band_key_0(simhash)) INCLUDE (simhash, document_id, fetched_at)"
)


def _primary_key(cursor: Any) -> str | None:
    cursor.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'p'",
        [TABLE],
    )
    row = cursor.fetchone()
    return row[0] if row else None


def band_key_unique(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {BAND_0}")
        cursor.execute(UNIQUE)
        # The rule is kept by the unique index before the key goes.
        if (pk := _primary_key(cursor)) is not None:
            cursor.execute(f'ALTER TABLE {TABLE} DROP CONSTRAINT "{pk}"')


def primary_key(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if _primary_key(cursor) is None:
            cursor.execute(
                f"ALTER TABLE {TABLE} ADD CONSTRAINT {PKEY} "
                "PRIMARY KEY (method, document_id, fetched_at)"
            )
        cursor.execute(f"DROP INDEX IF EXISTS {BAND_0}")
        cursor.execute(COVERING)


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0035_fingerprint_one_row"),
    ]

    operations = [
        migrations.RunPython(band_key_unique, primary_key),
    ]
