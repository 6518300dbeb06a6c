"""The passage index's buckets (ingest 0032): the GIN index holds each hash's top 24
bits, every probe rechecks the rows of a bucket for the passage itself, so a page
holding another hash of the same bucket is never a shared passage, never a page towards
the stock-phrase or template counts, and never fills a probe's LIMIT."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from ingest import passages
from ingest.core import passages as core
from ingest.models import Document, PassageCommon, PassageTemplate, Site
from tests.factories import passage_document

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

WHEN = datetime(2026, 5, 1, tzinfo=UTC)
# One bucket: these differ in their low bits only.
BUCKET = 0xC0FE_EE00_0000_0000
PASSAGE = BUCKET + 1
COLLIDING = [BUCKET + 2, BUCKET + 0xFF_FFFF_FFFF, BUCKET + 0x12_3456_789A]


def _buckets(hashes: list[int]) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT passage_buckets_23(%s::bigint[])", [[core.to_signed(h) for h in hashes]]
        )
        return list(cursor.fetchone()[0])


def _add(n: int, host: str, hashes: list[int]) -> Document:
    return passage_document(n, host, hashes, WHEN)


def _own(n: int) -> list[int]:
    # Each page's own passages, in buckets of their own.
    return [(0x1000 + n * 16 + j) << 41 for j in range(4)]


def test_the_crafted_hashes_share_one_bucket_and_no_other_does() -> None:
    assert len(set(_buckets([PASSAGE, *COLLIDING]))) == 1
    assert len(set(_buckets([PASSAGE, *_own(1), *_own(2)]))) == 9


@examples(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), min_size=1, max_size=50))
def test_a_bucket_is_the_top_23_bits_of_the_hash(hashes: list[int]) -> None:
    assert _buckets(hashes) == [core.to_signed(h) >> 41 for h in hashes]


def test_a_page_holding_another_hash_of_the_bucket_is_not_a_hit() -> None:
    others = [_add(n, f"c{n}.example.com", [c, *_own(n)]) for n, c in enumerate(COLLIDING)]
    holder = _add(9, "h.example.com", [PASSAGE, *_own(9)])
    # One stored passage shared is a hit under the budget's storage (lookup_min 1): a
    # colliding page taken for a holder would be one.
    hits = passages.lookup(hashes=[PASSAGE, *_own(20)])
    assert [(h.document_id, h.shared) for h in hits] == [(holder.pk, 1)]
    assert {h.document_id for h in passages.brute_force(hashes=[PASSAGE])} == {holder.pk}
    assert not {d.pk for d in others} & {h.document_id for h in hits}


def test_the_probe_limit_counts_true_holders_only(settings) -> None:
    """A bucket on PASSAGE_COMMON_DF pages, one of them holding the passage: the
    colliding pages (first in the table) must neither fill the probe's LIMIT, hiding
    the holder, nor make the passage a stock phrase."""
    settings.PASSAGE_COMMON_DF = 3
    for n, c in enumerate(COLLIDING):
        _add(n, f"c{n}.example.com", [c, *_own(n)])
    holder = _add(9, "h.example.com", [PASSAGE, *_own(9)])
    assert not PassageCommon.objects.exists()  # each hash on one page, the bucket on 4
    hits = passages.lookup(hashes=[PASSAGE])
    assert [(h.document_id, h.shared) for h in hits] == [(holder.pk, 1)]
    found = passages.entries_add_and_query([_entry(10, "n.example.com", [PASSAGE, *_own(10)])])
    assert [(h.document_id, h.shared) for hs in found.values() for h in hs] == [(holder.pk, 1)]
    assert not PassageCommon.objects.exists()  # the passage is on 2 pages, not 3


def _entry(n: int, host: str, hashes: list[int]) -> passages.Entry:
    site, _ = Site.objects.get_or_create(host=host)
    doc = Document.objects.create(
        site=site, url=f"https://{host}/{n}", fetched_at=WHEN, raw_sha256=f"{n:064x}", raw_size=1
    )
    return passages.Entry(doc.pk, site.pk, WHEN, [core.Passage(h, j) for j, h in enumerate(hashes)])


def test_a_colliding_page_of_the_site_is_not_counted_towards_a_template(settings) -> None:
    settings.PASSAGE_TEMPLATE_DF = 2
    site_pages = [_add(n, "t.example.com", [c, *_own(n)]) for n, c in enumerate(COLLIDING[:2])]
    _add(9, "t.example.com", [PASSAGE, *_own(9)])
    assert not PassageTemplate.objects.exists()
    # The per-site count of stock phrases (a probe of its own) rechecks as well.
    counts = passages._site_counts_pg(
        site_pages[0].site_id, [core.to_signed(PASSAGE)], 5, passages.METHOD_ID
    )
    assert counts == {core.to_signed(PASSAGE): 1}


def _indexes_read(sql: str, params: Sequence[Any]) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan

    def walk(node: dict) -> list[str]:
        own = [node["Index Name"]] if "Index Name" in node else []
        return own + [n for child in node.get("Plans", []) for n in walk(child)]

    return set(walk(plan[0]["Plan"]))


def test_every_probe_can_read_the_bucket_index_and_the_hashes_have_none() -> None:
    """The statements' bucket test is the index's expression (else each probe would
    scan the table); the plain GIN of the hashes is gone."""
    _add(1, "p.example.com", [PASSAGE, *_own(1)])
    signed = [core.to_signed(PASSAGE)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_partition_tree('ingest_passageset') t"
            " JOIN pg_index x ON x.indrelid = t.relid JOIN pg_class i ON i.oid = x.indexrelid"
            " JOIN pg_am a ON a.oid = i.relam WHERE a.amname = 'gin'"
        )
        gin = dict(cursor.fetchall())
    assert gin and all("passage_buckets_23(hashes)" in d for d in gin.values()), gin
    statements: list[tuple[str, Sequence[Any]]] = [
        passages.pg_statement([PASSAGE]),
        passages.holders_statement(signed),
        (passages._PG_SITE_COUNTS, [passages.METHOD_ID, 1, 3, signed]),
    ]
    for sql, params in statements:
        assert _indexes_read(sql, params) & set(gin), sql
