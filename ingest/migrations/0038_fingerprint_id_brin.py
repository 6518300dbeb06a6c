"""The fingerprints' `id` index becomes a BRIN index on PostgreSQL (a btree elsewhere):
ingest.models.WatermarkIndex.

The `id` beside the fingerprints' key (ingest 0033) is read only as the pair states'
watermark: the rows above a mark, and the largest of them (reviews.queue.pair_states).
Fingerprints are never updated nor deleted (ingest 0020's triggers), so the heap holds
them in about the order the database numbered them, and a BRIN index, the least and
largest `id` of each run of 16 pages, answers "above the mark" by the runs it names: the
newest. The btree it replaces took ~22.5 bytes a document at 10M (docs/scaling.md); the
BRIN index a few hundred kilobytes in all. A BRIN index cannot give the largest value by
itself: the pair states read it above their mark, by value.

A table rebuilt by 0035 lies in the order of its key (document, method), not of `id`:
with several methods a run then spans old and new numbers; every run holding only rows
numbered before the pair states' mark is still skipped, so only reads from a mark older
than that rebuild visit it.
"""

from django.db import migrations

import ingest.models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0037_passage_hashes_bytes"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="fingerprint", name="fingerprint_id"),
        migrations.AddIndex(
            model_name="fingerprint",
            index=ingest.models.WatermarkIndex(fields=["id"], name="fingerprint_id"),
        ),
    ]
