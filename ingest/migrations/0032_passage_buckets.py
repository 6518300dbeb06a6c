"""The passage index holds buckets of the passage hashes, not the hashes themselves.

Before, the GIN index of `ingest_passageset.hashes` (migration 0009) had one leaf entry
per stored hash (almost every hash is distinct): ~28 B of index a hash, ~40 B with the
pages' free space, most of the passages' bytes. Now it indexes `passage_buckets(hashes)`,
each hash's top 24 bits as an `int4` (an IMMUTABLE SQL function): at millions of
documents many pages share a bucket, and a bucket's entry keeps its pages in one
compressed posting list (a few bytes a page). A probe asks the bucket and rechecks each
page it names with the exact `hashes @> ARRAY[h]` (ingest/passages.py), so the answers
are the same; the price is the pages of the bucket that hold another hash of it, read
and dropped (about stored hashes / 2^24 a probe: ~7 at 10M documents).
Measured: bench/results/2026-12-03-passage-buckets.md.

On PostgreSQL the index is made on the partitioned table (ingest 0026): PostgreSQL
builds it on every partition, and a partition made later (dedup_partition_ensure) gets
it too. The build locks the table against writes while it runs. The function is
IMMUTABLE and must stay so: changing which bits it keeps is a new function and a new
index, never a `CREATE OR REPLACE` of this one (the index would keep the old keys).
SQLite (the embedded default) has no index: it scans.
"""

from typing import Any

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION passage_buckets(hashes bigint[]) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array_agg((h >> 40)::int4) FROM unnest(hashes) AS h $$
"""
BUCKETS = (
    "CREATE INDEX IF NOT EXISTS ingest_passageset_buckets_gin ON ingest_passageset "
    "USING gin (passage_buckets(hashes)) WITH (fastupdate = off)"
)
HASHES = (
    "CREATE INDEX IF NOT EXISTS ingest_passageset_hashes_gin ON ingest_passageset "
    "USING gin (hashes) WITH (fastupdate = off)"
)
FORWARD = [FUNCTION, BUCKETS, "DROP INDEX IF EXISTS ingest_passageset_hashes_gin"]
BACKWARD = [
    HASHES,
    "DROP INDEX IF EXISTS ingest_passageset_buckets_gin",
    "DROP FUNCTION IF EXISTS passage_buckets(bigint[])",
]


def _run(statements: list[str]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0031_digest_hash_indexes"),
    ]

    operations = [
        migrations.RunPython(_run(FORWARD), _run(BACKWARD)),
    ]
