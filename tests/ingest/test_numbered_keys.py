"""Extractions, fingerprints and embeddings are keyed with their document (the
distribution column, dedup_site/distribution.py) and keep a serial `id` beside the key,
numbered by the database on PostgreSQL and by the writer on SQLite
(ingest.models.NumberedModel): every way of writing them numbers them, in order."""

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, connection, models, transaction

from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import Document, Extraction, Fingerprint, Site, rows_insert
from tests import factories

pytestmark = pytest.mark.django_db


def _document(n: int) -> Document:
    site, _ = Site.objects.get_or_create(host="n.example.com")
    return Document.objects.create(
        site=site,
        url=f"https://n.example.com/{n}",
        fetched_at=datetime(2026, 5, 1, tzinfo=UTC),
        raw_sha256=f"{n:064x}",
        raw_size=1,
    )


def _extraction(document: Document, version: str = EXTRACTOR_VERSION) -> Extraction:
    return Extraction(document=document, extractor_version=version, status="ok")


def test_the_key_is_the_document_and_the_natural_columns_and_the_id_is_numbered() -> None:
    document = factories.indexed_document(url="https://k.example.com/", text="a b c", simhash=5)
    other = factories.indexed_document(url="https://k.example.com/2", text="a b d", simhash=6)
    prints = list(Fingerprint.objects.filter(document__in=[document, other]).order_by("id"))
    pairs = zip(prints, (document, other), strict=True)
    assert [p.pk for p in prints] == [(d.pk, p.method_id) for p, d in pairs]
    assert prints[0].id is not None and prints[1].id == prints[0].id + 1
    extraction = Extraction.objects.get(document=document)
    assert extraction.pk == (document.pk, EXTRACTOR_VERSION)
    assert isinstance(extraction.id, int)


def test_create_bulk_create_and_rows_insert_number_their_rows_in_order() -> None:
    docs = [_document(n) for n in range(5)]
    one = Extraction.objects.create(document=docs[0], extractor_version="v", status="ok")
    bulk = Extraction.objects.bulk_create([_extraction(d, "v") for d in docs[1:3]])
    inserted = [_extraction(d, "v") for d in docs[3:]]
    rows_insert(inserted)
    ids = [one.id, *(e.id for e in bulk), *(e.id for e in inserted)]
    assert all(isinstance(i, int) for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == 5
    stored = dict(Extraction.objects.filter(extractor_version="v").values_list("document", "id"))
    assert [stored[d.pk] for d in docs] == ids


def test_a_second_extraction_of_one_version_is_refused_by_the_key() -> None:
    document = _document(1)
    Extraction.objects.create(document=document, extractor_version="v", status="ok")
    with pytest.raises(IntegrityError), transaction.atomic():
        Extraction.objects.create(document=document, extractor_version="v", status="empty")


def test_a_row_no_writer_numbered_is_refused_on_sqlite_and_numbered_on_postgresql() -> None:
    """Past the numbering writers (a plain QuerySet): SQLite stores no row without its
    number (NOT NULL); PostgreSQL's identity column numbers it."""
    document = _document(1)
    plain: models.QuerySet[Extraction] = models.QuerySet(model=Extraction)
    if connection.vendor == "postgresql":
        (row,) = plain.bulk_create([_extraction(document, "v")])
        assert isinstance(row.id, int)
        return
    with pytest.raises(IntegrityError), transaction.atomic():
        plain.bulk_create([_extraction(document, "v")])
    assert not Extraction.objects.filter(document=document).exists()
