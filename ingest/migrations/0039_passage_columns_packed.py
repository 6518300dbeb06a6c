"""The passage sets' columns in the order that packs their rows: the document, the fetch
time, the site, the method, then the hashes (PostgreSQL, every attached partition).

PostgreSQL keeps a table's columns in the order they were made and aligns each to its
type. The partitioned table of ingest 0026 came out as (method, site_id, fetched_at,
hashes, document_id): the hashes (a bytea of 8 bytes a hash since 0037, with a one-byte
header up to 15 hashes) end one byte past an 8-byte boundary, so `document_id` after
them cost 7 bytes of padding in every set of up to 15 hashes (about 70% of the scale
bench's English sets). With the fixed-width columns first, widest first, that set's row
is 8 bytes shorter; a longer set (a four-byte header, aligned) is the same size either
way.

The table is rebuilt: a new partitioned table in this order with a partition of the same
bounds and name for each attached partition (the default one too), the rows copied (as
the table's owner: the permanence triggers of ingest 0020 bind the application's role),
then the primary key, the bucket GIN, the foreign key, the triggers and the grants made
again from the old table's own definitions, and the old table dropped. A month detached
before (ingest.partitions) keeps its old column order: attaching it matches columns by
name, so it comes back as it is. Partitions made later (`dedup_partition_ensure`) take the
parent's order. The table is locked while it is copied (measured at 10M in
docs/scaling.md).

SQLite (the embedded default) has no such padding to save: nothing changes there.
Backward rebuilds the old order the same way.
"""

from typing import Any

from django.db import migrations

TABLE = "ingest_passageset"
PACKED = ("document_id", "fetched_at", "site_id", "method", "hashes")
BEFORE = ("method", "site_id", "fetched_at", "hashes", "document_id")


def _definitions(cursor: Any, table: str) -> dict[str, Any]:
    """What the rebuild makes again: the columns' types, the attached partitions with
    their bounds, the constraints, the other indexes, the triggers and the grants."""
    cursor.execute(
        "SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
        [table],
    )
    columns = {name: (kind, notnull) for name, kind, notnull in cursor.fetchall()}
    cursor.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass "
        "ORDER BY c.relname",
        [table],
    )
    partitions = cursor.fetchall()
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'f', 'c') "
        "ORDER BY contype = 'f', conname",
        [table],
    )
    constraints = cursor.fetchall()
    cursor.execute(
        """
        SELECT pg_get_indexdef(x.indexrelid) FROM pg_index x
        WHERE x.indrelid = %s::regclass
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
        """,
        [table],
    )
    # A partitioned table's own index reads "ON ONLY": made so, it would hold no partition.
    indexes = [row[0].replace(" ON ONLY ", " ON ", 1) for row in cursor.fetchall()]
    cursor.execute(
        "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = %s::regclass "
        "AND NOT tgisinternal AND tgparentid = 0 ORDER BY tgname",
        [table],
    )
    triggers = [row[0] for row in cursor.fetchall()]
    cursor.execute(
        "SELECT grantee, string_agg(privilege_type, ', ') "
        "FROM information_schema.role_table_grants "
        "WHERE table_schema = current_schema() AND table_name = %s "
        "AND grantee <> current_user GROUP BY grantee",
        [table],
    )
    grants = cursor.fetchall()
    return {
        "columns": columns,
        "partitions": partitions,
        "constraints": constraints,
        "indexes": indexes,
        "triggers": triggers,
        "grants": grants,
    }


def _rebuild(cursor: Any, order: tuple[str, ...]) -> None:
    cursor.execute("SELECT relkind FROM pg_class WHERE oid = %s::regclass", [TABLE])
    if cursor.fetchone()[0] != "p":
        raise RuntimeError(f"{TABLE} is not partitioned (ingest 0026): not rebuilt")
    found = _definitions(cursor, TABLE)
    columns = found["columns"]
    if list(columns) == list(order):
        return
    if set(columns) != set(order):
        raise RuntimeError(f"{TABLE} has columns {sorted(columns)}, expected {sorted(order)}")
    new = f"{TABLE}__packed"
    definitions = ", ".join(
        f"{name} {columns[name][0]}" + (" NOT NULL" if columns[name][1] else "") for name in order
    )
    names = ", ".join(order)
    cursor.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
    cursor.execute(f"CREATE TABLE {new} ({definitions}) PARTITION BY RANGE (fetched_at)")
    for i, (_, bound) in enumerate(found["partitions"]):
        cursor.execute(f"CREATE TABLE {new}_{i} PARTITION OF {new} {bound}")
    cursor.execute(f"INSERT INTO {new} ({names}) SELECT {names} FROM {TABLE}")
    # Detached partitions are tables of their own: dropping the parent leaves them.
    cursor.execute(f"DROP TABLE {TABLE}")
    cursor.execute(f"ALTER TABLE {new} RENAME TO {TABLE}")
    for i, (name, _) in enumerate(found["partitions"]):
        cursor.execute(f"ALTER TABLE {new}_{i} RENAME TO {name}")
    for name, definition in found["constraints"]:
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {name} {definition}")
    for statement in found["indexes"] + found["triggers"]:
        cursor.execute(statement)
    for grantee, privileges in found["grants"]:
        cursor.execute(f'GRANT {privileges} ON {TABLE} TO "{grantee}"')
    cursor.execute(f"ANALYZE {TABLE}")


def _run(order: tuple[str, ...]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            _rebuild(cursor, order)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0038_fingerprint_id_brin"),
    ]

    operations = [
        migrations.RunPython(_run(PACKED), _run(BEFORE)),
    ]
