"""Raw bytes in the desk's own archive (docs/archive.md): `ArchiveFile`, one row per WARC
file, and on `DocumentBody` the pointer of a body stored there (codec "warc": file,
offset, length; the digest it is verified against is the document's `raw_sha256`,
not stored twice). No index on the pointer's file: a body is found by its document.

Rules (dedup_site.permanence), copied as they were when this migration was written: an
archive file's row is permanent, its sealing columns set once, together (`sealed_at`
seals the row); bodies stay append-only (a pointer is written with its row). Bodies
already stored in the database stay as they are."""

import django.db.models.deletion
from django.db import migrations, models

import ingest.models
from dedup_site.appendonly import permanent


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0026_time_partitions"),
    ]

    operations = [
        migrations.CreateModel(
            name="ArchiveFile",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "path",
                    models.CharField(
                        help_text="Relative to ARCHIVE_DIR.", max_length=255, unique=True
                    ),
                ),
                (
                    "host",
                    models.CharField(
                        help_text="The host of the process writing it.", max_length=255
                    ),
                ),
                ("pid", models.IntegerField()),
                (
                    "process_started",
                    models.BigIntegerField(
                        help_text="The writer's start time (clock ticks since boot): tells "
                        "it from a later process with the same pid."
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("sealed_at", models.DateTimeField(blank=True, null=True)),
                ("size", models.BigIntegerField(blank=True, null=True)),
                ("sha256", ingest.models.DigestField(blank=True, null=True)),
            ],
            options={
                "ordering": ["path"],
            },
        ),
        migrations.AddField(
            model_name="documentbody",
            name="archive_file",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="ingest.archivefile",
            ),
        ),
        migrations.AddField(
            model_name="documentbody",
            name="archive_offset",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="documentbody",
            name="archive_length",
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="documentbody",
            name="data",
            field=models.BinaryField(blank=True),
        ),
        permanent(
            "ingest_archivefile",
            kind="permanent",
            mutable=("sealed_at", "size", "sha256"),
            sealed_by="sealed_at",
        ),
    ]
