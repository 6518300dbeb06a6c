"""The MinHash channel's index (ingest.MinHashSet): a GIN index over its band keys on
PostgreSQL, and its rule (append-only for the application's role, as the passage sets:
dedup_site.permanence), copied here as it was when this migration was written."""

import django.db.models.deletion
import ingest.models
from django.db import migrations, models

from dedup_site.appendonly import permanent

GIN = (
    "CREATE INDEX IF NOT EXISTS ingest_minhashset_bands_gin "
    "ON ingest_minhashset USING gin (bands) WITH (fastupdate = off)"
)


def gin_create(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(GIN)


class Migration(migrations.Migration):

    dependencies = [
        ('ingest', '0022_search_trigram'),
    ]

    operations = [
        migrations.CreateModel(
            name='MinHashSet',
            fields=[
                ('pk', models.CompositePrimaryKey('method', 'document', blank=True, editable=False, primary_key=True, serialize=False)),
                ('method', models.SmallIntegerField(help_text="The FingerprintMethod id (as IndexEntry's).")),
                ('fetched_at', models.DateTimeField()),
                ('bands', ingest.models.HashArrayField()),
                ('signature', models.BinaryField(help_text='The MinHash values, 32-bit little-endian.')),
                ('document', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, to='ingest.document')),
            ],
        ),
        migrations.RunPython(gin_create, migrations.RunPython.noop),
        permanent("ingest_minhashset", kind="append-only"),
    ]
