"""The two digest indexes become hash indexes on PostgreSQL (ingest.models.DigestIndex):
both are looked up by equality only (a snapshot's raw digest, the check's exact text
match on the main branch), and a hash index keeps about 34 bytes a row where the btree
of 33-byte keys kept 59 freshly built and 79 grown (docs/scaling.md). The text digest's
index leaves the method out (a hash index has one column): the lookup checks it on the
rows found. Elsewhere (SQLite) they stay btrees. Each index is built anew: on a large
table this migration takes the time of two index builds."""

import ingest.models
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0030_distribution_keys"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="fingerprint",
            name="fingerprint_main_text_sha256",
        ),
        migrations.AlterField(
            model_name="document",
            name="raw_sha256",
            field=ingest.models.DigestField(),
        ),
        migrations.AddIndex(
            model_name="document",
            index=ingest.models.DigestIndex(fields=["raw_sha256"], name="document_raw_sha256"),
        ),
        migrations.AddIndex(
            model_name="fingerprint",
            index=ingest.models.DigestIndex(
                condition=models.Q(("branch", "main")),
                fields=["text_sha256"],
                name="fingerprint_main_text_sha256",
            ),
        ),
    ]
