"""Time partitions for the channel indexes (docs/scaling.md, "Time partitions").

On PostgreSQL the band index (ingest_indexentry), the passage sets (ingest_passageset) and
the MinHash sets (ingest_minhashset) become tables partitioned by RANGE (fetched_at), one
partition per period of PARTITION_MONTHS calendar months (UTC, aligned on January; named
after its first month, `<table>_pYYYYMM`; the setting as it is when this migration runs
makes the first partitions) and a default partition for a period that has none yet. A lookback query then reads only the partitions of its window, and an
old month can be detached (`manage.py partitions --detach`), never dropped.

Each table is rebuilt as the owner: a partitioned copy with the same columns gets the
rows, the old table is dropped, and the copy takes its name, its indexes, foreign keys,
triggers (the permanence rule, unchanged) and grants, read from the catalogue before the
swap. The primary key gains `fetched_at` (a partitioned table's unique keys must hold its
partition key); a document has one fetch time, so the key still admits one row per
method and document. These are derived rows (rebuilt from the extractions), copied whole.

`dedup_partition_ensure(table, first_day, months)` creates a period's partition (the
month alone where the period would overlap partitions made under another setting). It runs with its
owner's rights (SECURITY DEFINER), so the application's role, which owns no table, can
have the month of a page it stores made before the row goes in; it creates nothing but a
partition of these three tables for a whole period. The migration makes the periods
already holding rows, the current one and the next.

SQLite (the embedded default) has no partitions: nothing changes there.
"""

from typing import Any

from django.conf import settings
from django.db import migrations

TABLES = {
    "ingest_indexentry": ("method", "document_id"),
    "ingest_passageset": ("method", "document_id"),
    "ingest_minhashset": ("method", "document_id"),
}

ENSURE_SQL = """
CREATE OR REPLACE FUNCTION dedup_partition_ensure(parent text, month_day date, months int)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
    first_day date;
    child text;
BEGIN
    IF parent NOT IN ('ingest_indexentry', 'ingest_passageset', 'ingest_minhashset') THEN
        RAISE EXCEPTION 'not a time-partitioned table: %', parent;
    END IF;
    IF months NOT IN (1, 3, 6, 12) OR month_day IS NULL
       OR month_day <> date_trunc('month', month_day)::date THEN
        RAISE EXCEPTION 'no partition of % months for %', months, month_day;
    END IF;
    -- The period holding the month: `months` months aligned on January.
    first_day := make_date(
        extract(year FROM month_day)::int,
        (extract(month FROM month_day)::int - 1) / months * months + 1,
        1
    );
    child := parent || '_p' || to_char(first_day, 'YYYYMM');
    IF to_regclass(child) IS NOT NULL THEN
        RETURN false;
    END IF;
    BEGIN
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
            child, parent,
            first_day::timestamp AT TIME ZONE 'UTC',
            (first_day + make_interval(months => months))::timestamp AT TIME ZONE 'UTC'
        );
        RETURN true;
    EXCEPTION WHEN invalid_object_definition THEN
        -- The period overlaps partitions made under another period setting: the month
        -- alone, unless one of them holds it already.
        IF months = 1 THEN
            RETURN false;
        END IF;
    END;
    RETURN dedup_partition_ensure(parent, month_day, 1);
EXCEPTION
    -- Another writer made it first.
    WHEN duplicate_table OR unique_violation THEN
        RETURN false;
    -- Rows of that period already sit in the default partition: they stay there, still
    -- found by every query, until `manage.py partitions --adopt` moves them.
    WHEN check_violation THEN
        RETURN false;
    WHEN invalid_object_definition THEN
        RETURN false;
END;
$$;
"""

ENSURE_REMOVE_SQL = "DROP FUNCTION IF EXISTS dedup_partition_ensure(text, date, int);"


def _catalogue(cursor: Any, table: str) -> dict[str, Any]:
    cursor.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'p'",
        [table],
    )
    pk = cursor.fetchone()[0]
    cursor.execute(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() "
        "AND tablename = %s AND indexname <> %s ORDER BY indexname",
        [table, pk],
    )
    indexes = [r[0] for r in cursor.fetchall()]
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype = 'f' ORDER BY conname",
        [table],
    )
    foreign = cursor.fetchall()
    cursor.execute(
        "SELECT pg_get_triggerdef(oid) FROM pg_trigger "
        "WHERE tgrelid = %s::regclass AND NOT tgisinternal AND tgparentid = 0 ORDER BY tgname",
        [table],
    )
    triggers = [r[0] for r in cursor.fetchall()]
    cursor.execute(
        "SELECT grantee, string_agg(privilege_type, ', ') FROM information_schema.role_table_grants "
        "WHERE table_schema = current_schema() AND table_name = %s "
        "AND grantee <> current_user GROUP BY grantee",
        [table],
    )
    grants = cursor.fetchall()
    return {"pk": pk, "indexes": indexes, "foreign": foreign, "triggers": triggers, "grants": grants}


def _rebuild(cursor: Any, table: str, *, partitioned: bool, months: int = 1) -> None:
    cursor.execute("SELECT relkind FROM pg_class WHERE oid = %s::regclass", [table])
    if (cursor.fetchone()[0] == "p") == partitioned:
        return
    found = _catalogue(cursor, table)
    copy = f"{table}__rebuilt"
    key = ", ".join((*TABLES[table], *(("fetched_at",) if partitioned else ())))
    if partitioned:
        cursor.execute(
            f"CREATE TABLE {copy} (LIKE {table} INCLUDING DEFAULTS) PARTITION BY RANGE (fetched_at)"
        )
        cursor.execute(f"CREATE TABLE {table}_default PARTITION OF {copy} DEFAULT")
        # Each period holding rows, the current one and the next: periods of
        # PARTITION_MONTHS months aligned on January.
        cursor.execute(
            f"SELECT DISTINCT make_date(y, (m - 1) / %s * %s + 1, 1) FROM ("
            f" SELECT extract(year FROM t)::int AS y, extract(month FROM t)::int AS m FROM ("
            f"  SELECT fetched_at AT TIME ZONE 'UTC' AS t FROM {table}"
            "   UNION SELECT now() AT TIME ZONE 'UTC'"
            "   UNION SELECT now() AT TIME ZONE 'UTC' + make_interval(months => %s)) AS a) AS b",
            [months, months, months],
        )
        for (first_day,) in cursor.fetchall():
            cursor.execute(
                f"CREATE TABLE {table}_p{first_day:%Y%m} PARTITION OF {copy} FOR VALUES FROM "
                "(%s::timestamp AT TIME ZONE 'UTC') TO "
                "((%s::date + make_interval(months => %s))::timestamp AT TIME ZONE 'UTC')",
                [first_day, first_day, months],
            )
    else:
        cursor.execute(f"CREATE TABLE {copy} (LIKE {table} INCLUDING DEFAULTS)")
    cursor.execute(f"INSERT INTO {copy} SELECT * FROM {table}")
    # Detached partitions are tables of their own: dropping the parent leaves them.
    cursor.execute(f"DROP TABLE {table} CASCADE")
    cursor.execute(f"ALTER TABLE {copy} RENAME TO {table}")
    cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {found['pk']} PRIMARY KEY ({key})")
    for statement in found["indexes"] + found["triggers"]:
        cursor.execute(statement)
    for name, definition in found["foreign"]:
        cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
    for grantee, privileges in found["grants"]:
        cursor.execute(f'GRANT {privileges} ON {table} TO "{grantee}"')


def forward(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for table in TABLES:
            _rebuild(cursor, table, partitioned=True, months=settings.PARTITION_MONTHS)
        cursor.execute(ENSURE_SQL)


def backward(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(ENSURE_REMOVE_SQL)
        for table in TABLES:
            _rebuild(cursor, table, partitioned=False)


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0025_dedup_state_budget"),
    ]

    operations = [
        migrations.RunPython(forward, backward),
    ]
