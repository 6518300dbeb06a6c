from django.contrib import admin

from ingest.models import BatchError, CrawlBatch, Document, Extraction, Fingerprint, Site


@admin.register(Site)
class SiteAdmin(admin.ModelAdmin):
    list_display = ["host", "priority", "default_doc_type"]
    search_fields = ["host"]


class BatchErrorInline(admin.TabularInline):
    model = BatchError
    extra = 0
    can_delete = False
    readonly_fields = ["kind", "offset", "url", "message", "stored"]


@admin.register(CrawlBatch)
class CrawlBatchAdmin(admin.ModelAdmin):
    list_display = ["id", "format", "source", "status", "records_read", "stored", "error_count"]
    inlines = [BatchErrorInline]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["id", "url", "site", "doc_type", "http_status", "fetched_at"]
    list_filter = ["doc_type", "site"]
    search_fields = ["url", "raw_sha256"]
    readonly_fields = [f.name for f in Document._meta.fields]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Extraction)
class ExtractionAdmin(admin.ModelAdmin):
    list_display = ["document", "extractor_version", "status", "language", "main_tokens"]
    list_filter = ["status", "language", "extractor_version"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Fingerprint)
class FingerprintAdmin(admin.ModelAdmin):
    list_display = ["document", "method", "branch", "status", "hex", "token_count"]
    list_filter = ["method", "branch", "status"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
