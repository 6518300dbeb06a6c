"""The passage GIN indexes buckets of 23 bits: `passage_buckets_23(hashes)`, each hash's
top 23 bits as an `int4`, in place of ingest 0032's 24 (`passage_buckets`).

A bucket's GIN entry costs its key and its posting list's header whatever it holds, and
each page it names a few bytes more. With one passage partition holding a year of a 10M
crawl (12.6 stored hashes a set), 24 bits put 7.5 hashes in a bucket and the GIN, grown by
inserts, came to 142.8 B a set: 4.4 B a document over the dedup state's 1 KB
(bench/results/2026-12-07-scale-10m-42.md). 23 bits put twice as many pages behind each
entry; the price is a probe's recheck of twice as many pages holding another hash of its
bucket (`passage_has`, ingest/passages.py), ~15 a probe at 10M in one partition.

The functions are IMMUTABLE (an index's expression): 0032's and 0037's stay as they are,
these are new, one for the bytes (the index's expression) and one for a bigint[] (a
probe's `passage_buckets_23(ARRAY[h])`), giving the same buckets: (h >> 41)::int4, the
signed top 24 bits of the first three bytes shifted right by one. The GIN keeps its name
and its options; it is dropped, then built on the new expression: a database's lookups
scan the passage table while the build runs (minutes at 10M). A partition made later gets
the parent's index; a month detached before keeps the 24-bit GIN and is given the new one
when attached (ingest.partitions). SQLite has no GIN: nothing to do there.
"""

from typing import Any

from django.db import migrations

TABLE = "ingest_passageset"
GIN = "ingest_passageset_buckets_gin"
FUNCTIONS = [
    """
CREATE OR REPLACE FUNCTION passage_buckets_23(hashes bytea) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array_agg(
    ((((get_byte(hashes, i) # 128) - 128) << 16) | (get_byte(hashes, i + 1) << 8)
        | get_byte(hashes, i + 2)) >> 1
) FROM generate_series(0, length(hashes) - 8, 8) AS i $$
""",
    """
CREATE OR REPLACE FUNCTION passage_buckets_23(hashes bigint[]) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array_agg((h >> 41)::int4) FROM unnest(hashes) AS h $$
""",
]


def _gin(function: str) -> str:
    return f"CREATE INDEX {GIN} ON {TABLE} USING gin ({function}(hashes)) WITH (fastupdate = off)"


FORWARD = [*FUNCTIONS, f"DROP INDEX IF EXISTS {GIN}", _gin("passage_buckets_23")]
BACKWARD = [
    f"DROP INDEX IF EXISTS {GIN}",
    _gin("passage_buckets"),
    "DROP FUNCTION IF EXISTS passage_buckets_23(bytea)",
    "DROP FUNCTION IF EXISTS passage_buckets_23(bigint[])",
]


def _run(statements: list[str]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute("SET LOCAL maintenance_work_mem = '512MB'")
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0043_group_flagged_index"),
    ]

    operations = [migrations.RunPython(_run(FORWARD), _run(BACKWARD))]
