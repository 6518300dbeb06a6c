"""A partial index of the groups a review status short of "labeled" and "all" can hold:
flagged for review, chained, oversized or exact, and not dissolved (the queue's
`group_queue._group_flagged`, less the disputed ones, which it reads by id). The queue read
them by a scan of every group: at 10M documents, 55-64 ms of a 98-130 ms page for ~259k
groups (bench/results/2026-12-07-scale-10m-41.md). Such groups are a few in a hundred; the
index holds only them."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0042_pair_columns_packed"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="candidategroup",
            index=models.Index(
                condition=models.Q(
                    ("dissolved", False),
                    models.Q(
                        ("needs_review", True),
                        ("chained", True),
                        ("oversized", True),
                        ("kind", "exact"),
                        _connector="OR",
                    ),
                ),
                fields=["id"],
                name="group_flagged",
            ),
        ),
    ]
