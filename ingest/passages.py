"""The passage index store: PassageSet rows, per-site template passages, and the lookup
"which documents share passages with these".

PostgreSQL: one row per document with its passage hashes in a bigint[] under a GIN
index (migration 0007); a query is one `hashes && $1` lookup that also counts the
shared hashes. Template passages are counted per site at write time (how many of the
site's pages hold each new passage, stopping at the threshold) and recorded once they
reach PASSAGE_TEMPLATE_DF. Elsewhere (the embedded SQLite default) the same answers
come from scans of the method's rows; fine for a demo, not for a corpus.
"""

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg
from django.conf import settings
from django.db import connection

from ingest.core import passages as core
from ingest.models import PassageSet, PassageTemplate

# Passage methods by the number stored in PassageSet.method / PassageTemplate.method.
METHODS: dict[int, str] = {1: core.METHOD}
METHOD_ID = 1


@dataclass(frozen=True)
class Entry:
    document_id: int
    site_id: int
    fetched_at: datetime
    passages: list[core.Passage]


@dataclass(frozen=True)
class PassageHit:
    document_id: int
    shared: int  # stored passages of the hit found among the query's (templates removed)


def uses_gin() -> bool:
    return connection.vendor == "postgresql"


def entries_add(entries: Sequence[Entry]) -> None:
    """Store the documents' passage sets (repeats are no-ops) and count their passages
    on each site; passages reaching the template threshold are recorded."""
    rows = [
        PassageSet(
            method=METHOD_ID,
            document_id=e.document_id,
            site_id=e.site_id,
            fetched_at=e.fetched_at,
            hashes=[core.to_signed(h) for h in stored_hashes(e.passages)],
        )
        for e in entries
    ]
    PassageSet.objects.bulk_create(rows, ignore_conflicts=True)
    by_site: dict[int, set[int]] = {}
    for row in rows:
        by_site.setdefault(row.site_id, set()).update(row.hashes)
    for site_id, hashes in by_site.items():
        _templates_count(site_id, hashes)


def stored_hashes(passages: Iterable[core.Passage]) -> list[int]:
    return core.smallest(core.hash_set(passages), core.STORED_MAX)


def query_hashes(passages: Iterable[core.Passage]) -> list[int]:
    return core.smallest(core.hash_set(passages), core.QUERY_MAX)


def _templates_count(site_id: int, signed: set[int]) -> None:
    df_min = settings.PASSAGE_TEMPLATE_DF
    known = set(
        PassageTemplate.objects.filter(
            method=METHOD_ID, site_id=site_id, hash__in=list(signed)
        ).values_list("hash", flat=True)
    )
    todo = sorted(signed - known)
    if not todo:
        return
    if uses_gin():
        counts = _site_counts_pg(site_id, todo, df_min)
    else:
        counts = _site_counts_scan(site_id, todo)
    reached = [(h, n) for h, n in counts.items() if n >= df_min]
    PassageTemplate.objects.bulk_create(
        [PassageTemplate(method=METHOD_ID, site_id=site_id, hash=h, df=n) for h, n in reached],
        ignore_conflicts=True,
    )


_PG_SITE_COUNTS = """
SELECT h, (SELECT count(*) FROM (
    SELECT 1 FROM ingest_passageset p
    WHERE p.hashes @> ARRAY[h] AND p.method = %s AND p.site_id = %s
    LIMIT %s) AS seen)
FROM unnest(%s::bigint[]) AS h
"""


def _site_counts_pg(site_id: int, signed: list[int], df_min: int) -> dict[int, int]:
    """Pages of the site holding each hash, counted up to df_min (a template passage
    is counted once, then skipped)."""
    with connection.cursor() as cursor:
        cursor.execute(_PG_SITE_COUNTS, [METHOD_ID, site_id, df_min, signed])
        return {h: n for h, n in cursor.fetchall()}


def _site_counts_scan(site_id: int, signed: list[int]) -> dict[int, int]:
    wanted = set(signed)
    counts: Counter[int] = Counter()
    for hashes in PassageSet.objects.filter(method=METHOD_ID, site_id=site_id).values_list(
        "hashes", flat=True
    ):
        counts.update(wanted.intersection(hashes))
    return dict(counts)


def templates_among(hashes: Collection[int]) -> set[int]:
    """The unsigned hashes, among these, that are a template passage on any site: a
    line that is boilerplate on one site (a wire credit, a share prompt) is not
    evidence of a copy anywhere."""
    if not hashes:
        return set()
    signed = [core.to_signed(h) for h in hashes]
    found = PassageTemplate.objects.filter(method=METHOD_ID, hash__in=signed).values_list(
        "hash", flat=True
    )
    return {core.to_unsigned(h) for h in found}


def query(
    *,
    passages: Sequence[core.Passage],
    exclude_document: int | None = None,
    around: datetime | None = None,
    lookback_days: int = 0,
    ignore: Collection[int] = (),
) -> list[PassageHit]:
    """Documents sharing at least PASSAGE_SHARED_MIN stored passages with these
    (template passages and `ignore` removed), most shared first."""
    return lookup(
        hashes=[h for h in query_hashes(passages) if h not in ignore],
        exclude_document=exclude_document,
        around=around,
        lookback_days=lookback_days,
    )


def lookup(
    *,
    hashes: Collection[int],
    exclude_document: int | None = None,
    around: datetime | None = None,
    lookback_days: int = 0,
) -> list[PassageHit]:
    """`query` for unsigned passage hashes given as they are."""
    if not hashes:
        return []
    window = None
    if lookback_days and around is not None:
        span = timedelta(days=lookback_days)
        window = (around - span, around + span)
    if uses_gin():  # the template filter is part of the statement
        hits = _query_pg(sorted(set(hashes)), exclude_document, window)
    else:
        hashes = sorted(set(hashes) - templates_among(hashes))
        hits = _query_scan(hashes, exclude_document, window)
    shared_min = settings.PASSAGE_SHARED_MIN
    kept = [h for h in hits if h.shared >= shared_min]
    return sorted(kept, key=lambda h: (-h.shared, h.document_id))


# One GIN probe per query passage, each stopping at PASSAGE_COMMON_DF documents: a
# passage on that many pages is a stock phrase, dropped; the rest are counted per
# document. The work per query is bounded whatever the corpus holds.
_PG_QUERY = """
SELECT d, count(*) FROM (
    SELECT (SELECT array_agg(document_id) FROM (
        SELECT p.document_id FROM ingest_passageset p
        WHERE p.hashes @> ARRAY[h] AND p.method = %s {window}
        LIMIT %s) AS s) AS docs
    FROM unnest(%s::bigint[]) AS h
    WHERE NOT EXISTS (
        SELECT 1 FROM ingest_passagetemplate t WHERE t.method = %s AND t.hash = h)
) AS per, unnest(per.docs) AS d
WHERE cardinality(per.docs) < %s
GROUP BY d
"""
_PG_WINDOW = "AND p.fetched_at BETWEEN %s AND %s"


def _query_pg(
    hashes: list[int], exclude: int | None, window: tuple[datetime, datetime] | None
) -> list[PassageHit]:
    signed = [core.to_signed(h) for h in hashes]
    common = settings.PASSAGE_COMMON_DF
    sql = _PG_QUERY.format(window=_PG_WINDOW if window else "")
    params: list[object] = [METHOD_ID, *(window or ()), common, signed, METHOD_ID, common]
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, prepare=True)
        rows = cursor.fetchall()
    return [PassageHit(d, n) for d, n in rows if d != exclude]


def _query_scan(
    hashes: list[int], exclude: int | None, window: tuple[datetime, datetime] | None
) -> list[PassageHit]:
    wanted = {core.to_signed(h) for h in hashes}
    qs = PassageSet.objects.filter(method=METHOD_ID)
    if window is not None:
        qs = qs.filter(fetched_at__range=window)
    shared: dict[int, set[int]] = {}
    df: Counter[int] = Counter()
    for d, stored in qs.values_list("document_id", "hashes"):
        common = wanted.intersection(stored)
        if common:
            shared[d] = common
            df.update(common)
    stock = {h for h, n in df.items() if n >= settings.PASSAGE_COMMON_DF}
    out = []
    for d, common in shared.items():
        n = len(common - stock)
        if n and d != exclude:
            out.append(PassageHit(d, n))
    return out


def brute_force(
    *, passages: Sequence[core.Passage] = (), hashes: Collection[int] = ()
) -> list[PassageHit]:
    """The scan, on any database: what the recall check compares the index against."""
    wanted = set(hashes) | set(query_hashes(passages))
    hashes = sorted(wanted - templates_among(wanted))
    hits = _query_scan(hashes, None, None) if hashes else []
    return [h for h in hits if h.shared >= settings.PASSAGE_SHARED_MIN]


def bytes_per_document() -> float | None:
    """PostgreSQL: table, TOAST and index bytes of the passage index per stored set."""
    if not uses_gin():
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_total_relation_size('ingest_passageset'), count(*) FROM ingest_passageset"
        )
        size, rows = cursor.fetchone()
    return size / rows if rows else None
