"""Behaviour that must hold on PostgreSQL itself."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.simhash import MASK64, to_signed64
from ingest.models import Document, Extraction, Fingerprint, FingerprintMethod, Site

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _document(site: Site, path: str = "", *, n: int = 0, size: int = 0) -> Document:
    return Document.objects.create(
        site=site,
        url=f"https://{site.host}/{path}",
        fetched_at="2026-05-01T00:00:00Z",
        raw_sha256=f"{n:064x}",
        raw_size=size,
    )


@pytest.mark.parametrize("value", [MASK64, 1 << 63, (1 << 63) - 1, 0x8E4A54256F09D080, 0, 1])
def test_fingerprints_with_the_top_bit_set_survive_the_round_trip(value: int) -> None:
    from django.db import connection

    assert connection.vendor == "postgresql"
    site = Site.objects.create(host="pg.example.com")
    document = _document(site)
    method = FingerprintMethod.objects.create(key="m", params={})
    Fingerprint.objects.create(
        document=document,
        method=method,
        simhash=to_signed64(value),
        text_sha256="0" * 64,
        token_count=4,
    )
    stored = Fingerprint.objects.get(document=document)
    assert stored.value == value
    assert stored.hex == f"{value:016x}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_hex(simhash) FROM ingest_fingerprint WHERE id = %s", [stored.id])
        (pg_hex,) = cursor.fetchone()
    assert pg_hex.rjust(16, "0")[-16:] == f"{value:016x}"


def test_a_fingerprint_is_ok_exactly_when_it_has_a_simhash() -> None:
    """Ingest 0040: a branch's status is read from its SimHash, not stored."""
    site = Site.objects.create(host="pg2.example.com")
    document = _document(site, n=1)
    method = FingerprintMethod.objects.create(key="m2", params={})
    Fingerprint.objects.create(
        document=document,
        method=method,
        simhash=None,
        text_sha256="0" * 64,
        token_count=0,
        full_simhash=5,
    )
    stored = Fingerprint.objects.get(document=document)
    assert (stored.status, stored.full_status) == ("insufficient_features", "ok")
    assert (stored.main.status, stored.full.status) == ("insufficient_features", "ok")
    assert not Fingerprint.objects.filter(document=document, simhash__isnull=False).exists()


@pytest.mark.parametrize("statement_bytes", [64 * 1024 * 1024, 1])  # one statement, or one each
def test_bodies_of_every_byte_value_survive_the_binary_insert(
    statement_bytes: int, monkeypatch
) -> None:
    from ingest import models
    from ingest.models import DocumentBody

    monkeypatch.setattr(models, "BODY_INSERT_BYTES", statement_bytes)

    site = Site.objects.create(host="pg3.example.com")
    raw = [bytes(range(256)) * 40, b"\x00" * 1000 + b"\\x00'\"", b""]
    documents = [_document(site, f"{i}", n=i, size=len(body)) for i, body in enumerate(raw)]
    DocumentBody.bulk_insert(
        (d.pk, DocumentBody.pack(body)) for d, body in zip(documents, raw, strict=True)
    )
    stored = {b.document_id: b for b in DocumentBody.objects.filter(document__in=documents)}
    assert [stored[d.pk].raw() for d in documents] == raw
    assert {b.codec for b in stored.values()} == {"zstd"}
    # Read back in binary, as the workers read them.
    read = DocumentBody.bulk_read([d.pk for d in documents] + [10**12])
    assert sorted(read) == sorted(d.pk for d in documents)
    assert [read[d.pk].raw() for d in documents] == raw


def test_bodies_are_stored_out_of_line_without_a_second_compression() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstorage FROM pg_attribute "
            "WHERE attrelid = 'ingest_documentbody'::regclass AND attname = 'data'"
        )
        assert cursor.fetchone() == ("e",)  # EXTERNAL: zstd bytes are not fed to pglz


def test_extracted_texts_are_compressed_with_lz4() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attcompression FROM pg_attribute "
            "WHERE attrelid = 'ingest_extraction'::regclass "
            "AND attname IN ('main_text', 'full_text') ORDER BY attname"
        )
        assert cursor.fetchall() == [("full_text", "l"), ("main_text", "l")]
    site = Site.objects.create(host="lz4.example.com")
    document = _document(site)
    text = "a sentence that repeats itself. " * 400  # past the 2 KB where TOAST compresses
    Extraction.objects.create(document=document, extractor_version="v", main_text=text)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(main_text), main_text FROM ingest_extraction "
            "WHERE document_id = %s",
            [document.pk],
        )
        assert cursor.fetchone() == ("lz4", text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-(2**31), max_value=2**31 - 1), max_size=400))
def test_probe_keys_sent_in_binary_read_back_as_the_same_int4s(values: list[int]) -> None:
    import numpy as np
    import psycopg
    from django.db import connection

    from ingest import index

    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.adapters.register_dumper(index.Int4Array, index._Int4ArrayDumper)
        arrays = index.Int4Array(np.array(values, dtype=np.int32))
        cursor.execute("SELECT %s::int4[], cardinality(%s::int4[])", [arrays, arrays])
        assert cursor.fetchone() == (values, len(values))


def test_connections_compile_no_statement_just_in_time() -> None:
    """JIT compilation costs a short statement more than it runs (16 ms for a 5 ms
    passage probe of a task); the connection options turn it off."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=300), st.text(max_size=3000), st.integers(0, 2**31 - 1)),
        min_size=1,
        max_size=5,
    )
)
def test_rows_inserted_with_their_values_bound_on_the_server_read_back_as_given(
    rows: list[tuple[str, str, int]],
) -> None:
    from django.db import transaction

    from ingest.models import rows_insert

    rows = [(t.replace("\x00", ""), m.replace("\x00", ""), n) for t, m, n in rows]
    with transaction.atomic():
        site, _ = Site.objects.get_or_create(host="bound.example.com")
        extractions = []
        for i, (title, text, tokens) in enumerate(rows):
            document = _document(site, f"{i}", n=i)
            extractions.append(
                Extraction(
                    document=document,
                    extractor_version="v",
                    status="ok",
                    title=title,
                    main_text=text,
                    full_text=text + title,
                    main_tokens=tokens,
                )
            )
        rows_insert(extractions)
        stored = {e.pk: e for e in Extraction.objects.filter(pk__in=[e.pk for e in extractions])}
        assert [
            (
                stored[e.pk].document_id,
                stored[e.pk].title,
                stored[e.pk].main_text,
                stored[e.pk].full_text,
                stored[e.pk].main_tokens,
            )
            for e in extractions
        ] == [
            (e.document_id, t, m, m + t, n) for e, (t, m, n) in zip(extractions, rows, strict=True)
        ]
        assert all(stored[e.pk].created_at == e.created_at for e in extractions)
        transaction.set_rollback(True)
