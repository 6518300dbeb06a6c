"""The dedup state's budget, continued: a pair's evidence stored once, its guard details
only when there are some, the text digests' index on the main branch only.

- The pairs' `evidence` column (the model's `evidence_kept`, nullable) holds only the
  entries its own columns do not give (`CandidatePair.evidence_to_keep`: the SimHash
  distance without the site's boilerplate, the template passage counts, the short-copy
  reading, the MinHash Jaccard; NULL when there is none); `CandidatePair.evidence`
  builds the rest from the columns. The shared passages' runs are not stored: the pair
  view finds them again in the two texts. The rows stored before keep their whole
  evidence: the columns' entries laid under it are the same values, so a reader gets
  the same answer from both shapes and no row is rewritten.
- `guard_details` is NULL when neither side holds a number or an id (about 70 bytes of
  JSON a pair before); the rows stored before keep their empty lists.
- The fingerprints' (method, branch, text_sha256) index becomes (method, text_sha256)
  where the branch is main: only the main branch is looked up by its digest (the check's
  exact matches); the full-page branch's digests are read by document.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0027_body_archive"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="fingerprint",
            name="ingest_fing_method__25a98a_idx",
        ),
        migrations.AddIndex(
            model_name="fingerprint",
            index=models.Index(
                condition=models.Q(("branch", "main")),
                fields=["method", "text_sha256"],
                name="fingerprint_main_text_sha256",
            ),
        ),
        migrations.AlterField(
            model_name="candidatepair",
            name="guard_details",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
        migrations.SeparateDatabaseAndState(
            # The column keeps its name (the table's permanence rule names it).
            state_operations=[
                migrations.RenameField(
                    model_name="candidatepair",
                    old_name="evidence",
                    new_name="evidence_kept",
                ),
                migrations.AlterField(
                    model_name="candidatepair",
                    name="evidence_kept",
                    field=models.JSONField(blank=True, db_column="evidence", default=dict),
                ),
            ],
        ),
        migrations.AlterField(
            model_name="candidatepair",
            name="evidence_kept",
            field=models.JSONField(
                blank=True,
                db_column="evidence",
                default=None,
                help_text="The evidence entries the pair's columns cannot give (a pair "
                "stored before 0028 keeps all of its evidence here).",
                null=True,
            ),
        ),
    ]
