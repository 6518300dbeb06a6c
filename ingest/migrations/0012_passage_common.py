from django.conf import settings
from django.db import migrations, models

# Passages already on PASSAGE_COMMON_DF pages of the index when the table arrives.
BACKFILL = """
INSERT INTO ingest_passagecommon (method, hash, df, created_at)
SELECT p.method, h, count(*), now()
FROM ingest_passageset p, unnest(p.hashes) AS h
GROUP BY p.method, h
HAVING count(*) >= %s
ON CONFLICT DO NOTHING
"""


def common_backfill(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKFILL, [settings.PASSAGE_COMMON_DF])


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0011_extraction_text_lz4"),
    ]

    operations = [
        migrations.CreateModel(
            name="PassageCommon",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "method",
                        "hash",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                ("method", models.SmallIntegerField()),
                ("hash", models.BigIntegerField()),
                (
                    "df",
                    models.IntegerField(
                        help_text="Pages holding it when it was counted (counting stops)."
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.RunPython(common_backfill, migrations.RunPython.noop),
    ]
