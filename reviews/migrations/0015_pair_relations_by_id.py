"""The five relations to candidate pairs (labels, claims, calibration samples, pair
states, adjudications) name the pair's `id` (`to_field="id"`) and lose their database
foreign key (`ingest.models.PairRelation`), before ingest 0041 keys the pairs by
(a_id, method_id, b_id) and keeps `id` as a numbered column beside the key.

PostgreSQL keeps no foreign key to a column that is not unique, and Citus none from a
coordinator's table to a distributed one (dedup_site/distribution.py): the columns and
their indexes stay, the constraints go. This runs before ingest 0041 (which depends on
it): while `id` is still the pairs' primary key, each step is valid on its own. Nothing
dangles: pairs are never deleted (a permanent table, dedup_site/permanence.py), and the
desk writes these rows for pairs it has read; the application's role can neither
delete nor truncate a pair (its permanent rule, ingest 0020). A TRUNCATE ... CASCADE of
the pairs by the owner no longer reaches these tables.

On PostgreSQL the constraints are dropped in place as the tables' owner (no row
trigger fires on ALTER TABLE: the rules of reviews 0004, 0007, 0010 and 0011 stay). On
SQLite the five tables are rebuilt with their rows, without the REFERENCES clause (a
foreign key to a column that is not unique is an error there). The reverse adds the
foreign keys again (after ingest 0041's reverse has made `id` the key again).
"""

import django.db.models.deletion
from django.db import migrations

import ingest.models


def _relation(**kwargs: object) -> ingest.models.PairRelation:
    return ingest.models.PairRelation(
        db_constraint=False, to="ingest.candidatepair", to_field="id", **kwargs
    )


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0037_passage_hashes_bytes"),
        ("reviews", "0014_language_time_zone"),
    ]

    operations = [
        migrations.AlterField(
            model_name="adjudication",
            name="pair",
            field=_relation(
                on_delete=django.db.models.deletion.PROTECT, related_name="adjudications"
            ),
        ),
        migrations.AlterField(
            model_name="calibrationsample",
            name="pair",
            field=_relation(
                on_delete=django.db.models.deletion.PROTECT, related_name="calibration_samples"
            ),
        ),
        migrations.AlterField(
            model_name="claim",
            name="pair",
            field=_relation(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="claims"
            ),
        ),
        migrations.AlterField(
            model_name="label",
            name="pair",
            field=_relation(on_delete=django.db.models.deletion.PROTECT, related_name="labels"),
        ),
        migrations.AlterField(
            model_name="pairstate",
            name="pair",
            field=ingest.models.PairOneToOne(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                primary_key=True,
                related_name="review_state",
                serialize=False,
                to="ingest.candidatepair",
                to_field="id",
            ),
        ),
    ]
