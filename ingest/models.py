"""Crawl data: nothing here is ever deleted by deduplication (invariant 1)."""

import zlib

from django.db import models
from django.urls import reverse

from ingest.core.simhash import to_hex, to_unsigned64


class DocType(models.TextChoices):
    ARTICLE = "article"
    PRODUCT = "product"
    SHORT = "short"
    LISTING = "listing"
    OTHER = "other"


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

    site = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="documents")
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
    raw_sha256 = models.CharField(max_length=64, db_index=True)
    raw_size = models.IntegerField()
    doc_type = models.CharField(max_length=16, choices=DocType.choices, default=DocType.OTHER)
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
        constraints = [
            models.UniqueConstraint(
                fields=["url", "fetched_at", "raw_sha256"], name="document_snapshot_once"
            ),
        ]
        indexes = [models.Index(fields=["site", "fetched_at"])]

    def __str__(self) -> str:
        return self.url

    def get_absolute_url(self) -> str:
        return reverse("ingest:document-detail", args=[self.pk])


class DocumentBody(models.Model):
    """Raw HTTP payload, zlib-compressed. Never updated, never deleted."""

    document = models.OneToOneField(
        Document, on_delete=models.PROTECT, primary_key=True, related_name="body"
    )
    codec = models.CharField(max_length=8, default="zlib")
    data = models.BinaryField()

    def __str__(self) -> str:
        return f"body of {self.document_id}"

    @staticmethod
    def pack(raw: bytes) -> bytes:
        return zlib.compress(raw, 6)

    def raw(self) -> bytes:
        return zlib.decompress(bytes(self.data))


class Extraction(models.Model):
    class Status(models.TextChoices):
        OK = "ok"
        EMPTY = "empty"
        TOO_SHORT = "too_short"
        BLOCKED = "blocked"
        ERROR = "error"

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="extractions")
    extractor_version = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=Status.choices)
    message = models.TextField(blank=True)
    title = models.TextField(blank=True)
    language = models.CharField(max_length=16, blank=True)
    main_text = models.TextField(blank=True)
    full_text = models.TextField(blank=True)
    main_tokens = models.IntegerField(default=0)
    full_tokens = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "extractor_version"], name="extraction_once_per_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.extractor_version} of {self.document_id}: {self.status}"


class FingerprintMethod(models.Model):
    key = models.CharField(max_length=64, unique=True)
    params = models.JSONField()
    description = models.TextField(blank=True)
    is_active = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class Fingerprint(models.Model):
    class Branch(models.TextChoices):
        MAIN = "main"
        FULL = "full"

    class Status(models.TextChoices):
        OK = "ok"
        INSUFFICIENT = "insufficient_features"

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="fingerprints")
    method = models.ForeignKey(FingerprintMethod, on_delete=models.PROTECT)
    branch = models.CharField(max_length=4, choices=Branch.choices)
    status = models.CharField(max_length=24, choices=Status.choices)
    # Unsigned 64-bit SimHash stored with the same bits as a signed bigint (invariant 9).
    simhash = models.BigIntegerField(null=True)
    text_sha256 = models.CharField(max_length=64)
    token_count = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "method", "branch"], name="fingerprint_once"
            ),
            models.CheckConstraint(
                condition=models.Q(status="ok", simhash__isnull=False)
                | models.Q(status="insufficient_features", simhash__isnull=True),
                name="fingerprint_simhash_iff_ok",
            ),
        ]
        indexes = [models.Index(fields=["method", "branch", "text_sha256"])]

    def __str__(self) -> str:
        return f"{self.method_id}/{self.branch} of {self.document_id}: {self.hex}"

    @property
    def value(self) -> int | None:
        return None if self.simhash is None else to_unsigned64(self.simhash)

    @property
    def hex(self) -> str:
        return "—" if self.simhash is None else to_hex(self.simhash)


class ApiToken(models.Model):
    """A crawler's token for the HTTP API. Only its SHA-256 is stored."""

    name = models.CharField(max_length=100)
    key_sha256 = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="api_tokens")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name
