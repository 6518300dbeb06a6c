"""The band index on PostgreSQL: scheme b32x2 of ingest/core/bands.py (two 32-bit
halves, one btree each). The SQL is frozen here; a new scheme is a new migration (and
tests/core/test_bands_sql.py checks these functions against the Python keys)."""

from django.db import migrations

FUNCTIONS = """
CREATE OR REPLACE FUNCTION dedup_band_key_0(simhash bigint) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$SELECT ((((simhash >> 32) & 4294967295) # 2147483648) - 2147483648)::int4$$;
CREATE OR REPLACE FUNCTION dedup_band_key_1(simhash bigint) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$SELECT ((((simhash >> 0) & 4294967295) # 2147483648) - 2147483648)::int4$$;
"""
INDEXES = [
    "CREATE INDEX IF NOT EXISTS ingest_indexentry_dedup_band_key_0 "
    "ON ingest_indexentry (method_id, dedup_band_key_0(simhash))",
    "CREATE INDEX IF NOT EXISTS ingest_indexentry_dedup_band_key_1 "
    "ON ingest_indexentry (method_id, dedup_band_key_1(simhash))",
]
DROP = [
    "DROP INDEX IF EXISTS ingest_indexentry_dedup_band_key_0",
    "DROP INDEX IF EXISTS ingest_indexentry_dedup_band_key_1",
    "DROP FUNCTION IF EXISTS dedup_band_key_0(bigint)",
    "DROP FUNCTION IF EXISTS dedup_band_key_1(bigint)",
]


def create(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTIONS)
        for statement in INDEXES:
            schema_editor.execute(statement)


def drop(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        for statement in DROP:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("ingest", "0002_candidates")]

    operations = [migrations.RunPython(create, drop)]
