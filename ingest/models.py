"""Crawl data: nothing here is ever deleted by deduplication."""

import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.expressions import DatabaseDefault
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from ingest.core import bodies, warc_archive
from ingest.core.channels import names as channel_names
from ingest.core.channels import semantic_only
from ingest.core.simhash import to_hex, to_unsigned64
from ingest.core.single import to_single


class DigestField(models.Field):
    """A SHA-256 digest, a lowercase hex string in Python. On PostgreSQL its 32 bytes
    (bytea: 33 bytes a value against 65 for the hex text, and no second index for
    pattern searches); elsewhere the 64 hex characters. A value that is not hex
    (an admin search term) matches nothing."""

    def db_type(self, connection: object) -> str:
        return "bytea" if getattr(connection, "vendor", "") == "postgresql" else "varchar(64)"

    def from_db_value(self, value: object, expression: object, connection: object) -> object:
        return to_hex_digest(value)

    def to_python(self, value: object) -> object:
        return to_hex_digest(value)

    def get_db_prep_value(
        self, value: object, connection: object, prepared: bool = False
    ) -> object:
        if value is None:
            return None
        text = to_hex_digest(value)
        assert isinstance(text, str)
        if getattr(connection, "vendor", "") != "postgresql":
            return text
        try:
            return bytes.fromhex(text)
        except ValueError:
            return b""  # no stored digest is empty


class DigestIndex(models.Index):
    """An index of one digest column, looked up by equality only: a hash index on
    PostgreSQL (about 34 bytes a row, where a btree of 33-byte keys takes ~59 freshly
    built and ~79 grown by random inserts; docs/scaling.md), a btree elsewhere."""

    def create_sql(self, model: Any, schema_editor: Any, using: str = "", **kwargs: Any) -> Any:
        if schema_editor.connection.vendor == "postgresql":
            using = " USING hash"
        return super().create_sql(model, schema_editor, using=using, **kwargs)


class WatermarkIndex(models.Index):
    """The index of a serial column read only as a watermark (the rows above a mark, the
    largest of them) on an append-only table, whose rows lie in the heap in about the
    order they were numbered: a BRIN index on PostgreSQL (the least and largest value of
    each run of PAGES_PER_RANGE pages: a few hundred kilobytes at 10M rows, where a
    btree takes ~22 bytes a row; docs/scaling.md), a btree elsewhere. A read above a
    mark visits only the runs holding larger values; the planner needs the mark as a
    value to see how few rows that is (a read of it under a parameter plans a scan)."""

    PAGES_PER_RANGE = 16

    def create_sql(self, model: Any, schema_editor: Any, using: str = "", **kwargs: Any) -> Any:
        if schema_editor.connection.vendor != "postgresql":
            return super().create_sql(model, schema_editor, using=using, **kwargs)
        statement = super().create_sql(model, schema_editor, using=" USING brin", **kwargs)
        options = f" WITH (pages_per_range = {self.PAGES_PER_RANGE}, autosummarize = on)"
        statement.parts["extra"] = options + str(statement.parts["extra"])  # type: ignore[assignment]
        return statement


class RealField(models.FloatField):
    """A share or ratio in 4 bytes (PostgreSQL `real`, not `double precision`).

    The value is rounded to single precision on the way in and read back as the
    shortest decimal that is that single-precision number (`to_single`), on every
    backend alike: SQLite (8-byte REAL) stores and gives what PostgreSQL does."""

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        return "real"

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        value = super().get_db_prep_value(value, connection, prepared)
        return None if value is None else to_single(float(value))

    def from_db_value(self, value: Any, expression: object, connection: object) -> Any:
        return None if value is None else to_single(float(value))


def to_hex_digest(value: object) -> object:
    """A digest as the models hold it (hex text) from what the database or a caller gave."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, memoryview | bytes | bytearray):
        return bytes(value).hex()
    return str(value)


class DatabaseNumbered(models.Func):
    """The `db_default` of a serial column outside the primary key (`NumberedModel`).
    PostgreSQL numbers it: the column is an identity column and an INSERT writes DEFAULT
    for it. SQLite numbers only a whole-key integer column, so there the writer does
    (`numbers_assign`); compiled, this is NULL, which the NOT NULL column refuses (a
    writer that did not number its rows fails, it does not store a row without one)."""

    template = "NULL"
    output_field = models.BigIntegerField()


def numbered_field(**kwargs: Any) -> models.BigIntegerField:
    """The `id` of a `NumberedModel`: numbered by the database, read as a counter or an
    address, not the primary key (which holds the distribution column instead)."""
    return models.BigIntegerField(db_default=DatabaseNumbered(), editable=False, **kwargs)


def _unnumbered(value: object) -> bool:
    return value is None or isinstance(value, DatabaseDefault)


def numbers_assign(objs: Iterable[models.Model]) -> None:
    """Number these new rows of one model on SQLite (one writer at a time: the next
    numbers after the largest stored, in the rows' order); PostgreSQL numbers them
    itself, on insert."""
    todo = [o for o in objs if _unnumbered(o.id)]  # type: ignore[attr-defined]
    if not todo or connection.vendor == "postgresql":
        return
    model = type(todo[0])
    top = model._base_manager.aggregate(m=models.Max("id"))["m"] or 0
    for n, obj in enumerate(todo, start=top + 1):
        obj.id = n  # type: ignore[attr-defined]


class NumberedQuerySet(models.QuerySet):
    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        objs = list(objs)
        numbers_assign(objs)
        return super().bulk_create(objs, *args, **kwargs)


class NumberedModel(models.Model):
    """A large table whose primary key holds its distribution column (dedup_site/
    distribution.py) and which keeps a serial `id` beside it, numbered by the database
    (`DatabaseNumbered`), that readers use as a watermark or an address. A new row is
    always inserted (its key may be all natural columns: no UPDATE is tried first)."""

    objects = NumberedQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._state.adding:
            numbers_assign([self])
            if not kwargs.get("update_fields"):
                kwargs.setdefault("force_insert", True)
        super().save(*args, **kwargs)


class DocType(models.TextChoices):
    ARTICLE = "article"
    PRODUCT = "product"
    SHORT = "short"
    LISTING = "listing"
    FORUM = "forum"
    OTHER = "other"


class DocTypeSource(models.TextChoices):
    """Who said what a document is (docs/page-kinds.md): the crawl's own field wins, then
    what the page declares, then the short-text rule, then the site's default."""

    CRAWL = "crawl", _("given by the crawl")
    PAGE = "page", _("declared by the page")
    SHORT = "short", _("short main text")
    SITE = "site", _("the site's default")


class Site(models.Model):
    host = models.CharField(max_length=255, unique=True)
    priority = models.IntegerField(
        default=0, help_text="Higher wins when a group's representative is suggested."
    )
    default_doc_type = models.CharField(
        max_length=16, choices=DocType.choices, default=DocType.OTHER
    )

    class Meta:
        ordering = ["host"]

    def __str__(self) -> str:
        return self.host


class CrawlBatch(models.Model):
    class Format(models.TextChoices):
        WARC = "warc"
        JSONL = "jsonl"
        API = "api"

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    source = models.CharField(max_length=1024)
    format = models.CharField(max_length=8, choices=Format.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.RUNNING)
    bytes_total = models.BigIntegerField(default=0)
    bytes_read = models.BigIntegerField(default=0)
    records_read = models.IntegerField(default=0)
    stored = models.IntegerField(default=0)
    already_stored = models.IntegerField(
        default=0, help_text="Records identical to a stored snapshot (re-ingest)."
    )
    exact_duplicates = models.IntegerField(
        default=0, help_text="Stored records whose raw bytes were already stored elsewhere."
    )
    skipped = models.JSONField(default=dict, help_text="Skipped records by reason.")
    error_count = models.IntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last sign of life of a running ingest; a running batch silent for "
        "INGEST_STALE_MINUTES is marked failed.",
    )

    class Meta:
        ordering = ["-started_at"]
        verbose_name_plural = "crawl batches"

    def __str__(self) -> str:
        return f"{self.format} {self.source}"


class BatchError(models.Model):
    batch = models.ForeignKey(CrawlBatch, on_delete=models.PROTECT, related_name="errors")
    kind = models.CharField(max_length=32)
    offset = models.BigIntegerField(help_text="Byte offset (WARC) or line number (JSONL).")
    url = models.TextField(blank=True)
    message = models.TextField()
    stored = models.BooleanField(
        default=False, help_text="The record was stored anyway (e.g. charset fixed up)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["batch", "offset", "id"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "offset", "kind"], name="batch_error_once"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} at {self.offset}"


class Document(models.Model):
    """One fetched snapshot. Its raw bytes live in DocumentBody, out of the hot rows."""

    # The (site, fetched_at) index answers a site's documents.
    site = models.ForeignKey(
        Site, on_delete=models.PROTECT, related_name="documents", db_index=False
    )
    batch = models.ForeignKey(
        CrawlBatch, on_delete=models.PROTECT, related_name="documents", null=True
    )
    url = models.TextField()
    final_url = models.TextField(blank=True)
    http_status = models.IntegerField(null=True)
    fetched_at = models.DateTimeField()
    content_type = models.CharField(max_length=255, blank=True)
    declared_encoding = models.CharField(max_length=64, blank=True)
    detected_encoding = models.CharField(max_length=64, blank=True)
    raw_sha256 = DigestField()
    raw_size = models.IntegerField()
    doc_type = models.CharField(max_length=16, choices=DocType.choices, default=DocType.OTHER)
    doc_type_source = models.CharField(
        max_length=8,
        choices=DocTypeSource.choices,
        blank=True,
        help_text="Who decided the doc type; blank on documents stored before it was recorded.",
    )
    doc_type_evidence = models.CharField(
        max_length=255,
        blank=True,
        help_text="How: the page's declaration (rule and evidence) or the rule applied.",
    )
    headers = models.JSONField(default=dict)
    charset_forced = models.BooleanField(
        default=False, help_text="The source gave text, not bytes (JSONL, API): UTF-8."
    )
    batch_offset = models.BigIntegerField(
        null=True, help_text="Byte offset (WARC) or line number (JSONL) in the batch."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        # One row per snapshot (url, fetched_at, raw_sha256) is kept by the writer, which
        # looks the snapshot up by its digest under the digest's lock (`snapshots_lock`,
        # ingest.services), not by a unique index distributed documents could not keep.
        indexes = [
            models.Index(fields=["site", "fetched_at"]),
            DigestIndex(fields=["raw_sha256"], name="document_raw_sha256"),
        ]

    def __str__(self) -> str:
        return self.url

    def get_absolute_url(self) -> str:
        return reverse("ingest:document-detail", args=[self.pk])


BODY_INSERT_BYTES = 64 * 1024 * 1024  # packed bytes per body INSERT statement


class ArchiveFile(models.Model):
    """One WARC file of the desk's own archive (ingest.core.warc_archive), written by one
    process and sealed once: `sealed_at`, `size` and `sha256` are set together, then the
    row never changes. Never deleted."""

    path = models.CharField(max_length=255, unique=True, help_text="Relative to ARCHIVE_DIR.")
    host = models.CharField(max_length=255, help_text="The host of the process writing it.")
    pid = models.IntegerField()
    process_started = models.BigIntegerField(
        help_text="The writer's start time (clock ticks since boot): tells it from a later "
        "process with the same pid."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    sealed_at = models.DateTimeField(null=True, blank=True)
    size = models.BigIntegerField(null=True, blank=True)
    sha256 = DigestField(null=True, blank=True)

    class Meta:
        ordering = ["path"]

    def __str__(self) -> str:
        return self.path


# A body stored in the archive: DocumentBody.codec says so, `data` is empty.
ARCHIVE_CODEC = "warc"


class DocumentBody(models.Model):
    """Raw HTTP payload: compressed in `data` under the codec it names (ingest.core.bodies),
    or, under the codec "warc", a record of an archive file (file, offset, length), read
    on demand and verified against the document's `raw_sha256`. Never updated, never
    deleted."""

    document = models.OneToOneField(
        Document, on_delete=models.PROTECT, primary_key=True, related_name="body"
    )
    codec = models.CharField(max_length=8, default=bodies.CODEC)
    data = models.BinaryField(blank=True)
    # Looked up by document only: no index on the file (archive_verify scans).
    archive_file = models.ForeignKey(
        ArchiveFile,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        db_index=False,
        related_name="+",
    )
    archive_offset = models.BigIntegerField(null=True, blank=True)
    archive_length = models.IntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"body of {self.document_id}"

    @staticmethod
    def pack(raw: bytes) -> bytes:
        """The bytes to store in `data` for a body written under the default codec."""
        return bodies.pack(raw)

    def raw(self) -> bytes:
        """The raw bytes; an archived body is read from its file and verified
        (warc_archive.ArchiveError when its file is missing or changed)."""
        if self.codec != ARCHIVE_CODEC:
            return bodies.unpack(self.codec, bytes(self.data))
        assert self.archive_file is not None
        return self.archived_read(self.archive_file.path, self.document.raw_sha256)

    def archived_read(self, path: str, sha256: str) -> bytes:
        assert self.archive_offset is not None and self.archive_length is not None
        pointer = warc_archive.Pointer(path, self.archive_offset, self.archive_length)
        return warc_archive.record_read(Path(settings.ARCHIVE_DIR), pointer, sha256=sha256)

    @staticmethod
    def bulk_read(document_ids: Iterable[int]) -> dict[int, "RawBody"]:
        """These documents' bodies by document id (for `raw()`), an archived one with its
        file's path and the digest to verify. On PostgreSQL the bytes come in binary: as
        text, the server writes each body in hex and the client parses it back
        (0.11-0.2 against 0.035 CPU-ms per 37 KB body on the client, 0.2-0.3 against
        0.07 ms per body in all)."""
        ids = list(document_ids)
        if not ids:
            return {}
        columns = (
            "b.document_id, b.codec, b.data, f.path, b.archive_offset, b.archive_length, "
            "d.raw_sha256"
        )
        joins = (
            "FROM ingest_documentbody b JOIN ingest_document d ON d.id = b.document_id "
            "LEFT JOIN ingest_archivefile f ON f.id = b.archive_file_id "
        )
        if connection.vendor != "postgresql":
            rows: list[tuple[Any, ...]] = []
            with connection.cursor() as cursor:
                for start in range(0, len(ids), 500):
                    part = ids[start : start + 500]
                    marks = ", ".join(["%s"] * len(part))
                    cursor.execute(
                        f"SELECT {columns} {joins} WHERE b.document_id IN ({marks})", part
                    )
                    rows += cursor.fetchall()
        else:
            connection.ensure_connection()
            with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cur:
                cur.execute(
                    f"SELECT {columns} {joins} WHERE b.document_id = ANY(%s::bigint[])",
                    [int_array(ids)],
                    binary=True,
                )
                rows = cur.fetchall()
        return {
            row[0]: RawBody(
                document_id=row[0],
                codec=row[1],
                data=bytes(row[2] or b""),
                path=row[3],
                offset=row[4],
                length=row[5],
                sha256=str(to_hex_digest(row[6])),
            )
            for row in rows
        }

    @staticmethod
    def bulk_insert(rows: Iterable[tuple[int, bytes]]) -> None:
        """Store (document id, packed bytes) bodies under the default codec, in one
        statement. On PostgreSQL the bytes travel as one binary bytea[] parameter:
        Django's client-side binding writes each body as a hex literal, which cost the
        ingest command 0.27 ms per page to build and the server 0.3 ms to parse (bench:
        37 KB bodies)."""
        rows = list(rows)
        if not rows:
            return
        if connection.vendor != "postgresql":
            DocumentBody.objects.bulk_create(
                DocumentBody(document_id=d, data=data) for d, data in rows
            )
            return
        # One array is one value to PostgreSQL, which caps a value at 1 GB: a statement
        # takes bodies up to BODY_INSERT_BYTES (at least one).
        batches: list[list[tuple[int, bytes]]] = [[]]
        size = 0
        for row in rows:
            if batches[-1] and size + len(row[1]) > BODY_INSERT_BYTES:
                batches.append([])
                size = 0
            batches[-1].append(row)
            size += len(row[1])
        connection.ensure_connection()
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
            for batch in batches:
                cursor.execute(
                    "INSERT INTO ingest_documentbody (document_id, codec, data) "
                    "SELECT d, %s, b FROM unnest(%s::bigint[], %b::bytea[]) AS v(d, b)",
                    [bodies.CODEC, int_array(d for d, _ in batch), [data for _, data in batch]],
                )

    @staticmethod
    def bulk_insert_archived(rows: Iterable[tuple[int, int, int, int]]) -> None:
        """Store (document id, archive file id, offset, length) pointers, in one
        statement (the records are durable already: warc_archive.ArchiveWriter)."""
        rows = list(rows)
        if not rows:
            return
        if connection.vendor != "postgresql":
            DocumentBody.objects.bulk_create(
                DocumentBody(
                    document_id=d,
                    codec=ARCHIVE_CODEC,
                    data=b"",
                    archive_file_id=f,
                    archive_offset=o,
                    archive_length=n,
                )
                for d, f, o, n in rows
            )
            return
        connection.ensure_connection()
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(
                "INSERT INTO ingest_documentbody "
                "(document_id, codec, data, archive_file_id, archive_offset, archive_length) "
                "SELECT d, %s, '', f, o, n FROM unnest(%s::bigint[], %s::bigint[], "
                "%s::bigint[], %s::int[]) AS v(d, f, o, n)",
                [
                    ARCHIVE_CODEC,
                    int_array(r[0] for r in rows),
                    int_array(r[1] for r in rows),
                    int_array(r[2] for r in rows),
                    int_array(r[3] for r in rows),
                ],
            )


@dataclass(frozen=True)
class RawBody:
    """A body as `DocumentBody.bulk_read` reads it: the stored bytes, or the archive
    pointer and the digest its record must match."""

    document_id: int
    codec: str
    data: bytes
    path: str | None
    offset: int | None
    length: int | None
    sha256: str

    def raw(self) -> bytes:
        if self.codec != ARCHIVE_CODEC:
            return bodies.unpack(self.codec, self.data)
        assert self.path is not None and self.offset is not None and self.length is not None
        pointer = warc_archive.Pointer(self.path, self.offset, self.length)
        return warc_archive.record_read(Path(settings.ARCHIVE_DIR), pointer, sha256=self.sha256)


# Extraction statuses of pages that are not content (login walls, captchas, bot
# challenges, error pages): their pairs and groups go to the crawl quality view.
WALL_STATUSES = ("blocked", "empty", "too_short")


class Extraction(NumberedModel):
    class Status(models.TextChoices):
        OK = "ok", pgettext_lazy("extraction status", "Ok")
        EMPTY = "empty", pgettext_lazy("extraction status", "Empty")
        TOO_SHORT = "too_short", pgettext_lazy("extraction status", "Too Short")
        BLOCKED = "blocked", pgettext_lazy("extraction status", "Blocked")
        ERROR = "error", pgettext_lazy("extraction status", "Error")

    class Quality(models.TextChoices):
        """What a blocked page is: a crawl problem, never content (docs/page-kinds.md)."""

        LOGIN_WALL = "login_wall", _("login wall")
        PAYWALL = "paywall", _("paywall")
        BOT_CHALLENGE = "bot_challenge", _("captcha or bot challenge")
        ACCESS_DENIED = "access_denied", _("access denied")
        RATE_LIMITED = "rate_limited", _("rate limited")
        NAV_SHELL = "nav_shell", _("navigation-only shell")

    # Keyed with the distribution column (one extraction per document and extractor
    # version); the database numbers `id` beside it, the queue tally's wall watermark
    # (reviews.queue.queue_tally), hence its index.
    pk = models.CompositePrimaryKey("document", "extractor_version")
    id = numbered_field(db_index=True)
    document = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="extractions", db_index=False
    )
    extractor_version = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=Status.choices)
    quality = models.CharField(
        max_length=16,
        choices=Quality.choices,
        blank=True,
        help_text="What a blocked page is (login wall, captcha, …); blank otherwise.",
    )
    message = models.TextField(blank=True)
    title = models.TextField(blank=True)
    language = models.CharField(max_length=16, blank=True)
    main_text = models.TextField(blank=True)
    full_text = models.TextField(blank=True)
    main_tokens = models.IntegerField(default=0)
    full_tokens = models.IntegerField(default=0)
    declared = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the page declares about its source (ingest.core.provenance): "
        "published_at, published_by, site_name, credits.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # The wall pages the review queue leaves out, read without the texts.
            models.Index(
                fields=["extractor_version", "document"],
                condition=models.Q(status__in=WALL_STATUSES),
                name="extraction_walls",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.extractor_version} of {self.document_id}: {self.status}"


class Embedding(NumberedModel):
    """A document's main-text vector under one model and text rule (the semantic
    channel, ingest/core/embeddings.py). Written once: another model, text rule or
    extractor version adds rows beside it. A document the model does not cover gets a
    row without a vector, so the desk can say so.

    A failed attempt (`error`) is kept: the next attempt is a new row beside it with the
    next `attempt` number, until one succeeds or EMBEDDING_ATTEMPTS rows have failed. So
    a document has at most one row that is not `error` in a space, and its `error` rows
    are its failed attempts, numbered from 1."""

    class Status(models.TextChoices):
        COVERED = "covered"  # the vector is stored
        NOT_COVERED = "not_covered"  # the model does not cover the document's language
        EMPTY = "empty"  # no main text to embed
        ERROR = "error"

    # Keyed with the distribution column: a document's attempt in a space (two workers
    # retrying at once add one row for the attempt, not two). The database
    # numbers `id` beside it, the approximate index's watermark and order
    # (ingest.vectors), hence its index.
    pk = models.CompositePrimaryKey(
        "document", "model", "text_rule", "extractor_version", "attempt"
    )
    id = numbered_field(db_index=True)
    document = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="embeddings", db_index=False
    )
    model = models.CharField(max_length=200, help_text="The model's key (ingest.embedder).")
    text_rule = models.CharField(max_length=32)
    extractor_version = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=Status.choices)
    language = models.CharField(max_length=16, blank=True)
    dims = models.SmallIntegerField(default=0)
    vector = models.BinaryField(
        null=True, help_text="Unit vector, float16 little-endian (2 bytes per dimension)."
    )
    message = models.TextField(blank=True)
    attempt = models.PositiveSmallIntegerField(
        default=1, help_text="1 for the first try; a retry after an error row adds the next."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # One outcome per document and space; failed attempts beside it.
            models.UniqueConstraint(
                fields=["document", "model", "text_rule", "extractor_version"],
                condition=~models.Q(status="error"),
                name="embedding_once",
            ),
        ]
        indexes = [
            # Rebuilding the approximate index: one model's vectors in id order.
            models.Index(
                fields=["model", "text_rule", "id"],
                condition=models.Q(status="covered"),
                name="embedding_covered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model} of {self.document_id}: {self.status}"


class FingerprintMethod(models.Model):
    # A few methods ever: a smallint, so that every large table's `method_id` (the
    # fingerprints' key, the pairs) is two bytes, not eight (ingest 0034).
    id = models.SmallAutoField(primary_key=True)
    key = models.CharField(max_length=64, unique=True)
    params = models.JSONField()
    description = models.TextField(blank=True)
    is_active = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Retired: no longer computed for new documents nor searched; its fingerprints,
    # pairs, groups and labels stay (see reviews.operations.method_upgrades.method_retire).
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True)
class BranchPrint:
    """One branch of a fingerprint row (main text or full page), as the pages and the
    readers that take one branch at a time see it."""

    fingerprint: "Fingerprint"
    branch: str
    status: str
    simhash: int | None  # signed storage of the unsigned value
    # The full page's are not stored (ingest 0035): None unless the reader computed them.
    token_count: int | None
    text_sha256: str | None

    @property
    def method(self) -> FingerprintMethod:
        return self.fingerprint.method

    @property
    def value(self) -> int | None:
        return None if self.simhash is None else to_unsigned64(self.simhash)

    @property
    def hex(self) -> str:
        return "—" if self.simhash is None else to_hex(self.simhash)


def _status_of(simhash: int | None) -> str:
    return Fingerprint.Status.INSUFFICIENT if simhash is None else Fingerprint.Status.OK


class Fingerprint(NumberedModel):
    """A document's fingerprints under one method: both branches in one row, the main
    text's (the SimHash the channels search, the digest the exact channel looks up, the
    token count) and the full page's SimHash (the pairs' full-page distance).
    Both are computed together from one extraction and written once (ingest 0035: one
    row a document and method, where there were two, one a branch). The full page's
    digest and token count are not kept: no reader compares them, and the document page
    computes them again from the stored full text."""

    class Branch(models.TextChoices):
        MAIN = "main"
        FULL = "full"

    class Status(models.TextChoices):
        OK = "ok"
        INSUFFICIENT = "insufficient_features"

    # Keyed with the distribution column: one row per document and method. The database
    # numbers `id` beside it, the pair states' watermark of newly fingerprinted snapshots
    # (reviews.queue.pair_states), hence its index: a BRIN one on PostgreSQL, since the
    # rows are never updated nor deleted and the heap keeps about their numbers' order.
    # The document and the method have no index of their own: the key leads with the
    # document. The fields are declared widest first, the order of the table's columns:
    # PostgreSQL aligns each column, and this order packs a row into 100 bytes with its
    # line pointer (docs/scaling.md). A branch's status is its SimHash being there or
    # not (`status`, `full_status`; ingest 0040), not a column.
    pk = models.CompositePrimaryKey("document", "method")
    id = numbered_field()
    document = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="fingerprints", db_index=False
    )
    # Unsigned 64-bit SimHashes stored with the same bits as a signed bigint.
    simhash = models.BigIntegerField(null=True, help_text="Main text.")
    full_simhash = models.BigIntegerField(null=True, help_text="Full page.")
    token_count = models.IntegerField()
    method = models.ForeignKey(FingerprintMethod, on_delete=models.PROTECT, db_index=False)
    text_sha256 = DigestField()

    class Meta:
        # Only the main text is looked up by its digest (the check's exact matches; the
        # full page's is not stored). A hash of the digest alone: the method is checked
        # on the rows it finds.
        indexes = [
            DigestIndex(fields=["text_sha256"], name="fingerprint_text_sha256"),
            WatermarkIndex(fields=["id"], name="fingerprint_id"),
        ]

    def __str__(self) -> str:
        return f"{self.method_id} of {self.document_id}: {self.hex}"

    @property
    def status(self) -> str:
        """The main text's: `ok` with a SimHash, `insufficient_features` without one
        (read from the SimHash since ingest 0040; a query asks `simhash__isnull`)."""
        return _status_of(self.simhash)

    @property
    def full_status(self) -> str:
        """The full page's, read from its SimHash as `status` is."""
        return _status_of(self.full_simhash)

    @property
    def value(self) -> int | None:
        """The main text's SimHash, unsigned."""
        return self.main.value

    @property
    def hex(self) -> str:
        return self.main.hex

    @property
    def main(self) -> BranchPrint:
        return BranchPrint(
            self, "main", self.status, self.simhash, self.token_count, self.text_sha256
        )

    @property
    def full(self) -> BranchPrint:
        return BranchPrint(self, "full", self.full_status, self.full_simhash, None, None)

    def branches(self) -> list[BranchPrint]:
        return [self.main, self.full]


class ApiToken(models.Model):
    """A crawler's token for the HTTP API. Only its SHA-256 is stored."""

    name = models.CharField(max_length=100)
    key_sha256 = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="api_tokens")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class IndexEntry(models.Model):
    """The candidate index: one compact row per indexed fingerprint (main branch, ok).

    On PostgreSQL two btree expression indexes over the halves of the SimHash, on
    (method, half) and carrying the row's other columns (ingest 0029: the lookup is an
    index-only scan), find every entry within k bits (see ingest/index.py and
    ingest/core/bands.py); the row holds only what the lookup filters on. Derived data:
    it can always be rebuilt from the fingerprints (`candidates --rebuild`).
    """

    # On PostgreSQL this key is Django's state only: the table has no primary key there
    # since ingest 0036 (the unique band btree 0 on (method, band key 0, document,
    # fetched_at) keeps one row per method and document, a document having one main
    # SimHash per method and one fetch time), and nothing there looks a row up by it.
    # The ORM needs a key; SQLite keeps this one as the table's real key.
    pk = models.CompositePrimaryKey("method", "document")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, db_index=False)
    simhash = models.BigIntegerField()
    fetched_at = models.DateTimeField()
    # The FingerprintMethod id as a smallint rather than a bigint foreign key: it leads
    # every index of this table, and the narrower key keeps a row and its three btrees
    # near 140 bytes a fingerprint (bench/candidates_bench.py; 200 with the covering
    # btrees of ingest 0029, 160 with those two alone since ingest 0036).
    method = models.SmallIntegerField()

    def __str__(self) -> str:
        return f"{self.method}:{self.document_id}"


class HashArrayField(models.Field):
    """A list of signed 64-bit integers: bigint[] on PostgreSQL (GIN-indexable),
    a JSON list in text elsewhere (the embedded SQLite default scans it)."""

    pg_type = "bigint[]"

    def db_type(self, connection: object) -> str:
        return self.pg_type if getattr(connection, "vendor", "") == "postgresql" else "text"

    def from_db_value(self, value: object, expression: object, connection: object) -> object:
        if value is None or isinstance(value, list):
            return value
        if isinstance(value, memoryview | bytes | bytearray):
            return hashes_unpack(value)
        return json.loads(str(value))

    def get_db_prep_value(
        self, value: object, connection: object, prepared: bool = False
    ) -> object:
        if value is None:
            return None
        values = [int(v) for v in value]  # type: ignore[attr-defined]
        if getattr(connection, "vendor", "") == "postgresql":
            return self.pg_value(values)
        return json.dumps(values)

    def pg_value(self, values: list[int]) -> object:
        return values


def hashes_pack(values: Iterable[int]) -> bytes:
    """Signed 64-bit integers as 8 bytes each, in their order: big-endian two's
    complement, what PostgreSQL's `int8send` writes of each (ingest 0037)."""
    signed = list(values)
    return struct.pack(f">{len(signed)}q", *signed)


def hashes_unpack(value: bytes | bytearray | memoryview) -> list[int]:
    """The signed 64-bit integers `hashes_pack` wrote."""
    data = bytes(value)
    if len(data) % 8:
        raise ValueError(f"{len(data)} bytes: not a whole number of 64-bit hashes")
    return list(struct.unpack(f">{len(data) // 8}q", data))


class HashBytesField(HashArrayField):
    """A list of signed 64-bit integers: on PostgreSQL a bytea of 8 bytes a value in the
    list's order (`hashes_pack`; a set of under 16 values takes a 1-byte header and no
    alignment, where a bigint[] takes a 20-byte array header besides its own: ingest
    0037; SQL reads it with `passage_hashes`, `passage_has`, `passage_buckets`), a JSON
    list in text elsewhere (the embedded SQLite default scans it), as HashArrayField."""

    pg_type = "bytea"

    def pg_value(self, values: list[int]) -> object:
        return hashes_pack(values)


class PassageSet(models.Model):
    """The passage index: one row per document and passage method, holding the
    document's passage hashes (ingest/core/passages.py; signed storage of unsigned
    64-bit values; on PostgreSQL 8 bytes each in a bytea since ingest 0037). On
    PostgreSQL a GIN index over their buckets answers "which documents share any of
    these passages" (ingest/passages.py). Derived data: rebuilt from the
    extractions."""

    pk = models.CompositePrimaryKey("method", "document")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, db_index=False)
    # The passage method's number (ingest.passages.METHODS), a smallint like IndexEntry's.
    method = models.SmallIntegerField()
    site_id = models.IntegerField(help_text="The document's site: template counts.")
    fetched_at = models.DateTimeField()
    hashes = HashBytesField()

    def __str__(self) -> str:
        return f"{self.method}:{self.document_id}"


class MinHashSet(models.Model):
    """The MinHash channel's index (ingest/channels/minhash.py): one row per document and
    fingerprint method (the text of its extractor), holding the document's MinHash
    signature of its token shingles and the signature's LSH band keys
    (ingest/core/minhash.py). On PostgreSQL a GIN index over the keys answers "which
    documents share a band"; the signatures estimate the Jaccard similarity. Derived data:
    rebuilt from the extractions."""

    pk = models.CompositePrimaryKey("method", "document")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, db_index=False)
    method = models.SmallIntegerField(help_text="The FingerprintMethod id (as IndexEntry's).")
    fetched_at = models.DateTimeField()
    bands = HashArrayField()
    signature = models.BinaryField(help_text="The MinHash values, 32-bit little-endian.")

    def __str__(self) -> str:
        return f"minhash {self.method}:{self.document_id}"


class PassageTemplate(models.Model):
    """A passage seen on at least PASSAGE_TEMPLATE_DF pages of one site (menus,
    bylines, subscription prompts): not evidence for the passage channel, and shown
    greyed in the pair view."""

    method = models.SmallIntegerField()
    site = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="+")
    hash = models.BigIntegerField()
    df = models.IntegerField(help_text="Pages of the site holding it when it was counted.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["method", "site", "hash"], name="template_once"),
        ]
        indexes = [models.Index(fields=["method", "hash"])]

    def __str__(self) -> str:
        return f"template {self.hash} of site {self.site_id}"


class BoilerplateDrop(models.Model):
    """The lines of a document's main text its site's boilerplate removed before the
    passage channel read it (ingest/core/boilerplate.py), learned from the full-page
    branch of `learned_from` other pages of its registrable domain. Written once per
    learning: a later pass adds a row beside it, and the newest row is the one in force.
    A row with no lines says the document was read whole (too few pages of its site, or
    nothing recurring), so a redelivered search reads it the same way."""

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    extractor_version = models.CharField(max_length=64)
    version = models.CharField(max_length=32, help_text="The boilerplate rule's version.")
    domain = models.CharField(max_length=255, help_text="The registrable domain learned from.")
    learned_from = models.IntegerField(help_text="Other pages of the domain read.")
    lines = models.JSONField(default=list, blank=True, help_text="The main-text lines dropped.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["document", "extractor_version"])]

    def __str__(self) -> str:
        return f"boilerplate of {self.document_id}: {len(self.lines)} lines"


class PassageCommon(models.Model):
    """A passage seen on at least PASSAGE_COMMON_DF pages of any site (stock phrases,
    wire credits, share prompts): a stock phrase, dropped by the index lookup without
    reading its long posting list. PostgreSQL only (ingest/passages.py); the scan
    elsewhere counts it on the fly."""

    pk = models.CompositePrimaryKey("method", "hash")
    method = models.SmallIntegerField()
    hash = models.BigIntegerField()
    df = models.IntegerField(help_text="Pages holding it when it was counted (counting stops).")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"common passage {self.hash}"


class DoNotMatch(models.Model):
    """Two documents a person said are not the same: never paired into a group again."""

    a = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    b = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    source = models.CharField(max_length=16, help_text="label, split or import")
    reason = models.TextField(blank=True)
    actor = models.CharField(max_length=150, help_text="person:<username> or rule:<name>")
    created_at = models.DateTimeField(auto_now_add=True)
    # A restore of the split that wrote it (or a person's merge) revokes it: the row stays.
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.CharField(max_length=150, blank=True, help_text="decision:<id>")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["a", "b"],
                condition=models.Q(revoked_at__isnull=True),
                name="do_not_match_once_active",
            ),
            models.CheckConstraint(condition=models.Q(a__lt=models.F("b")), name="dnm_a_lt_b"),
        ]

    def __str__(self) -> str:
        return f"{self.a_id} ≠ {self.b_id}"


class CandidatePair(NumberedModel):
    """A nomination, never a decision: labels decide.

    Keyed (a, method, b), led by the distribution column (dedup_site/distribution.py).
    The database numbers `id` beside the key (NumberedModel): the pair's address, in
    the desk's URLs, in the coordinator's relations to it (`PairRelation`) and as the
    queue's last order column. It is indexed, not unique: one sequence numbers it."""

    # Indexes: the key (a, method, b) answers a document's pairs as `a` (with or
    # without the method: a few methods at most) and leads with the distribution column;
    # `b`'s own index answers them as `b` (the method filtered on its few rows); the
    # (method, below_floor, distance) index answers a method's pairs; `id`'s answers a
    # pair by its address and the watermarks of the pairs read since.
    pk = models.CompositePrimaryKey("a", "method", "b")
    id = numbered_field()
    method = models.ForeignKey(FingerprintMethod, on_delete=models.PROTECT, db_index=False)
    a = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="pairs_as_a", db_index=False
    )
    # The second document lives on another shard once pairs are distributed by `a`
    # (dedup_site/distribution.py): no database foreign key, the writer (pair building,
    # which read both documents' fingerprints) checks it; documents are never deleted.
    b = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="pairs_as_b", db_constraint=False
    )
    doc_type = models.CharField(max_length=16, choices=DocType.choices)
    distance = models.SmallIntegerField(help_text="Hamming distance, main-text branch.")
    full_distance = models.SmallIntegerField(null=True, help_text="Full-page branch.")
    band = models.SmallIntegerField(null=True, help_text="The index band that nominated it.")
    exact = models.BooleanField(help_text="Same normalized main text (SHA-256).")
    ratio = RealField()
    token_set_ratio = RealField()
    length_ratio = RealField()
    containment = RealField()
    numbers_differ = models.BooleanField()
    ids_differ = models.BooleanField()
    title_differs = models.BooleanField()
    # The numbers and ids each side holds (numbers_a, numbers_b, ids_a, ids_b); empty
    # (None) when both sides hold none.
    guard_details = models.JSONField(null=True, default=None, blank=True)
    # Channels that nominated the pair (bits of ingest/core/channels.py); the scores
    # below are computed for every pair, whatever nominated it. Its evidence
    # (``evidence``) is built from these columns; ``evidence_kept`` holds only what they
    # cannot give (``evidence_to_keep``).
    channels = models.SmallIntegerField(
        default=0, help_text="Bits: 1 exact, 2 SimHash, 4 passages, 8 semantic."
    )
    evidence_kept = models.JSONField(
        null=True,
        default=None,
        blank=True,
        db_column="evidence",
        help_text="The evidence entries the pair's columns cannot give (a pair stored "
        "before 0028 keeps all of its evidence here).",
    )
    a_in_b = RealField(default=0.0, help_text="Share of A's passages found in B.")
    b_in_a = RealField(default=0.0, help_text="Share of B's passages found in A.")
    shared_passages = models.IntegerField(default=0)
    cosine = models.FloatField(
        null=True,
        help_text="Cosine of the two main-text embeddings (semantic channel); empty "
        "while either side has no vector.",
    )
    below_floor = models.BooleanField(
        help_text="Similarity under the doc type's floor: stored, kept out of the queue "
        "and out of groups."
    )
    uncertainty = models.SmallIntegerField(
        default=0,
        help_text="|distance - the doc type's threshold|, plus a constant for a pair the "
        "semantic channel alone nominated (ingest.core.channels.queue_rank): the review "
        "queue's first order; derived, kept up to date by the queue (reviews.queue_tally).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(a__lt=models.F("b")), name="pair_a_lt_b"),
        ]
        indexes = [
            models.Index(fields=["id"], name="pair_id"),
            models.Index(fields=["method", "below_floor", "distance"]),
            # The review queue's order over the pairs it can serve: page 1 reads the
            # first rows of this index.
            models.Index(
                fields=["uncertainty", "-numbers_differ", "-ids_differ", "-distance", "id"],
                condition=models.Q(below_floor=False, exact=False),
                name="pair_queue_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.a_id}~{self.b_id} d={self.distance}"

    def guard_flags(self) -> list[str]:
        names = ["numbers_differ", "ids_differ", "title_differs"]
        return [name for name in names if getattr(self, name)]

    @property
    def channel_names(self) -> list[str]:
        return channel_names(self.channels)

    @property
    def semantic_only(self) -> bool:
        """Nominated by the semantic channel alone: last in the queue, never merged by
        the rule unless SEMANTIC_AUTO_MERGE names the doc type."""
        return semantic_only(self.channels)

    @property
    def passage_containment(self) -> float:
        return max(self.a_in_b, self.b_in_a)

    @property
    def evidence(self) -> dict[str, Any]:
        """Every channel's evidence entry (ingest.channels.registry.evidence's shape):
        built from the columns, with what only pair building knew (``evidence_kept``)
        laid over it."""
        out = self.evidence_of_columns()
        for name, entry in (self.evidence_kept or {}).items():
            built = out.get(name)
            out[name] = (
                {**built, **entry} if isinstance(built, dict) and isinstance(entry, dict) else entry
            )
        return out

    def evidence_of_columns(self) -> dict[str, Any]:
        """The evidence entries the pair's columns give: from the shares as stored
        (single precision), so a pair being built and the same pair read back give the
        same entries (what differs from the channels' own is kept, evidence_to_keep)."""
        a_in_b, b_in_a = to_single(self.a_in_b), to_single(self.b_in_a)
        out: dict[str, Any] = {
            "exact": {"same_text": self.exact},
            "simhash": {"distance": self.distance, "band": self.band},
            "passages": {
                "shared": self.shared_passages,
                "passages_a": _passages_of(self.shared_passages, a_in_b),
                "passages_b": _passages_of(self.shared_passages, b_in_a),
                "a_in_b": round(a_in_b, 4),
                "b_in_a": round(b_in_a, 4),
                "template_a": 0,
                "template_b": 0,
            },
        }
        if self.cosine is not None:
            out["semantic"] = {"cosine": self.cosine}
        return out

    def evidence_to_keep(self, evidence: dict[str, Any]) -> dict[str, Any] | None:
        """What of this evidence (registry.evidence's, for this pair's columns) the
        columns do not give: the entries and values they build otherwise (None:
        nothing). The passages' runs are not kept: the pair view finds them again in
        the two texts (reviews.pair.passage_panel)."""
        built = self.evidence_of_columns()
        out: dict[str, Any] = {}
        for name, entry in evidence.items():
            mine = built.get(name)
            if isinstance(entry, dict) and isinstance(mine, dict):
                rest = {
                    k: v
                    for k, v in entry.items()
                    if k not in EVIDENCE_NOT_KEPT and (k not in mine or mine[k] != v)
                }
                if rest:
                    out[name] = rest
            elif entry != mine:
                out[name] = entry
        return out or None


# Evidence the pair view computes again from the two texts: not stored.
EVIDENCE_NOT_KEPT = frozenset({"runs"})


def _passages_of(shared: int, share: float) -> int:
    """A side's passage count from the shared count and the share of it they are (0
    when nothing is shared: the count is kept in ``evidence_kept`` then)."""
    return round(shared / share) if shared and share else 0


class PairRelation(models.ForeignKey):
    """A relation from a coordinator's table to a candidate pair, by the pair's `id`
    (`to_field="id"`, `db_constraint=False`).

    A pair is keyed (a, method, b), with the distribution column (dedup_site/
    distribution.py): Django relates no model to a composite key (fields.E347), and
    the pair's address is its `id`, which the database numbers beside the key
    (`numbered_field`). That column is not unique in the schema: a unique index on `id`
    alone could not be kept once pairs are distributed, and one sequence numbers it, so
    two pairs never share an id. Django asks a relation's `to_field` to be unique
    (fields.E311); this class answers that check for a target the database numbers, and
    only without a database constraint (PostgreSQL keeps no foreign key to a column that
    is not unique, Citus none from a coordinator's table to a distributed one). Any
    other target is checked as Django checks it. Pairs are never deleted (a permanent
    table, dedup_site/permanence.py): `on_delete` is Django's alone, as for any relation
    without a database constraint."""

    def _check_unique_target(self) -> list[Any]:
        constrained = self.db_constraint  # type: ignore[attr-defined]
        if not constrained and _database_numbered(self.target_field):
            return []
        return super()._check_unique_target()  # type: ignore[misc]


class PairOneToOne(PairRelation, models.OneToOneField):
    """`PairRelation` as a one-to-one relation (a pair's review state)."""


def _database_numbered(field: object) -> bool:
    return isinstance(getattr(field, "db_default", None), DatabaseNumbered)


def group_flagged() -> models.Q:
    """Groups flagged by their own columns: for review, chained, oversized or exact. The
    review statuses short of "labeled" and "all" hold these (and the disputed ones:
    reviews.queue.group_queue). The condition of the partial index `group_flagged`,
    which the queue's filter must imply for PostgreSQL to read the index."""
    return (
        models.Q(needs_review=True)
        | models.Q(chained=True)
        | models.Q(oversized=True)
        | models.Q(kind="exact")  # CandidateGroup.Kind.EXACT
    )


class CandidateGroup(models.Model):
    class Kind(models.TextChoices):
        EXACT = "exact"
        NEAR = "near"

    # The (method, dissolved, size) index leads with the method.
    method = models.ForeignKey(FingerprintMethod, on_delete=models.PROTECT, db_index=False)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    rule = models.CharField(max_length=64)
    rule_params = models.JSONField(default=dict)
    # A document on another shard once groups are distributed by their id: no database
    # foreign key; the grouping and the desk choose it among the group's members.
    representative = models.ForeignKey(
        Document, on_delete=models.PROTECT, null=True, related_name="+", db_constraint=False
    )
    representative_reason = models.TextField(blank=True)
    representative_by = models.CharField(max_length=150, blank=True)
    representative_locked = models.BooleanField(
        default=False, help_text="Chosen by a person: the workers never change it."
    )
    size = models.IntegerField(default=0)
    diameter = models.SmallIntegerField(null=True)
    chained = models.BooleanField(default=False)
    oversized = models.BooleanField(default=False)
    needs_review = models.BooleanField(default=False)
    review_note = models.TextField(blank=True)
    dissolved = models.BooleanField(default=False)
    version = models.IntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["method", "dissolved", "size"]),
            # The groups a review status short of "labeled" and "all" can hold
            # (reviews.queue.group_queue): the queue reads these, a few in a hundred,
            # not every group (at 10M a scan of them all was most of the queue page).
            models.Index(
                fields=["id"],
                name="group_flagged",
                condition=models.Q(dissolved=False) & group_flagged(),
            ),
        ]

    def __str__(self) -> str:
        return f"group {self.pk} ({self.size})"


class GroupMember(models.Model):
    """A document in a group. Keyed by (group, document), with the group's rows (its
    shard once memberships are distributed by group, dedup_site/distribution.py).

    One group per method and document is a rule about the document, kept by the
    writers rather than by a unique index across shards: every writer of memberships
    holds the method's grouping lock (`memberships_lock`) while it reads and writes a
    document's membership (ingest.candidates.groups_update, a person's merge)."""

    pk = models.CompositePrimaryKey("group", "document")
    group = models.ForeignKey(
        CandidateGroup, on_delete=models.PROTECT, related_name="members", db_index=False
    )
    # A document on another shard: no database foreign key (documents are never
    # deleted); the index answers a document's group.
    document = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="memberships", db_constraint=False
    )
    method = models.ForeignKey(FingerprintMethod, on_delete=models.PROTECT, db_index=False)
    added_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.document_id} in {self.group_id}"


# --- metrics, drift and method upgrades ---------------------------------------------------


class DailyRollup(models.Model):
    """One day's figures for one site (site = None: every site). Recomputing a day
    replaces its row with the same values (reviews.operations.rollups.rollup_day).

    A document counts on the day it was fetched (the crawl's date); pairs, groups,
    labels and decisions on the day they were made."""

    day = models.DateField()
    site = models.ForeignKey(
        Site, on_delete=models.PROTECT, null=True, blank=True, related_name="rollups"
    )
    documents = models.IntegerField(default=0)
    status_ok = models.IntegerField(default=0)
    status_empty = models.IntegerField(default=0)
    status_too_short = models.IntegerField(default=0)
    status_blocked = models.IntegerField(default=0)
    status_error = models.IntegerField(default=0)
    tokens_p10 = models.FloatField(null=True, blank=True)
    tokens_p50 = models.FloatField(null=True, blank=True)
    tokens_p90 = models.FloatField(null=True, blank=True)
    exact_hits = models.IntegerField(default=0, help_text="Exact pairs made that day.")
    near_candidates = models.IntegerField(
        default=0, help_text="Near pairs (not exact, above the floor) made that day."
    )
    labels = models.IntegerField(default=0)
    merges = models.IntegerField(default=0)
    restores = models.IntegerField(default=0)
    largest_new_group = models.IntegerField(
        default=0, help_text="Size at the day's end of the largest group created or grown."
    )
    largest_new_group_id = models.BigIntegerField(null=True, blank=True)
    samples = models.JSONField(
        default=dict, blank=True, help_text="A few document ids per status, and the group's."
    )
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["-day", "site"]
        constraints = [
            models.UniqueConstraint(
                fields=["day", "site"],
                condition=models.Q(site__isnull=False),
                name="rollup_once_per_site_day",
            ),
            models.UniqueConstraint(
                fields=["day"], condition=models.Q(site__isnull=True), name="rollup_once_per_day"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.site_id or 'all'}"


class TaskRun(models.Model):
    """How long a pipeline task took (Celery task_prerun/task_postrun), for /metrics."""

    task = models.CharField(max_length=200)
    duration = models.FloatField(help_text="Seconds.")
    state = models.CharField(max_length=16, blank=True)
    finished_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["task", "finished_at"])]

    def __str__(self) -> str:
        return f"{self.task} {self.duration:.3f}s"


class RefingerprintRun(models.Model):
    """Background work over every document for one method, in id order: fingerprints
    from the stored extractions, or (after a switch) candidates. The cursor is saved with
    each chunk's results, so a restart resumes where the last chunk committed."""

    class Kind(models.TextChoices):
        FINGERPRINTS = "fingerprints"
        CANDIDATES = "candidates"

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    method = models.ForeignKey(FingerprintMethod, on_delete=models.PROTECT, related_name="runs")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.FINGERPRINTS)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.RUNNING)
    total = models.IntegerField(default=0)
    done = models.IntegerField(default=0)
    last_document_id = models.BigIntegerField(default=0)
    message = models.TextField(blank=True)
    started_by = models.CharField(max_length=150, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["method", "kind"],
                condition=models.Q(status="running"),
                name="one_running_run_per_method_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.method_id}: {self.done}/{self.total}"

    @property
    def percent(self) -> float:
        if self.status == self.Status.DONE:
            return 100.0
        return 100.0 * self.done / self.total if self.total else 0.0


class MethodSwitch(models.Model):
    """The record of a method change: a switch of the active method, or a retirement.
    Append-only in practice: the services only ever create rows."""

    class Action(models.TextChoices):
        SWITCH = "switch"
        RETIRE = "retire"

    action = models.CharField(max_length=8, choices=Action.choices)
    from_method = models.ForeignKey(
        FingerprintMethod, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    to_method = models.ForeignKey(FingerprintMethod, on_delete=models.PROTECT, related_name="+")
    actor = models.CharField(max_length=150, help_text="person:<username> or rule:<name>")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.from_method_id} → {self.to_method_id} by {self.actor}"


class SitePriorityChange(models.Model):
    """The record of a site priority change (the priority decides suggested
    representatives): who, from what, to what, why. Append-only: the model refuses edits
    and deletes, and on PostgreSQL a trigger refuses UPDATE, DELETE and TRUNCATE."""

    site = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="priority_changes")
    priority_before = models.IntegerField()
    priority_after = models.IntegerField()
    actor = models.CharField(max_length=150, help_text="person:<username> or rule:<name>")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.site_id}: {self.priority_before} → {self.priority_after} by {self.actor}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValueError("site priority changes are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ValueError("site priority changes are append-only")


def int_array(values: Iterable[int]) -> str:
    """A PostgreSQL integer array literal (``{1,-2,3}``) for a ``%s::bigint[]`` (or
    ``int4[]``) parameter. psycopg adapts a Python list element by element in Python:
    for the hundreds of hashes a passage lookup sends, that cost a worker more CPU than
    the lookup cost the server; a string is sent as it is."""
    return "{" + ",".join(map(str, values)) + "}"


class AnyOf(models.Lookup):
    """``field__any_of=ids``: what ``__in`` answers, for integer columns and foreign
    keys, with the ids sent as one array on PostgreSQL (``= ANY(%s::bigint[])``, see
    `int_array`) instead of one placeholder each: for the hundreds of ids a candidate
    search asks about, preparing, adapting and splitting every placeholder cost the
    worker more than the query cost the server. Elsewhere it is ``IN``."""

    lookup_name = "any_of"
    prepare_rhs = False

    def get_prep_lookup(self) -> list[int]:
        return [int(v) for v in self.rhs]

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[Any, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        ids: list[int] = self.rhs
        if connection.vendor == "postgresql":
            return f"{lhs} = ANY(%s::bigint[])", (*lhs_params, int_array(ids))
        if not ids:
            return "1 = 0", tuple(lhs_params)
        return f"{lhs} IN ({', '.join(['%s'] * len(ids))})", (*lhs_params, *ids)


models.IntegerField.register_lookup(AnyOf)
models.ForeignKey.register_lookup(AnyOf)


GROUPING_LOCK = 7331


def memberships_lock(method_id: int) -> None:
    """Hold the method's grouping lock to the end of the transaction (PostgreSQL
    advisory lock; SQLite has one writer at a time). Every writer of a method's
    memberships takes it before it reads the memberships it changes: that is what keeps
    one group per method and document (GroupMember), with no unique index across
    shards."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [GROUPING_LOCK, method_id])


def snapshots_lock(digests: Iterable[str]) -> None:
    """Hold the lock of each of these raw digests to the end of the transaction
    (PostgreSQL advisory locks, taken in one order, so that two ingests of overlapping
    chunks wait for each other and never deadlock; SQLite has one writer at a time).
    The ingest takes them before it looks its snapshots up and stores the new ones:
    what keeps one document per snapshot."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended("
            "'document snapshot ' || d, 0) AS k FROM unnest(%s::text[]) AS d ORDER BY k) AS s",
            [sorted(digests)],
        )


def rows_insert[M: models.Model](objs: list[M]) -> None:
    """Insert new rows of one model in one statement and set their primary keys.
    PostgreSQL: each column's values travel as one array parameter bound on the server.
    Django's client-side binding writes every value into the statement as a literal the
    server then parses again, which for long texts costs both sides more than the
    insert (a page's two extracted texts, 17 KB: 0.29 → 0.18 CPU-ms per row in the
    worker, 0.61 → 0.43 ms per row in all). Elsewhere bulk_create."""
    if not objs:
        return
    model = type(objs[0])
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(objs)
        return
    # The database numbers a serial key, or a serial column beside a natural key
    # (NumberedModel): left out of the INSERT, it comes back; the rest is written.
    numbered = [
        f
        for f in model._meta.concrete_fields
        if f.db_returning and all(_unnumbered(getattr(o, f.attname)) for o in objs)
    ]
    fields = [f for f in model._meta.concrete_fields if f not in numbered]
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} ("
        + ", ".join(quote(str(f.column)) for f in fields)
        + ") SELECT * FROM unnest("
        + ", ".join(f"%s::{f.db_type(connection)}[]" for f in fields)
        + ")"
        + (f" RETURNING {', '.join(quote(str(f.column)) for f in numbered)}" if numbered else "")
    )
    params = [[f.get_db_prep_save(f.pre_save(o, True), connection) for o in objs] for f in fields]
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params)
        # PostgreSQL returns the rows in the order the SELECT gave them (what Django's
        # own bulk_create relies on too).
        returned = cursor.fetchall() if numbered else [()] * len(objs)
        for obj, values in zip(objs, returned, strict=True):
            for f, value in zip(numbered, values, strict=True):
                setattr(obj, f.attname, value)
            obj._state.adding = False


def rows_update[M: models.Model](objs: list[M], names: list[str]) -> None:
    """Write these fields of these saved rows, all of one model. PostgreSQL: one UPDATE
    over arrays (Django's bulk_update builds a CASE per field and row: in a worker that
    costs more than the writes it saves); elsewhere a save each."""
    if not objs:
        return
    model = type(objs[0])
    if connection.vendor != "postgresql":
        for obj in objs:
            obj.save(update_fields=names)
        return
    pk = model._meta.pk
    assert pk is not None
    fields = [model._meta.get_field(name) for name in names]
    concrete = [f for f in fields if isinstance(f, models.Field)]
    assert len(concrete) == len(fields), "only concrete fields can be written"
    columns = [str(f.column) for f in concrete]
    sql = (
        f"UPDATE {model._meta.db_table} AS t SET "
        + ", ".join(f"{c} = v.{c}" for c in columns)
        + f" FROM unnest(%s::{pk.db_type(connection)}[], "
        + ", ".join(f"%s::{f.db_type(connection)}[]" for f in concrete)
        + ") AS v(pk, "
        + ", ".join(columns)
        + f") WHERE t.{pk.column} = v.pk"
    )
    params = [[o.pk for o in objs], *([getattr(o, f.attname) for o in objs] for f in concrete)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
