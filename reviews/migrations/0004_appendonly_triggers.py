"""Labels and decisions are append-only in PostgreSQL itself, whatever the client.

The label trigger is the one special case (it allows setting superseded_by once), so
its SQL is written out here; plain append-only tables use dedup_site.appendonly.

- reviews_label: a row trigger refuses DELETE, and every UPDATE except the one edit the
  desk makes: setting superseded_by on a label that has none, nothing else changing.
- reviews_decision: the row trigger of 0003 refuses UPDATE and DELETE.
- Both: a statement-level BEFORE TRUNCATE trigger refuses TRUNCATE, also when it comes
  from `TRUNCATE other_table CASCADE`.

Only a superuser can get past them (`SET session_replication_role = replica` turns
triggers off for a session; the test runner's flush does exactly that). The application
role owns no table, so it can neither drop nor disable a trigger (`manage.py
db_app_role`). SQLite has no such triggers here: there the model layer alone refuses.
"""

from django.db import migrations

from dedup_site.appendonly import on_postgresql

APPEND_ONLY_SQL = """
CREATE OR REPLACE FUNCTION reviews_refuse_truncate() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: TRUNCATE refused', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
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
CREATE TRIGGER reviews_label_append_only
    BEFORE UPDATE OR DELETE ON reviews_label
    FOR EACH ROW EXECUTE FUNCTION reviews_label_append_only();
CREATE TRIGGER reviews_label_no_truncate
    BEFORE TRUNCATE ON reviews_label
    FOR EACH STATEMENT EXECUTE FUNCTION reviews_refuse_truncate();
CREATE TRIGGER reviews_decision_no_truncate
    BEFORE TRUNCATE ON reviews_decision
    FOR EACH STATEMENT EXECUTE FUNCTION reviews_refuse_truncate();
"""
DROP_SQL = """
DROP TRIGGER IF EXISTS reviews_label_append_only ON reviews_label;
DROP TRIGGER IF EXISTS reviews_label_no_truncate ON reviews_label;
DROP TRIGGER IF EXISTS reviews_decision_no_truncate ON reviews_decision;
DROP FUNCTION IF EXISTS reviews_label_append_only();
DROP FUNCTION IF EXISTS reviews_refuse_truncate();
"""


class Migration(migrations.Migration):
    dependencies = [("reviews", "0003_decision_log")]

    operations = [
        on_postgresql(APPEND_ONLY_SQL, DROP_SQL),
    ]
