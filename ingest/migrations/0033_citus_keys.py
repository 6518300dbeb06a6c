"""The last keys that broke the distribution plan (dedup_site/distribution.py,
docs/scaling.md "Past one machine: Citus").

- A document's snapshot (url, fetched_at, raw_sha256) loses its unique constraint: the
  ingest looks the snapshot up by its digest (indexed) under the digest's advisory lock
  before it stores it (ingest.services, ingest.models.snapshots_lock).
- Extractions, fingerprints and embeddings are keyed by the unique they had, which
  leads with the document (the distribution column): (document_id, extractor_version),
  (document_id, method_id, branch), (document_id, model, text_rule, extractor_version,
  attempt). Their serial `id` stays, numbered as before (PostgreSQL keeps the identity
  column when the key is dropped; on SQLite the writer numbers it,
  ingest.models.NumberedModel), with a plain index where the old primary key was: the
  readers' watermarks. The single-column `document_id` indexes of extractions and
  embeddings go (the keys lead with it). No index is added: a table has as many as
  before, or one fewer.

On PostgreSQL the tables are changed in place as their owner (no row trigger fires on
ALTER TABLE: the append-only triggers of ingest 0020 stay as they are). On SQLite the
three tables are rebuilt with their rows. The reverse is given for PostgreSQL.
"""

from typing import Any

from django.db import migrations, models

import ingest.models

# table → (model, new key columns, dropped unique, single-column index dropped)
KEYS: dict[str, tuple[str, tuple[str, ...], str, str | None]] = {
    "ingest_extraction": (
        "Extraction",
        ("document_id", "extractor_version"),
        "extraction_once_per_version",
        "document_id",
    ),
    "ingest_fingerprint": (
        "Fingerprint",
        ("document_id", "method_id", "branch"),
        "fingerprint_once",
        None,
    ),
    "ingest_embedding": (
        "Embedding",
        ("document_id", "model", "text_rule", "extractor_version", "attempt"),
        "embedding_attempt_once",
        "document_id",
    ),
}


def _single_column_indexes(cursor: Any, table: str, column: str) -> list[str]:
    cursor.execute(
        """
        SELECT i.relname FROM pg_index x
        JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
        WHERE x.indrelid = %s::regclass AND x.indnkeyatts = 1 AND NOT x.indisunique
          AND x.indpred IS NULL AND a.attname = %s
        """,
        [table, column],
    )
    return [name for (name,) in cursor.fetchall()]


def _columns(columns: tuple[str, ...]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def keys_distributed(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        for model, *_ in KEYS.values():
            schema_editor._remake_table(apps.get_model("ingest", model))
        return
    with schema_editor.connection.cursor() as cursor:
        for table, (_model, key, unique, indexed) in KEYS.items():
            cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey"')
            cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{unique}"')
            cursor.execute(
                f'ALTER TABLE "{table}" ADD CONSTRAINT "{table}_pkey" PRIMARY KEY ({_columns(key)})'
            )
            name = schema_editor._create_index_name(table, ["id"], suffix="")
            cursor.execute(f'CREATE INDEX "{name}" ON "{table}" ("id")')
            if indexed is not None:
                for index in _single_column_indexes(cursor, table, indexed):
                    cursor.execute(f'DROP INDEX "{index}"')


def keys_serial(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        raise NotImplementedError("ingest 0033 is not reversible on SQLite")
    with schema_editor.connection.cursor() as cursor:
        for table, (_model, key, unique, indexed) in KEYS.items():
            for index in _single_column_indexes(cursor, table, "id"):
                cursor.execute(f'DROP INDEX "{index}"')
            cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey"')
            cursor.execute(
                f'ALTER TABLE "{table}" ADD CONSTRAINT "{table}_pkey" PRIMARY KEY ("id")'
            )
            cursor.execute(
                f'ALTER TABLE "{table}" ADD CONSTRAINT "{unique}" UNIQUE ({_columns(key)})'
            )
            if indexed is not None:
                cursor.execute(f'CREATE INDEX "{table}_{indexed}_0031" ON "{table}" ("{indexed}")')


def _numbered() -> models.BigIntegerField:
    return models.BigIntegerField(
        db_default=ingest.models.DatabaseNumbered(), db_index=True, editable=False
    )


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0032_passage_buckets"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="document", name="document_snapshot_once"),
        # The keys: the state here, the tables in keys_distributed.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name="extraction", name="extraction_once_per_version"
                ),
                migrations.RemoveConstraint(model_name="fingerprint", name="fingerprint_once"),
                migrations.RemoveConstraint(model_name="embedding", name="embedding_attempt_once"),
                migrations.AlterField(model_name="extraction", name="id", field=_numbered()),
                migrations.AlterField(model_name="fingerprint", name="id", field=_numbered()),
                migrations.AlterField(model_name="embedding", name="id", field=_numbered()),
                migrations.AddField(
                    model_name="extraction",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "document",
                        "extractor_version",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                migrations.AddField(
                    model_name="fingerprint",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "document",
                        "method",
                        "branch",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                migrations.AddField(
                    model_name="embedding",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "document",
                        "model",
                        "text_rule",
                        "extractor_version",
                        "attempt",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                migrations.AlterField(
                    model_name="extraction",
                    name="document",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="extractions",
                        to="ingest.document",
                    ),
                ),
                migrations.AlterField(
                    model_name="embedding",
                    name="document",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="embeddings",
                        to="ingest.document",
                    ),
                ),
            ],
        ),
        migrations.RunPython(keys_distributed, keys_serial),
    ]
