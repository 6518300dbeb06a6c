"""The candidate index store: IndexEntry rows, and the lookup "every entry of this
method within k bits of a value".

PostgreSQL: the band keys of ingest/core/bands.py (scheme b32x2: the two 32-bit
halves), computed by SQL functions and indexed by one btree each led by (method, key)
that also carries the SimHash, the document id and the fetch time (migration 0029) —
the keys are never stored in the row. A query looks up every key within the scheme's
radius of the query's halves, one index-only branch per half, and applies the exact
Hamming filter to what the index holds: no table page is read where the visibility map
says all-visible (after a VACUUM; 0 heap fetches measured at 2.26M).

The table has no primary key there (migration 0036): band btree 0 is UNIQUE on (method,
key 0, document id, fetch time), which for rows derived from immutable fingerprints is
one row per method and document, so a repeated `entries_add` (ON CONFLICT DO NOTHING)
adds nothing, a concurrent one included. Nothing finds an entry by its document alone:
`fingerprints_indexed` finds a fingerprint's entry by its SimHash.

Elsewhere (the embedded SQLite default) the table keeps its primary key on (method,
document), and the lookup is a scan of the method's entries; fine for a demo, not for a
corpus.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import psycopg
import psycopg.adapt
import psycopg.postgres
import psycopg.pq
from django.db import connection, transaction
from django.db.models import Exists, F, Func, IntegerField, OuterRef, QuerySet

from ingest import partitions
from ingest.core.bands import BandScheme, int4_array_binary, scheme_for
from ingest.core.simhash import to_signed64, to_unsigned64
from ingest.models import Fingerprint, IndexEntry

# Largest threshold the index answers; per-doc-type thresholds must stay at or below it.
K_MAX = 6
SCHEME: BandScheme = scheme_for(K_MAX)
SQL_FUNCTION = "dedup_band_key"


@dataclass(frozen=True)
class Hit:
    document_id: int
    value: int  # unsigned
    distance: int


def uses_band_index() -> bool:
    return connection.vendor == "postgresql"


def entries_add(rows: Sequence[tuple[int, int, int, datetime]]) -> None:
    """Add (method_id, document_id, unsigned value, fetched_at) rows; repeats are no-ops
    (on PostgreSQL they conflict in the unique band btree 0: ingest 0036)."""
    partitions.months_ensure("ingest_indexentry", (f for _, _, _, f in rows))
    IndexEntry.objects.bulk_create(
        [
            IndexEntry(method=m, document_id=d, simhash=to_signed64(v), fetched_at=f)
            for m, d, v, f in rows
        ],
        ignore_conflicts=True,
    )


def fingerprints_indexed(fingerprints: QuerySet[Fingerprint]) -> QuerySet[Fingerprint]:
    """Those of these main-branch fingerprints whose entry is in the index. On
    PostgreSQL the table has no key by document (ingest 0036): an entry is found by its
    SimHash, one probe of the unique band btree 0 (method, band key 0, document, fetch
    time) a fingerprint, not a scan of the index."""
    entry = IndexEntry.objects.filter(
        method=OuterRef("method_id"),
        document_id=OuterRef("document_id"),
        simhash=OuterRef("simhash"),
        fetched_at=OuterRef("document__fetched_at"),
    )
    if uses_band_index():
        entry = entry.alias(key=_band_key_0(F("simhash"))).filter(
            key=_band_key_0(OuterRef("simhash"))
        )
    return fingerprints.filter(Exists(entry))


def _band_key_0(simhash: F | OuterRef) -> Func:
    return Func(simhash, function=f"{SQL_FUNCTION}_0", output_field=IntegerField())


def query(
    *,
    method_id: int,
    value: int,
    k: int,
    exclude_document: int | None = None,
    around: datetime | None = None,
    lookback_days: int = 0,
) -> list[Hit]:
    """Every indexed document of the method within k bits of `value`."""
    if not 0 <= k <= K_MAX:
        raise ValueError(f"the index answers thresholds 0..{K_MAX}, not {k}")
    window = None
    if lookback_days and around is not None:
        span = timedelta(days=lookback_days)
        window = (around - span, around + span)
    if uses_band_index():
        return _query_pg(method_id, value, k, exclude_document, window)
    return _query_scan(method_id, value, k, exclude_document, window)


# Columns the covering band btrees carry besides (method, key): band btree 1 INCLUDEs
# them (migration 0029); the unique band btree 0 has the document id and the fetch time
# among its key columns and INCLUDEs the SimHash (0036). A lookup reads nothing else
# (the window's fetched_at included), so it is an index-only scan and never visits the
# table. A new column read here needs a migration.
INCLUDE = ("simhash", "document_id", "fetched_at")
# One branch per combo (an OR of the two lookups would be a bitmap heap scan, which
# visits every nominated row in the table); UNION drops a row both branches return.
_PG_BRANCH = """SELECT document_id, simhash, bit_count((simhash # %s)::bit(64))
FROM ingest_indexentry
WHERE method = %s
  AND {key}
  AND bit_count((simhash # %s)::bit(64)) <= %s{window}"""
_WINDOW = "\n  AND fetched_at BETWEEN %s AND %s"


def _pg_query(window: bool) -> str:
    return "\nUNION\n".join(
        _PG_BRANCH.format(
            key=SCHEME.sql_key_condition(SQL_FUNCTION, i), window=_WINDOW if window else ""
        )
        for i in range(len(SCHEME.combos))
    )


_PG_QUERY = _pg_query(window=False)
_PG_QUERY_WINDOW = _pg_query(window=True)


def pg_statement(
    method_id: int, value: int, k: int, window: tuple[datetime, datetime] | None = None
) -> tuple[str, list[object]]:
    """The band lookup's SQL and parameters (run through a cursor that knows Int4Array:
    `pg_cursor`). With a window it reads only the partitions of the window's months.

    Probe keys go sorted: the btree sorts a search array first, and a sorted one it
    only checks."""
    signed = to_signed64(value)
    params: list[object] = []
    for keys in SCHEME.probe_arrays(value, k):
        params += [signed, method_id, Int4Array(np.sort(keys)), signed, k]
        if window:
            params += window
    return (_PG_QUERY_WINDOW if window else _PG_QUERY), params


def pg_cursor() -> psycopg.Cursor:
    """A server-side binding cursor on Django's connection that sends Int4Array probes."""
    connection.ensure_connection()
    cursor = psycopg.Cursor(connection.connection)
    cursor.adapters.register_dumper(Int4Array, _Int4ArrayDumper)
    return cursor


def _query_pg(
    method_id: int,
    value: int,
    k: int,
    exclude: int | None,
    window: tuple[datetime, datetime] | None,
) -> list[Hit]:
    sql, params = pg_statement(method_id, value, k, window)
    # Server-side binding and a prepared statement (generic plan: see the connection
    # options in settings): the probe arrays are large, and planning them afresh costs
    # more than the lookup. Errors go through Django's wrapper like any ORM query's: a
    # lost connection is then django.db.OperationalError, and the connection is marked
    # broken so the next attempt opens a fresh one.
    with connection.wrap_database_errors, pg_cursor() as cursor:
        cursor.execute(sql, params, prepare=True)
        rows = cursor.fetchall()
    return [
        Hit(d, to_unsigned64(s), dist) for d, s, dist in rows if exclude is None or d != exclude
    ]


class Int4Array:
    """An int32 numpy array sent as a binary int4[] parameter. A query sends 66 probe
    keys at the default thresholds (k = 3) and 6,018 at the largest (k = 6); written as
    text literals (`int_array`), those made a k = 6 lookup cost the worker 1.2 CPU-ms,
    against 0.21 with binary arrays (and 1.76 against 0.45 ms in all)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values


class _Int4ArrayDumper(psycopg.adapt.Dumper):
    format = psycopg.pq.Format.BINARY
    oid = psycopg.postgres.types["int4"].array_oid

    def dump(self, obj: Int4Array) -> bytes:
        return int4_array_binary(obj.values)


def _query_scan(
    method_id: int,
    value: int,
    k: int,
    exclude: int | None,
    window: tuple[datetime, datetime] | None,
) -> list[Hit]:
    qs = IndexEntry.objects.filter(method=method_id)
    if exclude is not None:
        qs = qs.exclude(document_id=exclude)
    if window is not None:
        qs = qs.filter(fetched_at__range=window)
    rows = list(qs.values_list("document_id", "simhash"))
    if not rows:
        return []
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    values = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows)).view(np.uint64)
    distances = np.bitwise_count(values ^ np.uint64(value))
    keep = np.nonzero(distances <= k)[0]
    return [Hit(int(ids[i]), int(values[i]), int(distances[i])) for i in keep]


def band_index_warm() -> int:
    """Read the band btrees whole (every partition's), so that the lookups that follow
    find them in memory: after a restart or a bulk load the first lookups otherwise read
    them from disk (a first round of k = 6 lookups at 10M documents measured 34.8 ms at
    p95 against 13-15 after it; docs/scaling.md). Index-only scans of each btree in key
    order, one statement a btree; returns the entries read. A worker runs it when it
    starts (ingest.tasks, worker_ready); `manage.py candidates --warm` runs it by hand."""
    if not uses_band_index():
        return 0
    read = 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        for i in range(len(SCHEME.combos)):
            cursor.execute(
                f"SELECT count(*) FROM ingest_indexentry WHERE {SQL_FUNCTION}_{i}(simhash) "
                ">= -2147483648"
            )
            read += int(cursor.fetchone()[0])
    return read


def brute_force(*, method_id: int, value: int, k: int) -> list[Hit]:
    """The scan, on any database: what the recall check compares the index against."""
    return _query_scan(method_id, value, k, None, None)
