"""The passage index's PostgreSQL statements: stock phrases counted at write time and
never probed, template passages never probed, one probe per remaining passage."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.test import override_settings
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from ingest import passages
from ingest.core import passages as core
from ingest.core.partitions import Month, partition_name
from ingest.models import Document, PassageCommon, PassageSet, PassageTemplate, Site, int_array
from tests.factories import passage_document

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

WHEN = datetime(2026, 5, 1, tzinfo=UTC)
# The partition holding WHEN (ingest 0026; the tests run under the default period).
PERIOD = Month.of(WHEN).period_start(django_settings.PARTITION_MONTHS)
STOCK = 0xF00D_0000_0000_0001  # on every page: a stock phrase
SHARED = [0xC0FE_0000_0000_0000 + i for i in range(4)]  # the copied run


def _add(n: int, host: str, hashes: list[int]) -> Document:
    return passage_document(n, host, hashes, WHEN)


def _own(n: int) -> list[int]:
    return [0xAB00_0000_0000_0000 + n * 100 + j for j in range(5)]


def _probes(hashes: list[int]) -> int:
    """Reads of the passage sets the lookup statement makes for these hashes (EXPLAIN
    ANALYZE: GIN probes on a corpus, scans on a table this small)."""
    sql, params = passages.pg_statement(hashes)
    args: Sequence[Any] = params
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, args)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan

    def walk(node: dict) -> int:
        # The passage sets are partitioned by month (ingest 0026): the probes of the
        # month holding these pages (every attached month is probed alike).
        read = node.get("Relation Name") == partition_name("ingest_passageset", PERIOD)
        own = node["Actual Loops"] if read else 0
        return own + sum(walk(child) for child in node.get("Plans", []))

    return walk(plan[0]["Plan"])


def test_a_stock_phrase_is_recorded_once_common_and_never_probed(settings) -> None:
    settings.PASSAGE_COMMON_DF = 3
    first = _add(1, "a.example.com", [STOCK, *SHARED, *_own(1)])
    _add(2, "b.example.com", [STOCK, *_own(2)])
    assert not PassageCommon.objects.exists()  # on 2 pages: not yet
    copy = _add(3, "c.example.com", [STOCK, *SHARED[:3], *_own(3)])
    common = PassageCommon.objects.get()
    assert (common.hash, common.df) == (core.to_signed(STOCK), 3)

    query = [STOCK, *SHARED]
    hits = passages.lookup(hashes=query, exclude_document=first.pk)
    assert [(h.document_id, h.shared) for h in hits] == [(copy.pk, 3)]
    brute = passages.brute_force(hashes=query)
    assert {(h.document_id, h.shared) for h in brute} == {(first.pk, 4), (copy.pk, 3)}
    assert _probes(query) == len(SHARED)  # the stock phrase's posting list is not read


def test_template_passages_are_not_probed(settings) -> None:
    settings.PASSAGE_TEMPLATE_DF = 2
    menu = 0xBEEF_0000_0000_0001
    a = _add(1, "t.example.com", [menu, *_own(1)])
    _add(2, "t.example.com", [menu, *_own(2)])
    assert PassageTemplate.objects.filter(hash=core.to_signed(menu)).exists()
    query = [menu, *_own(1)]
    assert _probes(query) == len(_own(1))  # one probe each, the menu none
    hits = passages.lookup(hashes=query)
    assert [(h.document_id, h.shared) for h in hits] == [(a.pk, 5)]


def test_site_counts_agree_with_the_whole_index_count(settings) -> None:
    """Per-site counts come from the sites found by the whole-index count when it saw
    every page, and from a probe of their own once the passage is a stock phrase."""
    settings.PASSAGE_TEMPLATE_DF = 3
    settings.PASSAGE_COMMON_DF = 3
    byline = 0xD00D_0000_0000_0001
    _add(1, "s.example.com", [byline, *_own(1)])
    _add(2, "u.example.com", [byline, *_own(2)])
    assert not PassageTemplate.objects.exists()
    _add(3, "u.example.com", [byline, *_own(3)])  # 3 pages: common; 2 on this site
    assert PassageCommon.objects.filter(hash=core.to_signed(byline)).exists()
    assert not PassageTemplate.objects.exists()
    _add(4, "u.example.com", [byline, *_own(4)])  # the 3rd page of u: a template there
    template = PassageTemplate.objects.get(hash=core.to_signed(byline))
    assert (template.site.host, template.df) == ("u.example.com", 3)


def test_a_template_passage_is_not_counted_again_on_other_sites(settings) -> None:
    """Every lookup and every pair's facts leave out a passage that is a template on
    any site: once recorded, it is not probed to count it elsewhere."""
    settings.PASSAGE_TEMPLATE_DF = 2
    credit = 0xD00D_0000_0000_0002
    _add(1, "s.example.com", [credit, *_own(1)])
    _add(2, "s.example.com", [credit, *_own(2)])
    _add(3, "u.example.com", [credit, *_own(3)])
    _add(4, "u.example.com", [credit, *_own(4)])
    hosts = PassageTemplate.objects.filter(hash=core.to_signed(credit)).values_list(
        "site__host", flat=True
    )
    assert list(hosts) == ["s.example.com"]
    sql, params = passages.holders_statement([core.to_signed(credit), core.to_signed(_own(5)[0])])
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = {h: (template, docs) for h, template, _, docs, _, _, _ in cursor.fetchall()}
    assert rows[core.to_signed(credit)] == (True, None)  # no probe
    assert rows[core.to_signed(_own(5)[0])] == (False, None)  # probed, on no page


def _nodes(sql: str, params: Sequence[Any]) -> list[dict]:
    """Every node of the statement's plan."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan

    def walk(node: dict) -> list[dict]:
        return [node, *(n for child in node.get("Plans", []) for n in walk(child))]

    return walk(plan[0]["Plan"])


def _indexes_read(sql: str, params: Sequence[Any]) -> set[str]:
    return {node["Index Name"] for node in _nodes(sql, params) if "Index Name" in node}


def _reads_the_sets_primary_key(sql: str, params: Sequence[Any]) -> bool:
    """Whether the plan reads the passage sets' primary key (on PostgreSQL the sets are
    partitioned by month: each partition has its own, `ingest_passageset_<part>_pkey`)."""
    return any(
        name.startswith("ingest_passageset") and name.endswith("_pkey")
        for name in _indexes_read(sql, params)
    )


def test_probes_never_read_the_primary_key_of_a_table_without_statistics() -> None:
    """A young table has no statistics yet: each GIN probe must still read only its own
    posting list, not AND it with every row of the method through the primary key."""
    site, _ = Site.objects.get_or_create(host="young.example.com")
    docs = [
        Document(
            site=site,
            url=f"https://young.example.com/{n}",
            fetched_at=WHEN,
            raw_sha256=f"{n:064x}",
            raw_size=1,
        )
        for n in range(400)
    ]
    Document.objects.bulk_create(docs)
    passages.entries_add(
        [
            passages.Entry(d.pk, site.pk, WHEN, [core.Passage(h, j) for j, h in enumerate(_own(n))])
            for n, d in enumerate(docs)
        ]
    )
    query = _own(7)
    sql, params = passages.pg_statement(query)
    assert not _reads_the_sets_primary_key(sql, params)
    signed = [core.to_signed(h) for h in query]
    PassageTemplate.objects.bulk_create(
        [PassageTemplate(method=1, site=site, hash=h, df=3) for h in range(500)]
    )
    for times in (False, True):
        sql, holders = passages.holders_statement(signed, times=times)
        assert not _reads_the_sets_primary_key(sql, holders)
        # Each passage's flags: one index probe by hash, never every row of the method.
        for node in _nodes(sql, holders):
            if node.get("Relation Name") in ("ingest_passagetemplate", "ingest_passagecommon"):
                assert "hash" in node.get("Index Cond", ""), node
    counts = [passages.METHOD_ID, site.pk, 3, signed]
    assert not _reads_the_sets_primary_key(passages._PG_SITE_COUNTS, counts)


@examples(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=300))
def test_an_array_literal_reads_back_as_the_same_bigints(values: list[int]) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::bigint[]", [int_array(values)])
        assert cursor.fetchone()[0] == values


def test_passage_sets_written_by_the_statement_read_back_as_given() -> None:
    hashes = [0xFFFF_FFFF_FFFF_FFFF, 1, 0x8000_0000_0000_0000, 42]
    doc = _add(1, "sets.example.com", hashes)
    again = [core.Passage(h, 0) for h in (7, 8)]  # a repeat is a no-op
    passages.entries_add([passages.Entry(doc.pk, doc.site_id, WHEN, again)])
    stored = PassageSet.objects.get(document=doc)
    assert stored.hashes == [core.to_signed(h) for h in sorted(hashes)]
    assert (stored.site_id, stored.fetched_at, stored.method) == (
        doc.site_id,
        WHEN,
        passages.METHOD_ID,
    )


def test_the_per_document_lookups_are_prepared_once_per_connection() -> None:
    """The band index and passage lookups run once per document searched: they are
    server-side prepared statements (one generic plan), not planned on every call."""
    from ingest import index

    doc = _add(1, "prep.example.com", [*SHARED, *_own(1)])
    for _ in range(3):
        index.query(method_id=1, value=12345, k=3)
        passages.lookup(hashes=[*SHARED, *_own(2)], exclude_document=doc.pk)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT statement FROM pg_prepared_statements WHERE NOT from_sql AND"
            " (statement LIKE '%%ingest_indexentry%%' OR statement LIKE '%%ingest_passageset%%')"
        )
        statements = [s for (s,) in cursor.fetchall()]
    assert any("ingest_indexentry" in s for s in statements)
    assert any("ingest_passageset" in s for s in statements)


class _Rollback(Exception):
    pass


def _entry(site: Site, hashes: list[int], day: int) -> passages.Entry:
    n = Document.objects.count() + 1
    doc = Document.objects.create(
        site=site,
        url=f"https://{site.host}/{n}",
        fetched_at=WHEN + timedelta(days=day),
        raw_sha256=f"{n:064x}",
        raw_size=1,
    )
    ps = [core.Passage(h, j) for j, h in enumerate(hashes)]
    return passages.Entry(doc.pk, site.pk, doc.fetched_at, ps)


def _search_both_ways(
    earlier: list[tuple[int, list[int]]], batch: list[tuple[int, list[int], int]], lookback: int
) -> list[tuple[object, object, object]]:
    """The batch searched one statement for all (`entries_add_and_query`) and one lookup
    per document after `entries_add`, each on the same corpus: (hits, templates,
    stock phrases) of each way."""
    out: list[tuple[object, object, object]] = []
    for way in ("batch", "one by one"):
        try:
            with transaction.atomic():
                sites = [Site.objects.create(host=f"h{i}.example.com") for i in range(3)]
                for n, (site, hashes) in enumerate(earlier):
                    passages.entries_add([_entry(sites[site], hashes, day=n % 5)])
                entries = [_entry(sites[site], hashes, day) for site, hashes, day in batch]
                first = entries[0].document_id
                if way == "batch":
                    found = passages.entries_add_and_query(entries, lookback_days=lookback)
                else:
                    passages.entries_add(entries)
                    found = {
                        e.document_id: passages.query(
                            passages=e.passages,
                            exclude_document=e.document_id,
                            around=e.fetched_at,
                            lookback_days=lookback,
                        )
                        for e in entries
                    }
                hits = sorted(
                    (d - first, h.document_id - first, h.shared)
                    for d, found_hits in found.items()
                    for h in found_hits
                )
                templates = sorted(
                    (sites.index(Site.objects.get(pk=s)), h, df)
                    for s, h, df in PassageTemplate.objects.values_list("site_id", "hash", "df")
                )
                stock = sorted(PassageCommon.objects.values_list("hash", "df"))
                out.append((hits, templates, stock))
                raise _Rollback
        except _Rollback:
            pass
    return out


_POOL = [0x5EED_0000_0000_0000 + i * 7919 for i in range(14)]
_hashes = st.lists(st.sampled_from(_POOL), min_size=1, max_size=10, unique=True)


@examples(max_examples=40, deadline=None)
@given(
    earlier=st.lists(st.tuples(st.integers(0, 2), _hashes), max_size=10),
    batch=st.lists(
        st.tuples(st.integers(0, 2), _hashes, st.integers(0, 6)), min_size=1, max_size=4
    ),
    lookback=st.sampled_from([0, 2]),
)
def test_the_batch_search_answers_like_one_lookup_per_document(
    earlier: list[tuple[int, list[int]]], batch: list[tuple[int, list[int], int]], lookback: int
) -> None:
    with override_settings(PASSAGE_TEMPLATE_DF=3, PASSAGE_COMMON_DF=5, PASSAGE_SHARED_MIN=2):
        batched, one_by_one = _search_both_ways(earlier, batch, lookback)
    assert batched == one_by_one
