"""Labels carry their subject: the unordered pair of documents (reviews.models.LabelSubject),
copied from the pair, so that "one current label per editor" can hold per pair of
documents rather than per method's pair row.

This migration rewrites labels, which are append-only even for the tables' owner, and
declares it (dedup_site.appendonly.owner_rewrite): it fills the two new columns of every
label from its pair, and where one editor holds more than one current label on the same
documents (two tabs saving at once could do that before), it supersedes all but the
newest by the newest — the history keeps every one. Run `manage.py queue_tally_rebuild`
after it when it superseded any (the queue's states count current labels).

The label trigger is replaced first (reviews_label_append_only): it honours a declared
rewrite by the owner, and it allows setting superseded_by only to a newer label of the
same editor on the same documents."""

from django.conf import settings
from django.db import migrations, models

from dedup_site.appendonly import on_postgresql, owner_rewrite

LABEL_TRIGGER_SQL = """
CREATE OR REPLACE FUNCTION reviews_label_append_only() RETURNS trigger AS $$
DECLARE
    successor record;
BEGIN
    IF dedup_rewrite_allowed(TG_RELID, 'all') THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE'
       AND OLD.superseded_by_id IS NULL
       AND NEW.superseded_by_id IS NOT NULL
       AND (to_jsonb(NEW) - 'superseded_by_id') = (to_jsonb(OLD) - 'superseded_by_id') THEN
        SELECT l.editor_id, l.doc_low, l.doc_high INTO successor
            FROM reviews_label AS l WHERE l.id = NEW.superseded_by_id;
        IF FOUND
           AND NEW.superseded_by_id > OLD.id
           AND successor.editor_id = OLD.editor_id
           AND successor.doc_low = OLD.doc_low
           AND successor.doc_high = OLD.doc_high THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'reviews_label is append-only: superseded_by refused (only a newer label of the same editor on the same documents supersedes a label)'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RAISE EXCEPTION 'reviews_label is append-only: % refused (only superseded_by may be set, once)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""
# The trigger of reviews migration 0004, for the way back.
LABEL_TRIGGER_0004_SQL = """
CREATE OR REPLACE FUNCTION reviews_label_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND OLD.superseded_by_id IS NULL
       AND NEW.superseded_by_id IS NOT NULL
       AND (to_jsonb(NEW) - 'superseded_by_id') = (to_jsonb(OLD) - 'superseded_by_id') THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'reviews_label is append-only: % refused (only superseded_by may be set, once)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""
FILL_SQL = [
    # Pairs are stored a < b: the low document is a.
    """
UPDATE reviews_label SET
    doc_low = (SELECT p.a_id FROM ingest_candidatepair AS p WHERE p.id = reviews_label.pair_id),
    doc_high = (SELECT p.b_id FROM ingest_candidatepair AS p WHERE p.id = reviews_label.pair_id)
""",
    """
UPDATE reviews_label SET superseded_by_id = (
    SELECT max(n.id) FROM reviews_label AS n
    WHERE n.editor_id = reviews_label.editor_id AND n.doc_low = reviews_label.doc_low
      AND n.doc_high = reviews_label.doc_high AND n.superseded_by_id IS NULL
)
WHERE superseded_by_id IS NULL AND id < (
    SELECT max(n.id) FROM reviews_label AS n
    WHERE n.editor_id = reviews_label.editor_id AND n.doc_low = reviews_label.doc_low
      AND n.doc_high = reviews_label.doc_high AND n.superseded_by_id IS NULL
)
""",
]


def fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    for sql in FILL_SQL:
        schema_editor.execute(sql, None)


class Migration(migrations.Migration):

    dependencies = [
        ('ingest', '0020_permanent_crawl_data'),
        ('reviews', '0009_label_tally'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='label',
            name='doc_high',
            field=models.BigIntegerField(help_text="The pair's higher document id.", null=True),
        ),
        migrations.AddField(
            model_name='label',
            name='doc_low',
            field=models.BigIntegerField(help_text="The pair's lower document id.", null=True),
        ),
        migrations.AddIndex(
            model_name='label',
            index=models.Index(fields=['doc_low', 'doc_high'], name='label_subject'),
        ),
        on_postgresql(LABEL_TRIGGER_SQL, LABEL_TRIGGER_0004_SQL),
        owner_rewrite("reviews 0010: labels get their subject; duplicate current labels superseded"),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
