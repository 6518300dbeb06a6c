"""The dedup state's budget on PostgreSQL: digests stored as bytes, no index another
index already answers, no pair fact stored twice (docs/scaling.md)."""

import hashlib

import pytest
from django.db import connection

from ingest.models import Document, Fingerprint, FingerprintMethod, PassageSet, Site
from reviews.queue.pair_states import last_print_above, sync_reads
from reviews.queue.watermarks import UNSET

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

# The tables that grow with the crawl, one or more rows per document.
LARGE = (
    "ingest_document",
    "ingest_fingerprint",
    "ingest_indexentry",
    "ingest_passageset",
    "ingest_candidatepair",
    "ingest_candidategroup",
    "ingest_groupmember",
)


def _indexes(table: str) -> list[tuple[str, list[str], bool, str]]:
    """(name, key columns, is partial or on an expression, method) of the table's indexes."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT i.relname,
                   ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY AS k(n, o)
                         JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n
                         ORDER BY k.o),
                   x.indpred IS NOT NULL OR x.indexprs IS NOT NULL
                       OR 0 = ANY(x.indkey::int2[]),
                   am.amname
            FROM pg_index x
            JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_am am ON am.oid = i.relam
            WHERE t.relname = %s
            """,
            [table],
        )
        return [(name, list(cols), special, am) for name, cols, special, am in cursor.fetchall()]


def _fingerprinted(host: str, sha: str, method_key: str) -> tuple[Document, FingerprintMethod]:
    """A document whose raw bytes and main text both have the digest `sha`."""
    document = Document.objects.create(
        site=Site.objects.create(host=host),
        url=f"https://{host}/",
        fetched_at="2026-05-01T00:00:00Z",
        raw_sha256=sha,
        raw_size=4,
    )
    method = FingerprintMethod.objects.create(key=method_key, params={})
    Fingerprint.objects.create(
        document=document,
        method=method,
        simhash=1,
        text_sha256=sha,
        token_count=1,
        full_simhash=2,
    )
    return document, method


def test_digests_are_stored_as_32_bytes_and_read_as_hex() -> None:
    sha = hashlib.sha256(b"page").hexdigest()
    _fingerprinted("digest.example.com", sha, "m")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT octet_length(d.raw_sha256), octet_length(f.text_sha256) "
            "FROM ingest_document d JOIN ingest_fingerprint f ON f.document_id = d.id"
        )
        assert cursor.fetchone() == (32, 32)
    assert Document.objects.get().raw_sha256 == sha
    assert Document.objects.filter(raw_sha256__in=[sha, "0" * 64]).count() == 1
    assert (
        Fingerprint.objects.filter(text_sha256=sha).values_list("text_sha256", flat=True)[0] == sha
    )
    assert not Document.objects.filter(raw_sha256="not hex").exists()


@pytest.mark.parametrize("table", LARGE)
def test_no_btree_index_is_a_prefix_of_another(table: str) -> None:
    """A plain btree whose columns lead another btree of the same table costs its bytes
    per row and answers nothing the longer one does not."""
    indexes = [i for i in _indexes(table) if i[3] == "btree"]
    redundant = [
        (name, longer)
        for name, cols, special, _ in indexes
        if not special
        for longer, other, _, _ in indexes
        if longer != name
        and other[: len(cols)] == cols
        and len(other) >= len(cols)
        and not (len(other) == len(cols) and name > longer)  # an exact copy counts once
    ]
    assert redundant == []


def test_no_digest_column_is_text() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE column_name LIKE '%%sha256' AND table_name = ANY(%s)",
            [list(LARGE)],
        )
        assert {(t, c): d for t, c, d in cursor.fetchall()} == {
            ("ingest_document", "raw_sha256"): "bytea",
            ("ingest_fingerprint", "text_sha256"): "bytea",
        }


def test_the_admin_finds_a_document_by_its_digest(client) -> None:
    from django.contrib.auth.models import User

    site = Site.objects.create(host="admin.example.com")
    sha = hashlib.sha256(b"admin page").hexdigest()
    Document.objects.create(
        site=site,
        url="https://admin.example.com/found",
        fetched_at="2026-05-01T00:00:00Z",
        raw_sha256=sha,
        raw_size=1,
    )
    client.force_login(User.objects.create_superuser("root", "r@example.com", "pw"))
    found = client.get("/admin/ingest/document/", {"q": sha})
    assert found.status_code == 200 and b"admin.example.com/found" in found.content
    other = client.get("/admin/ingest/document/", {"q": "f" * 64})
    assert b"admin.example.com/found" not in other.content
    by_url = client.get("/admin/ingest/document/", {"q": "found"})
    assert b"admin.example.com/found" in by_url.content


def test_text_digests_are_indexed_on_the_main_text_only() -> None:
    """Only the main text is looked up by its digest (the check's exact matches): the
    full page's digest has no index."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'ingest_fingerprint' "
            "AND indexdef LIKE '%%text_sha256%%'"
        )
        defs = [d for (d,) in cursor.fetchall()]
    assert len(defs) == 1
    assert "(text_sha256)" in defs[0] and "full_text_sha256" not in defs[0]


def test_digest_lookups_use_hash_indexes() -> None:
    """Both digests are found by equality through a hash index (about 34 bytes a row
    against a btree's 59-79): a snapshot by its raw digest, the check's exact match by
    the main branch's text digest, the method checked on the rows found."""
    sha = hashlib.sha256(b"hash index").hexdigest()
    doc, method = _fingerprinted("hash.example.com", sha, "hash-index-test")
    assert {name: am for name, _, _, am in _indexes("ingest_document")}[
        "document_raw_sha256"
    ] == "hash"
    assert {name: am for name, _, _, am in _indexes("ingest_fingerprint")}[
        "fingerprint_text_sha256"
    ] == "hash"
    by_raw = Document.objects.filter(raw_sha256__in=[sha, "0" * 64])
    by_text = Fingerprint.objects.filter(
        method=method, simhash__isnull=False, text_sha256=sha
    ).values_list("document_id", flat=True)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        raw_plan = by_raw.explain()
        text_plan = by_text.explain()
    assert "document_raw_sha256" in raw_plan, raw_plan
    assert "fingerprint_text_sha256" in text_plan, text_plan
    assert list(by_raw.values_list("id", flat=True)) == [doc.id]
    assert list(by_text) == [doc.id]


def test_a_fingerprint_row_is_packed() -> None:
    """Ingest 0035 (after 0034's packing): one row a document and method holding both
    branches, the columns widest first, and since 0040 no status columns (a branch's
    status is its SimHash being there), so a stored row is its 24-byte header and 71
    bytes of values (a 32-byte digest): no padding between columns, no null bitmap."""
    sha = hashlib.sha256(b"packed row").hexdigest()
    doc, method = _fingerprinted("packed.example.com", sha, "packed-row-test")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'ingest_fingerprint'::regclass "
            "AND attnum > 0 ORDER BY attnum"
        )
        columns = [name for (name,) in cursor.fetchall()]
        cursor.execute(
            "SELECT pg_column_size(f.*) FROM ingest_fingerprint f WHERE document_id = %s",
            [doc.pk],
        )
        (size,) = cursor.fetchone()
    # Every column, none dropped (a dropped one would give every new row a null bitmap).
    assert columns == [
        "id",
        "document_id",
        "simhash",
        "full_simhash",
        "token_count",
        "method_id",
        "text_sha256",
    ]
    assert size == 24 + 8 + 8 + 8 + 8 + 4 + 2 + 33


def test_the_watermark_reads_fingerprints_through_a_brin_index() -> None:
    """The pair states' fingerprint watermark reads the rows' `id` above its mark through
    its one index, a BRIN one (ingest 0038): no btree of ~22 bytes a document."""
    indexes = {name: (cols, am) for name, cols, _, am in _indexes("ingest_fingerprint")}
    assert indexes["fingerprint_id"] == (["id"], "brin")
    assert [name for name, (cols, _) in indexes.items() if cols == ["id"]] == ["fingerprint_id"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'fingerprint_id'")
        (options,) = cursor.fetchone()
        assert "autosummarize=on" in options
        cursor.execute("SET LOCAL enable_seqscan = off")
        query = Fingerprint.objects.filter(id__gt=41).values("id").query
        sql, params = query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Bitmap Index Scan on fingerprint_id" in plan


def test_the_last_fingerprint_above_the_mark_is_read_by_value() -> None:
    """The BRIN index cannot give the largest id by itself: the pair states read the
    largest above their mark, or keep the mark when nothing is newer."""
    sha = hashlib.sha256(b"watermark").hexdigest()
    _fingerprinted("watermark.example.com", sha, "watermark-test")
    top = Fingerprint.objects.order_by("-id").values_list("id", flat=True)[0]
    assert last_print_above(top - 1) == top
    assert last_print_above(top) == top
    assert last_print_above(UNSET) == top
    assert "last_print" not in sync_reads()


def test_a_passage_set_row_is_packed() -> None:
    """Ingest 0039: the passage sets' fixed-width columns come first, widest first, and
    the hashes last, so a set of up to 15 hashes (a one-byte header) is its 24-byte
    header, 22 bytes of columns and its hashes, with no padding before `document_id`."""
    sha = hashlib.sha256(b"packed set").hexdigest()
    doc, _ = _fingerprinted("packed-set.example.com", sha, "packed-set-test")
    PassageSet.objects.create(
        document=doc, method=1, site_id=doc.site_id, fetched_at=doc.fetched_at, hashes=[7] * 12
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'ingest_passageset'::regclass "
            "AND attnum > 0 ORDER BY attnum"
        )
        columns = [name for (name,) in cursor.fetchall()]
        cursor.execute(
            "SELECT pg_column_size(p.*), length(hashes) FROM ingest_passageset p "
            "WHERE document_id = %s",
            [doc.pk],
        )
        size, stored = cursor.fetchone()
    assert columns == ["document_id", "fetched_at", "site_id", "method", "hashes"]
    assert stored == 12 * 8
    assert size == 24 + 8 + 8 + 4 + 2 + 1 + 12 * 8
