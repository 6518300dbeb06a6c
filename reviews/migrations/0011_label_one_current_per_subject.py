"""One current label per editor and subject (the unordered pair of documents), in
PostgreSQL itself: a deferred exclusion constraint over the current labels (a partial
unique index cannot be deferred, and the desk inserts the new label before it points the
old one at it: the constraint is checked at commit). A trigger copies every new label's
subject from its pair, whatever the client sends.

Calibration samples (append-only) and merge proposals (decided once) get the generic
rule of dedup_site.appendonly for the application's role. SQLite: no such constraint or
triggers (one writer at a time; the services keep the rule)."""

from django.db import migrations, models

from dedup_site.appendonly import on_postgresql, permanent

SUBJECT_SQL = """
CREATE OR REPLACE FUNCTION reviews_label_subject() RETURNS trigger AS $$
BEGIN
    SELECT p.a_id, p.b_id INTO NEW.doc_low, NEW.doc_high
        FROM ingest_candidatepair AS p WHERE p.id = NEW.pair_id;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER reviews_label_subject
    BEFORE INSERT ON reviews_label
    FOR EACH ROW EXECUTE FUNCTION reviews_label_subject();
ALTER TABLE reviews_label ADD CONSTRAINT label_one_current_per_subject
    EXCLUDE USING btree (editor_id WITH =, doc_low WITH =, doc_high WITH =)
    WHERE (superseded_by_id IS NULL)
    DEFERRABLE INITIALLY DEFERRED;
"""
SUBJECT_REMOVE_SQL = """
ALTER TABLE reviews_label DROP CONSTRAINT IF EXISTS label_one_current_per_subject;
DROP TRIGGER IF EXISTS reviews_label_subject ON reviews_label;
DROP FUNCTION IF EXISTS reviews_label_subject();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0010_label_subject"),
    ]

    operations = [
        migrations.AlterField(
            model_name="label",
            name="doc_high",
            field=models.BigIntegerField(help_text="The pair's higher document id."),
        ),
        migrations.AlterField(
            model_name="label",
            name="doc_low",
            field=models.BigIntegerField(help_text="The pair's lower document id."),
        ),
        on_postgresql(SUBJECT_SQL, SUBJECT_REMOVE_SQL),
        permanent("reviews_calibrationsample", kind="append-only"),
        permanent(
            "reviews_mergeproposal",
            kind="permanent",
            mutable=("status", "decided_by", "decided_at", "decision_reason", "decision_id"),
            sealed_by="decided_at",
        ),
    ]
