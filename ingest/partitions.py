"""The channel indexes' time partitions on PostgreSQL (migration ingest 0026,
docs/scaling.md): make a month's partition before its rows go in, list them, detach an
old month to cheaper storage and attach it back, and move rows the default partition
caught into their month. SQLite has no partitions: every function is a no-op there.

A detached month is a table of its own, kept whole: nothing in it is dropped. Only the
candidate search stops reading it (new pages are no longer compared with that month);
documents, extractions, fingerprints, pairs and groups are not partitioned, so the desk
shows that month's pages and pairs as before.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper

from ingest.core.partitions import Month, default_partition_name, months_of, partition_name

TABLES = ("ingest_indexentry", "ingest_passageset", "ingest_minhashset")


class PartitionError(ValueError):
    pass


# A detached partition's comment: this, then the bounds it had ("FOR VALUES FROM …").
_DETACHED = "detached from its table; bounds: "


@dataclass(frozen=True)
class Partition:
    table: str
    name: str
    month: Month | None  # None: the default partition
    attached: bool
    rows: int  # the planner's estimate (pg_class.reltuples), -1 before the first ANALYZE
    bytes: int  # table and indexes


def partitioned() -> bool:
    """Whether this database partitions the channel indexes (PostgreSQL after 0026)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [TABLES[0]])
        row = cursor.fetchone()
    return row is not None and row[0] == "p"


# Each month's first day: the function makes the partition of the period holding it.
_ENSURE = "SELECT dedup_partition_ensure(%s, d, %s) FROM unnest(%s::date[]) AS d"


def months_ensure(table: str, times: Iterable[datetime]) -> None:
    """Make the partitions of `table` for the periods of these fetch times (an existing
    one costs a catalogue look-up). A row of a period without one would land in the
    default partition: still found, but read by every windowed query."""
    if table not in TABLES:
        raise PartitionError(f"not a time-partitioned table: {table}")
    if connection.vendor != "postgresql":
        return
    days = sorted(m.first_day for m in months_of(times))
    if not days:
        return
    with connection.cursor() as cursor:
        cursor.execute(_ENSURE, [table, settings.PARTITION_MONTHS, days])


def months_ahead(count: int = 2, *, now: datetime | None = None) -> None:
    """The partitions holding this month and the next `count` months, for every table:
    what the beat task keeps ready so that a live crawl never waits on one."""
    month = Month.of(now or datetime.now().astimezone())
    times = [month.plus(n).start for n in range(count + 1)]
    for table in TABLES:
        months_ensure(table, times)


_LIST = """
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid), c.reltuples::bigint,
       pg_total_relation_size(c.oid), i.inhparent IS NOT NULL
FROM pg_class c
LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = %s::regclass
WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = %s::regclass)
  AND c.relkind = 'r' AND (c.relname = %s OR c.relname ~ %s)
ORDER BY c.relname
"""


def partitions_list(table: str) -> list[Partition]:
    """The partitions of `table`, attached or detached (a detached month keeps its name)."""
    if not partitioned():
        return []
    pattern = f"^{table}_p[0-9]{{6}}$"
    with connection.cursor() as cursor:
        cursor.execute(_LIST, [table, table, default_partition_name(table), pattern])
        rows = cursor.fetchall()
    out = []
    for name, _bound, tuples, size, attached in rows:
        month = None if name == default_partition_name(table) else Month.parse(name[-6:])
        out.append(Partition(table, name, month, bool(attached), int(tuples), int(size)))
    return out


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def month_detach(month: Month, *, tablespace: str = "") -> list[str]:
    """Detach the partition of every table named after `month` (its first month), and
    move it to `tablespace` when given: the candidate search no longer reads it. Returns
    the tables detached."""
    _need_partitions()
    done = []
    with transaction.atomic():
        for table in TABLES:
            part = partition_name(table, month)
            if not _attached(table, part):
                continue
            with connection.cursor() as cursor:
                guards = _guards(cursor, table, part)
                cursor.execute(
                    "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE oid = %s::regclass",
                    [part],
                )
                (bound,) = cursor.fetchone()
                cursor.execute(f"ALTER TABLE {_quote(table)} DETACH PARTITION {_quote(part)}")
                # The bounds it had, for `month_attach`.
                cursor.execute(f"COMMENT ON TABLE {_quote(part)} IS %s", [_DETACHED + bound])
                # A detached month keeps the table's rule: its own copy of the triggers.
                for statement in guards:
                    cursor.execute(statement)
                if tablespace:
                    cursor.execute(
                        f"ALTER TABLE {_quote(part)} SET TABLESPACE {_quote(tablespace)}"
                    )
            done.append(part)
    return done


def month_attach(month: Month) -> list[str]:
    """Attach a detached partition back, with the bounds it had, to every table it was
    detached from. It comes back with its table's column types (a month detached before
    ingest 0037 holds its passage hashes as a bigint[]: rewritten as bytes first) and
    exactly its table's indexes: PostgreSQL builds those it lacks, and those its table no
    longer has (a month detached before ingest 0036 keeps the band index's old key) are
    dropped."""
    _need_partitions()
    done = []
    with transaction.atomic():
        for table in TABLES:
            part = partition_name(table, month)
            if _attached(table, part) or not _exists(part):
                continue
            with connection.cursor() as cursor:
                # Attaching clones the table's triggers: the detached copy's go first.
                cursor.execute(
                    "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass "
                    "AND NOT tgisinternal AND tgparentid = 0",
                    [part],
                )
                for (name,) in cursor.fetchall():
                    cursor.execute(f"DROP TRIGGER {_quote(name)} ON {_quote(part)}")
                cursor.execute("SELECT obj_description(%s::regclass, 'pg_class')", [part])
                (comment,) = cursor.fetchone()
                if not (comment or "").startswith(_DETACHED + "FOR VALUES FROM ("):
                    raise PartitionError(f"{part} does not say which bounds it had")
                bound = comment.removeprefix(_DETACHED)
                if not re.fullmatch(r"FOR VALUES FROM \('[-0-9: +]+'\) TO \('[-0-9: +]+'\)", bound):
                    raise PartitionError(f"{part}: unexpected bounds {bound!r}")
                _columns_convert(cursor, table, part)
                cursor.execute(
                    f"ALTER TABLE {_quote(table)} ATTACH PARTITION {_quote(part)} {bound}"
                )
                _strays_drop(cursor, part)
                cursor.execute(f"COMMENT ON TABLE {_quote(part)} IS NULL")
            done.append(part)
    return done


def default_adopt() -> dict[str, int]:
    """Move the rows the default partition caught into partitions of their months (as
    the tables' owner: the default partition is detached meanwhile, so the move holds
    the table for as long as it takes). Returns the rows moved per table."""
    _need_partitions()
    moved: dict[str, int] = {}
    for table in TABLES:
        default = default_partition_name(table)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"SELECT DISTINCT date_trunc('month', fetched_at AT TIME ZONE 'UTC')::date "
                f"FROM {_quote(default)}"
            )
            days = [r[0] for r in cursor.fetchall()]
            if not days:
                moved[table] = 0
                continue
            cursor.execute(f"ALTER TABLE {_quote(table)} DETACH PARTITION {_quote(default)}")
            cursor.execute(_ENSURE, [table, settings.PARTITION_MONTHS, days])
            cursor.execute(f"INSERT INTO {_quote(table)} SELECT * FROM {_quote(default)}")
            moved[table] = cursor.rowcount
            # The rows are in their months now; the owner passes the append-only rule.
            cursor.execute(f"DELETE FROM {_quote(default)}")
            cursor.execute(
                f"ALTER TABLE {_quote(table)} ATTACH PARTITION {_quote(default)} DEFAULT"
            )
    return moved


# A partition's indexes that are none of its table's: left by a month detached under an
# older schema (before ingest 0036, the band index's primary key and its plain band
# btree 0). Attaching builds what the table has and the partition lacks; these go.
_STRAYS = """
SELECT ic.relname, c.conname FROM pg_index x
JOIN pg_class ic ON ic.oid = x.indexrelid
LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
WHERE x.indrelid = %s::regclass
  AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = x.indexrelid)
ORDER BY ic.relname
"""


# A column whose type its table changed since a month was detached: (table, column, the
# old type, the new) → the conversion. Ingest 0037 made the passage hashes bytes.
_CONVERSIONS = {
    ("ingest_passageset", "hashes", "bigint[]", "bytea"): "passage_bytes(hashes)",
}
_COLUMN_TYPES = """
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped
"""


def _columns_convert(cursor: CursorWrapper, table: str, part: str) -> None:
    """Before an attach: a month detached before its table changed a column's type gets
    the table's type (its indexes over the column go first: the attach builds the
    table's). Any other difference is an error, said before anything is changed."""
    cursor.execute(_COLUMN_TYPES, [table])
    wanted = dict(cursor.fetchall())
    cursor.execute(_COLUMN_TYPES, [part])
    changes = []
    for column, kind in cursor.fetchall():
        if wanted.get(column, kind) == kind:
            continue
        using = _CONVERSIONS.get((table, column, kind, wanted[column]))
        if using is None:
            raise PartitionError(f"{part}.{column} is {kind}, its table's {wanted[column]}")
        changes.append((column, wanted[column], using))
    for column, kind, using in changes:
        cursor.execute(
            "SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid "
            "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attname = %s "
            "WHERE x.indrelid = %s::regclass AND NOT x.indisprimary "
            "AND (a.attnum = ANY(x.indkey) OR pg_get_indexdef(x.indexrelid) LIKE %s)",
            [column, part, f"%({column})%"],
        )
        for (index,) in cursor.fetchall():
            cursor.execute(f"DROP INDEX {_quote(index)}")
        cursor.execute(
            f"ALTER TABLE {_quote(part)} ALTER COLUMN {_quote(column)} TYPE {kind} USING {using}"
        )


def _strays_drop(cursor: CursorWrapper, part: str) -> None:
    """After an attach: an attached month has exactly its table's indexes."""
    cursor.execute(_STRAYS, [part])
    for index, constraint in cursor.fetchall():
        if constraint:
            cursor.execute(f"ALTER TABLE {_quote(part)} DROP CONSTRAINT {_quote(constraint)}")
        else:
            cursor.execute(f"DROP INDEX {_quote(index)}")


def _guards(cursor: CursorWrapper, table: str, part: str) -> list[str]:
    """The table's own triggers (its permanence rule), written for the partition."""
    cursor.execute(
        "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger "
        "WHERE tgrelid = %s::regclass AND NOT tgisinternal AND tgparentid = 0",
        [table],
    )
    out = []
    for name, definition in cursor.fetchall():
        on = re.compile(rf' ON (?:"?\w+"?\.)?"?{re.escape(table)}"? ')
        written, n = on.subn(f" ON {_quote(part)} ", definition, count=1)
        if n != 1:
            raise PartitionError(f"cannot read the trigger {name} of {table}")
        out.append(written)
    return out


def _need_partitions() -> None:
    if not partitioned():
        raise PartitionError("this database does not partition the channel indexes")


def _exists(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [name])
        return bool(cursor.fetchone()[0])


def _attached(table: str, part: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_inherits WHERE inhparent = %s::regclass "
            "AND inhrelid = to_regclass(%s)",
            [table, part],
        )
        return cursor.fetchone() is not None
