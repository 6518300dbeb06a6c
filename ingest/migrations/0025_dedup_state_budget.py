"""The dedup state's budget: digests as bytes, no redundant index.

`raw_sha256` and `text_sha256` become bytea on PostgreSQL (32 bytes a value, not 64
characters of hex; the models still read and write hex, ingest.models.DigestField). The
existing rows are converted in place by ALTER COLUMN … USING decode(…, 'hex'): the
migration rewrites permanent and append-only tables (ingest_document, ingest_fingerprint)
as their owner, which their rules allow (docs/database-permanence.md); the values are the
same digests. The raw digest's second index (the `varchar_pattern_ops` copy Django adds
to an indexed text column) goes with the text type. The fingerprints' single-column
indexes on `document_id` and `method_id` go too: the unique (document, method, branch)
and the (method, branch, text_sha256) indexes lead with those columns; so do the
single-column method indexes of pairs, groups and memberships (each has a unique or
composite index led by the method) and the documents' site index (the (site,
fetched_at) index leads with it).

The pairs' `evidence` JSON stays: besides what repeats the pair's own columns it holds
what only pair building knows (the MinHash Jaccard, the SimHash distance without the
site's boilerplate, the short-copy reading).
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

import ingest.models

COLUMNS = (("ingest_document", "raw_sha256"), ("ingest_fingerprint", "text_sha256"))


def to_bytes(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # elsewhere the column stays 64 hex characters
    schema_editor.execute('DROP INDEX IF EXISTS "ingest_document_raw_sha256_20916fc6_like"')
    for table, column in COLUMNS:
        schema_editor.execute(
            f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE bytea '
            f"USING decode(\"{column}\", 'hex')"
        )


def to_hex(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, column in COLUMNS:
        schema_editor.execute(
            f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE varchar(64) '
            f"USING encode(\"{column}\", 'hex')"
        )
    schema_editor.execute(
        'CREATE INDEX "ingest_document_raw_sha256_20916fc6_like" '
        'ON "ingest_document" ("raw_sha256" varchar_pattern_ops)'
    )


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0024_boilerplate_drop"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(to_bytes, to_hex)],
            state_operations=[
                migrations.AlterField(
                    model_name="document",
                    name="raw_sha256",
                    field=ingest.models.DigestField(db_index=True),
                ),
                migrations.AlterField(
                    model_name="fingerprint",
                    name="text_sha256",
                    field=ingest.models.DigestField(),
                ),
            ],
        ),
        migrations.AlterField(
            model_name="fingerprint",
            name="document",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="fingerprints",
                to="ingest.document",
            ),
        ),
        migrations.AlterField(
            model_name="fingerprint",
            name="method",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                to="ingest.fingerprintmethod",
            ),
        ),
        migrations.AlterField(
            model_name="candidategroup",
            name="method",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                to="ingest.fingerprintmethod",
            ),
        ),
        migrations.AlterField(
            model_name="candidatepair",
            name="method",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                to="ingest.fingerprintmethod",
            ),
        ),
        migrations.AlterField(
            model_name="document",
            name="site",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="documents",
                to="ingest.site",
            ),
        ),
        migrations.AlterField(
            model_name="groupmember",
            name="method",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                to="ingest.fingerprintmethod",
            ),
        ),
    ]
