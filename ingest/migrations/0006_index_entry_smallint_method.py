"""IndexEntry.method becomes a smallint (it was a bigint foreign key): narrower rows and
band-index keys. The index is derived data: it is rebuilt from the fingerprints of the
methods it held, and the band indexes are recreated on (method, half)."""

from django.db import migrations, models

_indexed_methods: list[int] = []

DROP_BANDS = [
    "DROP INDEX IF EXISTS ingest_indexentry_dedup_band_key_0",
    "DROP INDEX IF EXISTS ingest_indexentry_dedup_band_key_1",
]
CREATE_BANDS = [
    "CREATE INDEX IF NOT EXISTS ingest_indexentry_dedup_band_key_0 "
    "ON ingest_indexentry (method, dedup_band_key_0(simhash))",
    "CREATE INDEX IF NOT EXISTS ingest_indexentry_dedup_band_key_1 "
    "ON ingest_indexentry (method, dedup_band_key_1(simhash))",
]


def remember_and_drop(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    entry = apps.get_model("ingest", "IndexEntry")
    _indexed_methods[:] = sorted(set(entry.objects.values_list("method_id", flat=True)))
    if schema_editor.connection.vendor == "postgresql":
        for statement in DROP_BANDS:
            schema_editor.execute(statement)


def refill_and_index(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if _indexed_methods:
        marks = ", ".join(["%s"] * len(_indexed_methods))
        schema_editor.execute(
            "INSERT INTO ingest_indexentry (document_id, simhash, fetched_at, method) "
            "SELECT f.document_id, f.simhash, d.fetched_at, f.method_id "
            "FROM ingest_fingerprint f JOIN ingest_document d ON d.id = f.document_id "
            f"WHERE f.branch = 'main' AND f.status = 'ok' AND f.method_id IN ({marks})",
            _indexed_methods,
        )
    if schema_editor.connection.vendor == "postgresql":
        for statement in CREATE_BANDS:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("ingest", "0005_metrics_and_method_upgrades")]

    operations = [
        migrations.RunPython(remember_and_drop, migrations.RunPython.noop),
        migrations.DeleteModel(name="IndexEntry"),
        migrations.CreateModel(
            name="IndexEntry",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "method",
                        "document",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                (
                    "document",
                    models.ForeignKey(
                        db_index=False, on_delete=models.deletion.PROTECT, to="ingest.document"
                    ),
                ),
                ("simhash", models.BigIntegerField()),
                ("fetched_at", models.DateTimeField()),
                ("method", models.SmallIntegerField()),
            ],
        ),
        migrations.RunPython(refill_and_index, migrations.RunPython.noop),
    ]
