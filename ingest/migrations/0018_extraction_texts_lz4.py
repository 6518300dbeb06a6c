"""Extracted texts (main and full, 17 KB a page on the ingest benchmark's real pages)
are compressed by PostgreSQL when a row is written: with pglz, its default, that cost
0.31 ms of server time per page; with lz4, 0.04 ms, for 11% more bytes on disk (3,000
of those pages' texts into a scratch table, twice each way). Values already stored keep
their compression; lz4 needs PostgreSQL 14 or later built with it, and nothing changes
where it is missing."""

from django.db import migrations

COLUMNS = ("main_text", "full_text")


def _lz4_available(schema_editor) -> bool:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return False
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_settings "
            "WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
        )
        return cursor.fetchone() is not None


def _compression_set(schema_editor, method: str) -> None:  # type: ignore[no-untyped-def]
    if _lz4_available(schema_editor):
        for column in COLUMNS:
            schema_editor.execute(
                f"ALTER TABLE ingest_extraction ALTER COLUMN {column} SET COMPRESSION {method}"
            )


def lz4_set(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    _compression_set(schema_editor, "lz4")


def default_set(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    _compression_set(schema_editor, "default")


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0017_body_storage_external"),
    ]

    operations = [migrations.RunPython(lz4_set, default_set)]
