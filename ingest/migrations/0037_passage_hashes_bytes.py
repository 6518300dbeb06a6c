"""The passage sets keep their hashes as bytes: `ingest_passageset.hashes` is a bytea of
8 bytes a hash, not a bigint[].

A document's set holds ~12 hashes. As a bigint[] the value carries, besides its varlena
header, a 20-byte array header (dimensions, data offset, element type, length, lower
bound), and a set of 15 hashes or more (over 126 bytes) a 4-byte header and 8-byte
alignment; as a bytea of 8·n bytes the same hashes take a 1-byte header up to 15 of them
and no alignment. Each hash is written as `int8send` writes it (big-endian, two's
complement) in the set's order, so the bytes are exactly the old array's values
(ingest.models.hashes_pack on the Python side). Measured on a 200k scale-bench load:
docs/scaling.md.

The SQL that read the array reads the bytes through IMMUTABLE STRICT PARALLEL SAFE SQL
functions: `passage_hashes(bytea)` the hashes as a bigint[] (for `unnest`), `length(hashes)
/ 8` their count, `passage_has(bytea, bigint)` the exact membership test of the probes'
recheck (what `hashes @> ARRAY[h]` answered: it compares whole 8-byte hashes at 8-byte
offsets, so 8 bytes straddling two hashes are never a match), and an overload
`passage_buckets(bytea)` giving exactly what `passage_buckets(bigint[])` of ingest 0032
gives for the same hashes (each one's top 24 bits, signed, as int4). The bucket GIN is
made again on `passage_buckets(hashes)` of the bytea, under 0032's name; a probe's
`passage_buckets(p.hashes) @> passage_buckets(ARRAY[h])` still names it (the left side
resolves to the bytea overload, the index's expression). `passage_bytes(bigint[])` is the
encoder the rewrite uses. Like 0032's, these functions are IMMUTABLE and must stay
what they are: changing one is a new function and a new index.

`ALTER COLUMN ... TYPE bytea` rewrites every partition of the table (ingest 0026) and its
primary keys, holding the table against reads and writes while it runs; the GIN is
dropped first and built once after. A partition made later (dedup_partition_ensure) has
the parent's column and gets the GIN. A month detached before this migration keeps a
bigint[] column: attaching it back needs the same rewrite of it (ingest.partitions).

SQLite (the embedded default) keeps its JSON text column: the state's field changes
(ingest.models.HashBytesField), the table does not. Backward: the bigint[] again
(`passage_hashes`), the GIN on it, and the functions dropped.
"""

from typing import Any

from django.db import migrations

import ingest.models

TABLE = "ingest_passageset"
GIN = "ingest_passageset_buckets_gin"
FUNCTIONS = [
    """
CREATE OR REPLACE FUNCTION passage_bytes(hashes bigint[]) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT coalesce(string_agg(int8send(h), ''::bytea ORDER BY o), ''::bytea)
FROM unnest(hashes) WITH ORDINALITY AS u(h, o) $$
""",
    """
CREATE OR REPLACE FUNCTION passage_hashes(hashes bytea) RETURNS bigint[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT coalesce(array_agg(
    ('x' || encode(substring(hashes FROM i + 1 FOR 8), 'hex'))::bit(64)::bigint ORDER BY i
), '{}') FROM generate_series(0, length(hashes) - 8, 8) AS i $$
""",
    # A hash's top 24 bits, signed: its first 3 bytes, the first one's sign extended. In
    # the hashes' order as 0032's (the series' order; the index needs none): an ORDER BY
    # in the aggregate made each call ~1.5 times as long, and every GIN probe's recheck
    # calls it on each page the bucket names.
    """
CREATE OR REPLACE FUNCTION passage_buckets(hashes bytea) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array_agg(
    (((get_byte(hashes, i) # 128) - 128) << 16) | (get_byte(hashes, i + 1) << 8)
        | get_byte(hashes, i + 2)
) FROM generate_series(0, length(hashes) - 8, 8) AS i $$
""",
    # `position` answers most calls (a page of the bucket holding another hash of it);
    # a match it finds is checked at 8-byte offsets.
    """
CREATE OR REPLACE FUNCTION passage_has(hashes bytea, h bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN position(int8send(h) IN hashes) = 0 THEN false ELSE EXISTS (
    SELECT 1 FROM generate_series(0, length(hashes) - 8, 8) AS i
    WHERE substring(hashes FROM i + 1 FOR 8) = int8send(h)
) END $$
""",
]
BUCKETS = f"CREATE INDEX {GIN} ON {TABLE} USING gin (passage_buckets(hashes)) WITH (fastupdate = off)"
FORWARD = [
    *FUNCTIONS,
    f"DROP INDEX IF EXISTS {GIN}",
    f"ALTER TABLE {TABLE} ALTER COLUMN hashes TYPE bytea USING passage_bytes(hashes)",
    BUCKETS,
]
BACKWARD = [
    f"DROP INDEX IF EXISTS {GIN}",
    f"ALTER TABLE {TABLE} ALTER COLUMN hashes TYPE bigint[] USING passage_hashes(hashes)",
    BUCKETS,
    "DROP FUNCTION IF EXISTS passage_has(bytea, bigint)",
    "DROP FUNCTION IF EXISTS passage_buckets(bytea)",
    "DROP FUNCTION IF EXISTS passage_hashes(bytea)",
    "DROP FUNCTION IF EXISTS passage_bytes(bigint[])",
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
        ("ingest", "0036_band_key_unique"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(_run(FORWARD), _run(BACKWARD))],
            state_operations=[
                migrations.AlterField(
                    model_name="passageset",
                    name="hashes",
                    field=ingest.models.HashBytesField(),
                ),
            ],
        ),
    ]
