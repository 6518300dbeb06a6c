"""The passage index store: PassageSet rows, per-site template passages, and the lookup
"which documents share passages with these".

PostgreSQL: one row per document with its passage hashes in a bytea (8 bytes a hash,
migration 0037) under a GIN index of their buckets (migration 0032: each hash's top 24
bits); a query is one GIN probe per passage that is neither a template passage nor a
known stock phrase, the bucket's rows rechecked for the passage itself, and the shared
passages are counted per document.
At write time each new passage is counted on the whole index (stopping at
PASSAGE_COMMON_DF: one that reaches it is recorded in PassageCommon and never probed
again, so no query reads a long posting list) and on its own site (stopping at
PASSAGE_TEMPLATE_DF: recorded in PassageTemplate); a passage already a template
passage on some site is neither counted nor probed again. The workers' search
(`entries_add_and_query`) probes each distinct passage of a batch of documents once,
and that one answer serves the counts and every document's lookup. Elsewhere (the
embedded SQLite default) the same answers come from scans of the method's rows; fine
for a demo, not for a corpus.
"""

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg
from django.conf import settings
from django.db import connection

from ingest import partitions
from ingest.core import passages as core
from ingest.core import shortcopy
from ingest.core.methods import passage_method_for
from ingest.models import PassageCommon, PassageSet, PassageTemplate, hashes_pack, int_array

# Passage methods by the number stored in PassageSet.method / PassageTemplate.method:
# the passages a method reads (METHODS: words, or CJK characters and words) and what
# its index keeps of them (STORAGES, ingest.core.passages.Storage). Each fingerprint
# method reads passages of one of them (`method_for`): the sets, site templates and
# stock phrases of one passage method are never compared with another's. 1 and 2 keep
# a document's 64 smallest passages; 3 and 4 (the dedup budget) its coarse picks, or
# every passage of a short text. Derived data: a database moves to 3 and 4 by a
# rebuild from its extractions (docs/scaling.md).
METHODS: dict[int, str] = {
    1: core.METHOD,
    2: core.MIXED_METHOD,
    3: core.METHOD,
    4: core.MIXED_METHOD,
}
STORAGES: dict[int, core.Storage] = {1: core.WHOLE, 2: core.WHOLE, 3: core.COARSE, 4: core.COARSE}
METHOD_ID = 3
MIXED_METHOD_ID = 4
WHOLE_METHOD_ID = 1
WHOLE_MIXED_METHOD_ID = 2


def method_name(method: int) -> str:
    """A passage method's full name: its passages' method and its storage."""
    return f"{METHODS[method]}+{STORAGES[method].key}"


def storage_in_use() -> core.Storage:
    """The storage new passage sets are written and looked up under: PASSAGE_STORAGE
    when set; else the budget's (COARSE), unless the database holds passage sets under
    the old storage and none under it (a database from before the budget keeps its
    index until it is rebuilt: `PASSAGE_STORAGE=coarse-w150-whole24-v1 manage.py
    candidates --rebuild`)."""
    chosen = settings.PASSAGE_STORAGE
    if chosen:
        return core.STORAGES[chosen]
    coarse = [i for i, s in STORAGES.items() if s == core.COARSE]
    if PassageSet.objects.filter(method__in=coarse).exists():
        return core.COARSE
    whole = [i for i, s in STORAGES.items() if s == core.WHOLE]
    return core.WHOLE if PassageSet.objects.filter(method__in=whole).exists() else core.COARSE


def method_for(fingerprint_key: str) -> int:
    """The passage method (its number) of a fingerprint method, under the storage in use."""
    name, storage = passage_method_for(fingerprint_key), storage_in_use()
    return next(i for i, n in METHODS.items() if n == name and STORAGES[i] == storage)


def lookup_shared_min(method: int, shared_min: int = 0) -> int:
    """The fewest stored passages a lookup hit needs under ``method``'s storage, given
    the channel's (``shared_min``, or PASSAGE_SHARED_MIN)."""
    return STORAGES[method].shared_min(shared_min or settings.PASSAGE_SHARED_MIN)


@dataclass(frozen=True)
class Entry:
    document_id: int
    site_id: int
    fetched_at: datetime
    passages: list[core.Passage]
    # Fewest shared passages a hit needs (0: PASSAGE_SHARED_MIN); a short text asks for
    # fewer (ingest.channels.passages.query_shared_min).
    shared_min: int = 0


@dataclass(frozen=True)
class PassageHit:
    document_id: int
    shared: int  # stored passages of the hit found among the query's (templates removed)
    stored: int = 0  # passages stored for the hit (0: not read)


def hit_shared_min(shared_min: int, stored: int) -> int:
    """The fewest shared passages a hit needs: what the lookup asks (``shared_min``, or
    PASSAGE_SHARED_MIN), or fewer when the hit's own stored set is short: what the
    short-copy rule's word reading asks of a pair whose shorter side has ``stored``
    passages (``shortcopy.shared_needed``: two for up to eight), so that a short text is
    found by a longer text arriving after it as it finds the longer one itself."""
    asked = shared_min or int(settings.PASSAGE_SHARED_MIN)
    if 0 < stored <= settings.PASSAGE_SHORT_MAX:
        needed = shortcopy.shared_needed(
            stored, int(settings.PASSAGE_SHARED_MIN), settings.PASSAGE_SHORT_CONTAINMENT_MIN
        )
        return min(asked, needed)
    return asked


def uses_gin() -> bool:
    return connection.vendor == "postgresql"


def entries_add(entries: Sequence[Entry], *, method: int = METHOD_ID) -> None:
    """Store the documents' passage sets (repeats are no-ops) and count their passages
    on the whole index (PostgreSQL) and on each site; passages reaching the stock-phrase
    or the template threshold are recorded."""
    if uses_gin():
        _add_pg(entries, search=False, method=method)
        return
    rows = _set_rows(entries, method)
    PassageSet.objects.bulk_create(rows, ignore_conflicts=True)
    by_site: dict[int, set[int]] = {}
    for row in rows:
        by_site.setdefault(row.site_id, set()).update(row.hashes)
    _templates_count_scan(by_site, method)


def entries_add_and_query(
    entries: Sequence[Entry], *, lookback_days: int = 0, method: int = METHOD_ID
) -> dict[int, list[PassageHit]]:
    """`entries_add`, then each entry's `query` (its own document excluded, around its
    fetch time): document id → hits. On PostgreSQL one statement probes every distinct
    passage of the entries once, and its answer serves the counts and the lookups."""
    if uses_gin():
        return _add_pg(entries, search=True, lookback_days=lookback_days, method=method)
    entries_add(entries, method=method)
    return {
        e.document_id: query(
            passages=e.passages,
            exclude_document=e.document_id,
            around=e.fetched_at,
            lookback_days=lookback_days,
            method=method,
            shared_min=e.shared_min,
        )
        for e in entries
    }


def _set_rows(entries: Sequence[Entry], method: int) -> list[PassageSet]:
    return [
        PassageSet(
            method=method,
            document_id=e.document_id,
            site_id=e.site_id,
            fetched_at=e.fetched_at,
            hashes=[core.to_signed(h) for h in stored_hashes(e.passages, method)],
        )
        for e in entries
    ]


# What bulk_create writes, with each row's hashes sent as the bytes the column holds
# (ingest.models.hashes_pack, ingest 0037) instead of a list psycopg adapts hash by hash.
_PG_SETS_INSERT = """
INSERT INTO ingest_passageset (method, document_id, site_id, fetched_at, hashes)
SELECT %s, v.d, v.s, v.f, v.h
FROM unnest(%s::bigint[], %s::int4[], %s::timestamptz[], %s::bytea[]) AS v(d, s, f, h)
ON CONFLICT DO NOTHING
"""


def _sets_insert(rows: Sequence[PassageSet], method: int) -> None:
    if not rows:
        return
    partitions.months_ensure("ingest_passageset", (r.fetched_at for r in rows))
    with connection.cursor() as cursor:
        cursor.execute(
            _PG_SETS_INSERT,
            [
                method,
                int_array(r.document_id for r in rows),
                int_array(r.site_id for r in rows),
                [r.fetched_at for r in rows],
                [hashes_pack(r.hashes) for r in rows],
            ],
        )


def stored_hashes(passages: Sequence[core.Passage], method: int = METHOD_ID) -> list[int]:
    """What the index keeps of a text's passages under ``method``'s storage."""
    return STORAGES[method].stored(passages)


def query_hashes(passages: Iterable[core.Passage]) -> list[int]:
    return core.smallest(core.hash_set(passages), core.QUERY_MAX)


# Every probe below asks the GIN index for the passage's bucket and keeps the rows that
# hold the passage itself: since ingest 0032 the index holds not the 64-bit hashes but
# their buckets (since ingest 0044 `passage_buckets_23`, each hash's top 23 bits as int4;
# 0032's `passage_buckets` took 24: many documents share one bucket, whose posting list is
# compressed, where each hash was its own index entry),
# and `passage_has(p.hashes, h)` is the exact test on the rows the bucket names (ingest
# 0037: the hashes are 8 bytes each in a bytea, compared at 8-byte offsets; their count
# is `length(p.hashes) / 8`). Both are in the probe's WHERE, so its LIMIT counts true
# holders only: a page holding another hash of the same bucket is neither a hit nor a
# page towards PASSAGE_COMMON_DF or PASSAGE_TEMPLATE_DF.
#
# Every probe below writes its method filter as `p.method + 0`: the rows' method is
# checked on the few rows the GIN probe finds, never through the primary key
# (method, document_id). Without statistics (a young table, before autovacuum's first
# ANALYZE) PostgreSQL otherwise ANDed each probe with a bitmap of every row of the
# method, so each probe read the whole table's key: 4 ms per lookup at 1,000 pages.

# For each passage: whether it is a template passage on any site or a known stock
# phrase (neither is probed: no lookup uses them, and a template needs no more
# counting), else the pages holding it, up to PASSAGE_COMMON_DF of them: their ids,
# sites and (when a lookback window needs them) fetch times. MATERIALIZED: the probes
# run after the filter. The flags are LATERAL lookups with a LIMIT, one index probe per
# passage: as EXISTS, PostgreSQL hashed every template passage of the method instead.
_PG_HOLDERS = """
WITH asked AS MATERIALIZED (
    SELECT h, t.found IS NOT NULL AS template, c.found IS NOT NULL AS common
    FROM unnest(%s::bigint[]) AS h
    LEFT JOIN LATERAL (
        SELECT 1 AS found FROM ingest_passagetemplate t WHERE t.method = %s AND t.hash = h LIMIT 1
    ) AS t ON true
    LEFT JOIN LATERAL (
        SELECT 1 AS found FROM ingest_passagecommon c
        WHERE c.method = %s AND c.hash = h AND c.df >= %s LIMIT 1
    ) AS c ON true
)
SELECT asked.h, asked.template, asked.common, held.docs, held.sites, held.times, held.sizes
FROM asked LEFT JOIN LATERAL (
    SELECT array_agg(p.document_id) AS docs, array_agg(p.site_id) AS sites, {times} AS times,
        array_agg(p.size) AS sizes
    FROM (
        SELECT p.document_id, p.site_id, p.fetched_at, length(p.hashes) / 8 AS size
        FROM ingest_passageset p
        WHERE NOT asked.template AND NOT asked.common
            AND passage_buckets_23(p.hashes) @> passage_buckets_23(ARRAY[asked.h])
            AND passage_has(p.hashes, asked.h) AND p.method + 0 = %s
        LIMIT %s
    ) AS p
) AS held ON true
"""


def holders_statement(
    signed: Collection[int], *, times: bool = False, method: int = METHOD_ID
) -> tuple[str, list[int | str]]:
    """The PostgreSQL probe for these signed hashes: SQL and parameters."""
    common = settings.PASSAGE_COMMON_DF
    sql = _PG_HOLDERS.format(times="array_agg(p.fetched_at)" if times else "NULL::timestamptz[]")
    return sql, [int_array(sorted(signed)), method, method, common, method, common]


@dataclass(frozen=True)
class _Held:
    docs: list[int]
    sites: list[int]
    times: list[datetime] | None
    sizes: list[int]  # each page's stored passages


def _add_pg(
    entries: Sequence[Entry], *, search: bool, lookback_days: int = 0, method: int
) -> dict[int, list[PassageHit]]:
    """Insert the sets, probe each distinct passage once (the stored ones, and with
    `search` those each lookup asks for), record what reached a threshold, and answer
    the lookups from the same probes."""
    rows = _set_rows(entries, method)
    _sets_insert(rows, method)
    stored = {row.document_id: set(row.hashes) for row in rows}
    asked = (
        {e.document_id: [core.to_signed(h) for h in query_hashes(e.passages)] for e in entries}
        if search
        else {}
    )
    probed = set().union(*stored.values(), *asked.values())
    if not probed:
        return {e.document_id: [] for e in entries} if search else {}
    # Every month is read here, window or not: the same probe counts each passage's pages
    # on the whole index (stock phrases, site templates); the window is applied to the
    # hits below. The lookup alone (`lookup`, the check API) reads only its window.
    sql, params = holders_statement(probed, times=search and bool(lookback_days), method=method)
    common_df = settings.PASSAGE_COMMON_DF
    held: dict[int, _Held] = {}
    unused: set[int] = set()  # template passages and stock phrases: never evidence
    stock: set[int] = set()  # stock phrases: a site's count needs a probe of its own
    reached_common: list[PassageCommon] = []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for h, template, common, docs, sites, times, sizes in cursor.fetchall():
            if template:
                unused.add(h)
            elif common or len(docs or ()) >= common_df:
                unused.add(h)
                stock.add(h)
                if not common:
                    reached_common.append(PassageCommon(method=method, hash=h, df=len(docs)))
            else:
                held[h] = _Held(docs or [], sites or [], times, sizes or [])
    if reached_common:
        PassageCommon.objects.bulk_create(
            reached_common,
            update_conflicts=True,
            unique_fields=["method", "hash"],
            update_fields=["df"],
        )
    unused |= _site_templates_record(entries, stored, held, stock, method)
    if not search:
        return {}
    return {
        e.document_id: _hits(e, asked[e.document_id], held, unused, lookback_days, method)
        for e in entries
    }


def _site_templates_record(
    entries: Sequence[Entry],
    stored: dict[int, set[int]],
    held: dict[int, _Held],
    stock: set[int],
    method: int,
) -> set[int]:
    """Count each site's stored passages on its pages (from the probes' sites, or a
    probe of their own for stock phrases) and record those reaching
    PASSAGE_TEMPLATE_DF. Returns the hashes recorded."""
    df_min = settings.PASSAGE_TEMPLATE_DF
    by_site: dict[int, set[int]] = {}
    for e in entries:
        by_site.setdefault(e.site_id, set()).update(stored[e.document_id])
    reached: list[PassageTemplate] = []
    for site_id, signed in by_site.items():
        counts = {h: held[h].sites.count(site_id) for h in signed if h in held}
        rest = sorted(signed & stock)
        if rest:
            counts.update(_site_counts_pg(site_id, rest, df_min, method))
        reached += [
            PassageTemplate(method=method, site_id=site_id, hash=h, df=n)
            for h, n in counts.items()
            if n >= df_min
        ]
    PassageTemplate.objects.bulk_create(reached, ignore_conflicts=True)
    return {t.hash for t in reached}


def _hits(
    entry: Entry,
    asked: list[int],
    held: dict[int, _Held],
    unused: set[int],
    lookback_days: int,
    method: int,
) -> list[PassageHit]:
    """An entry's lookup answered from the probes: what `lookup` answers."""
    span = timedelta(days=lookback_days)
    low, high = entry.fetched_at - span, entry.fetched_at + span
    shared: Counter[int] = Counter()
    stored: dict[int, int] = {}
    for h in asked:
        found = held.get(h)
        if found is None or h in unused:
            continue
        stored.update(zip(found.docs, found.sizes, strict=True))
        if lookback_days and found.times is not None:
            shared.update(
                d for d, t in zip(found.docs, found.times, strict=True) if low <= t <= high
            )
        else:
            shared.update(found.docs)
    shared.pop(entry.document_id, None)
    hits = [PassageHit(d, n, stored[d]) for d, n in shared.items()]
    return _kept(hits, lookup_shared_min(method, entry.shared_min))


def _kept(hits: Iterable[PassageHit], shared_min: int) -> list[PassageHit]:
    """The hits sharing enough passages (``hit_shared_min`` of the storage's minimum,
    ``lookup_shared_min``), most shared first."""
    kept = [h for h in hits if h.shared >= hit_shared_min(shared_min, h.stored)]
    return sorted(kept, key=lambda h: (-h.shared, h.document_id))


def _templates_count_scan(by_site: dict[int, set[int]], method: int) -> None:
    """Count each site's passages (``by_site``: site → signed hashes) on its pages, by a
    scan, and record those reaching PASSAGE_TEMPLATE_DF; like the probes, a passage
    already a template passage on any site is not counted again."""
    df_min = settings.PASSAGE_TEMPLATE_DF
    every = set().union(*by_site.values())
    unsigned = {core.to_unsigned(h) for h in every}
    known = {core.to_signed(h) for h in templates_among(unsigned, method=method)}
    reached: list[PassageTemplate] = []
    for site_id, signed in by_site.items():
        todo = sorted(signed - known)
        if not todo:
            continue
        reached += [
            PassageTemplate(method=method, site_id=site_id, hash=h, df=n)
            for h, n in _site_counts_scan(site_id, todo, method).items()
            if n >= df_min
        ]
    PassageTemplate.objects.bulk_create(reached, ignore_conflicts=True)


_PG_SITE_COUNTS = """
SELECT h, (SELECT count(*) FROM (
    SELECT 1 FROM ingest_passageset p
    WHERE passage_buckets_23(p.hashes) @> passage_buckets_23(ARRAY[h])
        AND passage_has(p.hashes, h) AND p.method + 0 = %s AND p.site_id = %s
    LIMIT %s) AS seen)
FROM unnest(%s::bigint[]) AS h
"""


def _site_counts_pg(site_id: int, signed: list[int], df_min: int, method: int) -> dict[int, int]:
    """Pages of the site holding each hash, counted up to df_min (a template passage
    is counted once, then skipped)."""
    with connection.cursor() as cursor:
        cursor.execute(_PG_SITE_COUNTS, [method, site_id, df_min, int_array(signed)])
        return {h: n for h, n in cursor.fetchall()}


def _site_counts_scan(site_id: int, signed: list[int], method: int) -> dict[int, int]:
    wanted = set(signed)
    counts: Counter[int] = Counter()
    for hashes in PassageSet.objects.filter(method=method, site_id=site_id).values_list(
        "hashes", flat=True
    ):
        counts.update(wanted.intersection(hashes))
    return dict(counts)


def templates_among(hashes: Collection[int], *, method: int = METHOD_ID) -> set[int]:
    """The unsigned hashes, among these, that are a template passage on any site: a
    line that is boilerplate on one site (a wire credit, a share prompt) is not
    evidence of a copy anywhere."""
    if not hashes:
        return set()
    signed = sorted({core.to_signed(h) for h in hashes})
    if uses_gin():  # one array parameter, not one placeholder per hash
        with connection.cursor() as cursor:
            cursor.execute(_PG_TEMPLATES_AMONG, [method, int_array(signed)])
            found = [h for (h,) in cursor.fetchall()]
    else:
        found = list(
            PassageTemplate.objects.filter(method=method, hash__in=signed).values_list(
                "hash", flat=True
            )
        )
    return {core.to_unsigned(h) for h in found}


def stock_among(hashes: Collection[int], *, method: int = METHOD_ID) -> set[int]:
    """The unsigned hashes, among these, that are stock phrases (PassageCommon: seen on
    PASSAGE_COMMON_DF pages of any site, such as a wire credit or a follow-us line)."""
    if not hashes:
        return set()
    signed = sorted({core.to_signed(h) for h in hashes})
    if uses_gin():  # one array parameter, not one placeholder per hash
        with connection.cursor() as cursor:
            cursor.execute(_PG_STOCK_AMONG, [method, settings.PASSAGE_COMMON_DF, int_array(signed)])
            found = [h for (h,) in cursor.fetchall()]
    else:
        found = list(
            PassageCommon.objects.filter(
                method=method, hash__in=signed, df__gte=settings.PASSAGE_COMMON_DF
            ).values_list("hash", flat=True)
        )
    return {core.to_unsigned(h) for h in found}


_PG_STOCK_AMONG = """
SELECT hash FROM ingest_passagecommon WHERE method = %s AND df >= %s AND hash = ANY(%s::bigint[])
"""


def never_evidence(hashes: Collection[int], *, method: int = METHOD_ID) -> set[int]:
    """The template passages and stock phrases among these unsigned hashes: what no
    overlap counts."""
    template = templates_among(hashes, method=method)
    return template | stock_among(set(hashes) - template, method=method)


_PG_TEMPLATES_AMONG = """
SELECT DISTINCT hash FROM ingest_passagetemplate WHERE method = %s AND hash = ANY(%s::bigint[])
"""


def query(
    *,
    passages: Sequence[core.Passage],
    exclude_document: int | None = None,
    around: datetime | None = None,
    lookback_days: int = 0,
    ignore: Collection[int] = (),
    method: int = METHOD_ID,
    shared_min: int = 0,
) -> list[PassageHit]:
    """Documents sharing at least PASSAGE_SHARED_MIN stored passages with these
    (``shared_min`` when given; fewer where the method's storage asks for fewer,
    `lookup_shared_min`, and with a document of as few stored passages,
    ``hit_shared_min``; template passages and `ignore` removed), most shared first."""
    return lookup(
        hashes=[h for h in query_hashes(passages) if h not in ignore],
        exclude_document=exclude_document,
        around=around,
        lookback_days=lookback_days,
        method=method,
        shared_min=shared_min,
    )


def lookup(
    *,
    hashes: Collection[int],
    exclude_document: int | None = None,
    around: datetime | None = None,
    lookback_days: int = 0,
    method: int = METHOD_ID,
    shared_min: int = 0,
) -> list[PassageHit]:
    """`query` for unsigned passage hashes given as they are."""
    if not hashes:
        return []
    window = None
    if lookback_days and around is not None:
        span = timedelta(days=lookback_days)
        window = (around - span, around + span)
    if uses_gin():  # the template filter is part of the statement
        hits = _query_pg(sorted(set(hashes)), exclude_document, window, method)
    else:
        hashes = sorted(set(hashes) - templates_among(hashes, method=method))
        hits = _query_scan(hashes, exclude_document, window, method)
    return _kept(hits, lookup_shared_min(method, shared_min))


# Template passages and known stock phrases (PassageCommon: on PASSAGE_COMMON_DF pages)
# are dropped first, by their btree indexes: theirs are the long posting lists. One GIN
# probe per remaining query passage, each stopping at PASSAGE_COMMON_DF documents (a
# passage that reached it since it was last counted is dropped too); the rest are
# counted per document. The work per query is bounded whatever the corpus holds.
# MATERIALIZED keeps the steps apart: inlined, PostgreSQL ran each probe before the
# template filter and twice (once for `cardinality`, once for `unnest`).
_PG_QUERY = """
WITH wanted AS MATERIALIZED (
    SELECT h FROM unnest(%s::bigint[]) AS h
    WHERE NOT EXISTS (
        SELECT 1 FROM ingest_passagetemplate t WHERE t.method = %s AND t.hash = h)
    AND NOT EXISTS (
        SELECT 1 FROM ingest_passagecommon c WHERE c.method = %s AND c.hash = h AND c.df >= %s)
), per AS MATERIALIZED (
    SELECT held.docs, held.sizes FROM wanted, LATERAL (
        SELECT array_agg(p.document_id) AS docs, array_agg(p.size) AS sizes FROM (
            SELECT p.document_id, length(p.hashes) / 8 AS size FROM ingest_passageset p
            WHERE passage_buckets_23(p.hashes) @> passage_buckets_23(ARRAY[wanted.h])
                AND passage_has(p.hashes, wanted.h) AND p.method + 0 = %s {window}
            LIMIT %s) AS p
    ) AS held
)
SELECT u.d, count(*), min(u.size) FROM per, unnest(per.docs, per.sizes) AS u(d, size)
WHERE cardinality(per.docs) < %s
GROUP BY u.d
"""
_PG_WINDOW = "AND p.fetched_at BETWEEN %s AND %s"


def pg_statement(
    hashes: Collection[int],
    window: tuple[datetime, datetime] | None = None,
    *,
    method: int = METHOD_ID,
) -> tuple[str, list[object]]:
    """The PostgreSQL lookup for these unsigned hashes: SQL and parameters."""
    signed = [core.to_signed(h) for h in sorted(set(hashes))]
    common = settings.PASSAGE_COMMON_DF
    sql = _PG_QUERY.format(window=_PG_WINDOW if window else "")
    params: list[object] = [
        int_array(signed),
        method,
        method,
        common,
        method,
        *(window or ()),
        common,
        common,
    ]
    return sql, params


def _query_pg(
    hashes: list[int],
    exclude: int | None,
    window: tuple[datetime, datetime] | None,
    method: int,
) -> list[PassageHit]:
    sql, params = pg_statement(hashes, window, method=method)
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, prepare=True)
        rows = cursor.fetchall()
    return [PassageHit(d, n, size) for d, n, size in rows if d != exclude]


def _query_scan(
    hashes: list[int],
    exclude: int | None,
    window: tuple[datetime, datetime] | None,
    method: int,
) -> list[PassageHit]:
    wanted = {core.to_signed(h) for h in hashes}
    qs = PassageSet.objects.filter(method=method)
    if window is not None:
        qs = qs.filter(fetched_at__range=window)
    shared: dict[int, set[int]] = {}
    sizes: dict[int, int] = {}
    df: Counter[int] = Counter()
    for d, stored in qs.values_list("document_id", "hashes"):
        common = wanted.intersection(stored)
        if common:
            shared[d] = common
            sizes[d] = len(stored)
            df.update(common)
    stock = {h for h, n in df.items() if n >= settings.PASSAGE_COMMON_DF}
    out = []
    for d, common in shared.items():
        n = len(common - stock)
        if n and d != exclude:
            out.append(PassageHit(d, n, sizes[d]))
    return out


def brute_force(
    *,
    passages: Sequence[core.Passage] = (),
    hashes: Collection[int] = (),
    method: int = METHOD_ID,
) -> list[PassageHit]:
    """The scan, on any database: what the recall check compares the index against."""
    wanted = set(hashes) | set(query_hashes(passages))
    hashes = sorted(wanted - templates_among(wanted, method=method))
    hits = _query_scan(hashes, None, None, method) if hashes else []
    return _kept(hits, lookup_shared_min(method))


def bytes_per_document() -> float | None:
    """PostgreSQL: table, TOAST and index bytes of the passage index per stored set."""
    if not uses_gin():
        return None
    with connection.cursor() as cursor:
        # Partitioned by month (ingest 0026): the parent holds nothing, its partitions do.
        cursor.execute(
            "SELECT (SELECT coalesce(sum(pg_total_relation_size(relid)), 0)"
            " FROM pg_partition_tree('ingest_passageset')), count(*) FROM ingest_passageset"
        )
        size, rows = cursor.fetchone()
    return size / rows if rows else None
