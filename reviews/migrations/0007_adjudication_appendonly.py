"""Adjudications are append-only in PostgreSQL itself too: a later adjudication of the
same pair supersedes by being newer; none is ever edited or removed."""

from django.db import migrations

from dedup_site.appendonly import append_only


class Migration(migrations.Migration):
    dependencies = [("reviews", "0006_calib_prelabel_distribution")]

    operations = [append_only("reviews_adjudication", "reviews_adjudication")]
