"""The passage sets' hashes as bytes (ingest 0037): a bytea of 8 bytes a hash, the same
buckets as the bigint[] had, an exact membership test at 8-byte offsets, and lookups
that still probe the bucket GIN."""

import json
import struct
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from ingest import partitions, passages
from ingest.core import passages as core
from ingest.core.partitions import Month, partition_name
from ingest.models import PassageSet, hashes_pack, hashes_unpack
from tests.factories import passage_document

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

WHEN = datetime(2026, 5, 1, tzinfo=UTC)
MIN, MAX = -(2**63), 2**63 - 1
EDGES = [0, -1, MIN, MAX, 2**40, -(2**40), 2**40 - 1, -(2**40) - 1, 1, MIN + 1, MAX - 1]
EDGES += [2**41, -(2**41), 2**41 - 1, -(2**41) - 1]
_signed = st.integers(min_value=MIN, max_value=MAX)


def _one(sql: str, params: Sequence[Any]) -> object:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    assert row is not None
    return row[0]


def test_the_hashes_column_is_bytea_on_every_partition() -> None:
    passage_document(1, "b.example.com", [1, 2], WHEN)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.table_name, c.data_type FROM information_schema.columns c"
            " JOIN pg_partition_tree('ingest_passageset') t ON t.relid::text = c.table_name"
            " WHERE c.column_name = 'hashes' AND c.table_schema = current_schema()"
        )
        types = dict(cursor.fetchall())
    assert "ingest_passageset" in types and len(types) > 1, types
    assert set(types.values()) == {"bytea"}, types


def test_the_model_round_trips_edge_values_in_their_order() -> None:
    doc = passage_document(1, "edges.example.com", [1], WHEN)
    # A second set of the document, under another method (the rows are append-only).
    method = passages.WHOLE_METHOD_ID
    PassageSet.objects.create(
        document=doc, method=method, site_id=doc.site_id, fetched_at=WHEN, hashes=EDGES
    )
    assert PassageSet.objects.get(document=doc, method=method).hashes == EDGES
    assert list(
        PassageSet.objects.filter(document=doc, method=method).values_list("hashes", flat=True)
    ) == [EDGES]
    where = "WHERE document_id = %s AND method = %s"
    stored = _one(f"SELECT hashes FROM ingest_passageset {where}", [doc.pk, method])
    assert isinstance(stored, bytes | memoryview)
    # Exactly int8send of each value, one after another: 8 bytes a hash, no header.
    assert bytes(stored) == b"".join(struct.pack(">q", v) for v in EDGES)
    assert bytes(stored) == _one("SELECT passage_bytes(%s::bigint[])", [EDGES])
    key = [doc.pk, method]
    assert _one(f"SELECT passage_hashes(hashes) FROM ingest_passageset {where}", key) == EDGES
    assert _one(f"SELECT length(hashes) / 8 FROM ingest_passageset {where}", key) == len(EDGES)


def test_the_statement_written_sets_read_back_as_given() -> None:
    unsigned = [core.to_unsigned(v) for v in EDGES]
    doc = passage_document(1, "w.example.com", unsigned, WHEN)
    assert PassageSet.objects.get(document=doc).hashes == sorted(EDGES, key=core.to_unsigned)


@examples(max_examples=60, deadline=None)
@given(st.lists(_signed, max_size=40))
def test_packing_is_int8send_and_unpacks_to_the_same_values(values: list[int]) -> None:
    packed = hashes_pack(values)
    assert hashes_unpack(packed) == values
    assert _one("SELECT passage_bytes(%s::bigint[])", [values]) == packed
    assert _one("SELECT passage_hashes(%s::bytea)", [packed]) == values


def test_a_partial_hash_is_refused() -> None:
    with pytest.raises(ValueError):
        hashes_unpack(b"\x00" * 12)


# Ingest 0032's 24-bit buckets (which 0044's GIN no longer uses, still defined) and
# 0044's 23-bit ones: the bytes' overload gives the array's.
FUNCTIONS = [("passage_buckets", 40), ("passage_buckets_23", 41)]


@pytest.mark.parametrize(("function", "shift"), FUNCTIONS)
def test_the_bytes_buckets_are_the_arrays_on_edge_values(function: str, shift: int) -> None:
    buckets = _one(f"SELECT {function}(%s::bytea)", [hashes_pack(EDGES)])
    assert buckets == _one(f"SELECT {function}(%s::bigint[])", [EDGES])
    assert buckets == [v >> shift for v in EDGES]
    top = 63 - shift
    assert buckets[:4] == [0, -1, -(2**top), 2**top - 1]


@pytest.mark.parametrize(("function", "shift"), FUNCTIONS)
@examples(max_examples=40, deadline=None)
@given(st.lists(_signed, min_size=1, max_size=40))
def test_the_bytes_buckets_are_the_arrays(function: str, shift: int, values: list[int]) -> None:
    assert _one(
        f"SELECT {function}(%s::bytea) = {function}(%s::bigint[])",
        [hashes_pack(values), values],
    )
    assert _one(f"SELECT {function}(%s::bytea)", [hashes_pack(values)]) == [
        v >> shift for v in values
    ]


def _has(packed: bytes, value: int) -> bool:
    return bool(_one("SELECT passage_has(%s::bytea, (%s)::bigint)", [packed, value]))


def test_membership_is_exact_and_never_across_two_hashes() -> None:
    packed = hashes_pack(EDGES)
    assert all(_has(packed, v) for v in EDGES)
    # 8 bytes straddling two stored hashes (the last 4 of one, the first 4 of the
    # next): `position` finds them, the test does not.
    straddling = [struct.unpack(">q", packed[8 * i + 4 : 8 * i + 12])[0] for i in range(10)]
    assert all(
        _one("SELECT position(int8send((%s)::bigint) IN %s::bytea)", [v, packed])
        for v in straddling
    )
    assert not any(_has(packed, v) for v in set(straddling) - set(EDGES))
    # A straddling match before an aligned one is no obstacle.
    value = 0x0102_0304_0506_0708
    tricky = hashes_pack([0x7777_7777_0102_0304, 0x0506_0708_7777_7777, value])
    assert _has(tricky, value)
    assert not _has(b"", 0)


@examples(max_examples=60, deadline=None)
@given(st.lists(_signed, max_size=20, unique=True), _signed)
def test_membership_is_the_arrays(values: list[int], probe: int) -> None:
    packed = hashes_pack(values)
    for v in [*values, probe]:
        assert _has(packed, v) == _one("SELECT %s::bigint[] @> ARRAY[(%s)::bigint]", [values, v])


def _index_scans(sql: str, params: Sequence[Any]) -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan

    def walk(node: dict) -> list[tuple[str, str]]:
        own = [(node["Node Type"], node["Index Name"])] if "Index Name" in node else []
        return own + [n for child in node.get("Plans", []) for n in walk(child)]

    return walk(plan[0]["Plan"])


def test_the_lookup_probes_the_bucket_gin_and_answers_as_before() -> None:
    shared = [0xC0FE_0000_0000_0000 + i for i in range(4)]
    a = passage_document(1, "a.example.com", [*shared, 0xAB00_0000_0000_0001], WHEN)
    b = passage_document(2, "b.example.com", [*shared, 0xAB00_0000_0000_0002], WHEN)
    passage_document(3, "c.example.com", [0xAB00_0000_0000_0003, 0xAB00_0000_0000_0004], WHEN)
    hits = passages.lookup(hashes=[*shared, 0xAB00_0000_0000_0009], exclude_document=a.pk)
    assert [(h.document_id, h.shared, h.stored) for h in hits] == [(b.pk, 4, 5)]
    with connection.cursor() as cursor:
        # The bucket GIN's index on the partition holding WHEN.
        cursor.execute(
            "SELECT i.relname FROM pg_partition_tree('ingest_passageset_buckets_gin') t"
            " JOIN pg_class i ON i.oid = t.relid JOIN pg_index x ON x.indexrelid = i.oid"
            " WHERE x.indrelid = %s::regclass",
            [partition_name("ingest_passageset", _period())],
        )
        (gin,) = cursor.fetchone()
    for sql, params in (
        passages.pg_statement(shared),
        passages.holders_statement([core.to_signed(h) for h in shared]),
    ):
        scans = _index_scans(sql, list(params))
        assert ("Bitmap Index Scan", gin) in scans, scans


def _period() -> Month:
    return Month.of(WHEN).period_start(django_settings.PARTITION_MONTHS)


def test_a_partition_made_later_has_the_bytes_and_the_bucket_gin() -> None:
    later = datetime(2031, 7, 1, tzinfo=UTC)
    partitions.months_ensure("ingest_passageset", [later])
    part = partition_name(
        "ingest_passageset", Month.of(later).period_start(django_settings.PARTITION_MONTHS)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT data_type FROM information_schema.columns"
            " WHERE table_name = %s AND column_name = 'hashes'",
            [part],
        )
        assert cursor.fetchone() == ("bytea",)
        cursor.execute(
            "SELECT pg_get_indexdef(x.indexrelid) FROM pg_index x"
            " JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am a ON a.oid = i.relam"
            " WHERE x.indrelid = %s::regclass AND a.amname = 'gin'",
            [part],
        )
        (definition,) = cursor.fetchone()
    assert "passage_buckets_23(hashes)" in definition and "fastupdate=off" in definition
    doc = passage_document(9, "later.example.com", [5, 6], later)
    assert PassageSet.objects.get(document=doc).hashes == [5, 6]
    assert [h.document_id for h in passages.lookup(hashes=[5, 6])] == [doc.pk]
