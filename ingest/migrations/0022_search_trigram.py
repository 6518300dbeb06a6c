"""Search by URL, title and text: pg_trgm and GIN trigram indexes on what the desk's
search reads (PostgreSQL only; on SQLite the search is a plain LIKE and this does
nothing).

The search compares with Django's ``icontains``, which PostgreSQL receives as
``UPPER(column::text) LIKE UPPER(pattern)``: the indexes are on ``UPPER(column)`` so the
planner can use them. pg_trgm is a trusted extension (PostgreSQL 13+): the tables' owner
may create it. A large install may build these indexes beforehand with CREATE INDEX
CONCURRENTLY under the same names (IF NOT EXISTS then keeps them). No row is changed.
"""

from django.db import migrations

INDEXES = [
    ("document_url_trgm", "ingest_document", "url"),
    ("document_final_url_trgm", "ingest_document", "final_url"),
    ("extraction_title_trgm", "ingest_extraction", "title"),
    ("extraction_main_text_trgm", "ingest_extraction", "main_text"),
]


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, table, column in INDEXES:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin (UPPER({column}) gin_trgm_ops)"
        )


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _, _ in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("ingest", "0021_extraction_declared")]

    operations = [migrations.RunPython(forwards, backwards)]
