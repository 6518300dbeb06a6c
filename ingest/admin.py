"""Crawl and derived records are read-only in the admin: documents, extractions,
fingerprints and batches are written by ingest and the workers only. A site's priority
changes through a recorded SitePriorityChange (the "add" form here, or the
`site_priority` command). Extractions and fingerprints are keyed by their document
(a composite primary key, which the admin cannot list): the document's page shows
them."""

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from ingest.models import (
    BatchError,
    CrawlBatch,
    Document,
    Extraction,
    Fingerprint,
    Site,
    SitePriorityChange,
)
from ingest.sites import site_priority_set


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Site)
class SiteAdmin(ReadOnlyAdmin):
    list_display = ["host", "priority", "default_doc_type"]
    search_fields = ["host"]


class SitePriorityChangeForm(forms.ModelForm):
    class Meta:
        model = SitePriorityChange
        fields = ["site", "priority_after", "reason"]
        labels = {"priority_after": "New priority"}


@admin.register(SitePriorityChange)
class SitePriorityChangeAdmin(admin.ModelAdmin):
    """Append-only: a change is added (through the service), never edited or deleted."""

    form = SitePriorityChangeForm
    list_display = ["created_at", "site", "priority_before", "priority_after", "actor", "reason"]
    list_filter = ["site"]
    search_fields = ["site__host", "actor", "reason"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: SitePriorityChange, form: Any, change: bool
    ) -> None:
        recorded = site_priority_set(
            site=form.cleaned_data["site"],
            priority=form.cleaned_data["priority_after"],
            actor=f"person:{request.user.get_username()}",
            reason=form.cleaned_data["reason"],
        )
        obj.pk = recorded.pk
        obj.priority_before = recorded.priority_before
        obj.actor = recorded.actor
        obj.created_at = recorded.created_at
        obj._state.adding = False


class BatchErrorInline(admin.TabularInline):
    model = BatchError
    extra = 0
    can_delete = False
    readonly_fields = ["kind", "offset", "url", "message", "stored"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(CrawlBatch)
class CrawlBatchAdmin(ReadOnlyAdmin):
    list_display = ["id", "format", "source", "status", "records_read", "stored", "error_count"]
    inlines = [BatchErrorInline]


@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ["id", "url", "site", "doc_type", "http_status", "fetched_at"]
    list_filter = ["doc_type", "site"]
    search_fields = ["url"]
    readonly_fields = ["extractions_shown", "fingerprints_shown"]

    @admin.display(description="extractions")
    def extractions_shown(self, document: Document) -> SafeString:
        rows = Extraction.objects.filter(document=document).order_by("extractor_version")
        return _table(
            ("extractor version", "status", "language", "main tokens"),
            [(e.extractor_version, e.status, e.language, e.main_tokens) for e in rows],
        )

    @admin.display(description="fingerprints")
    def fingerprints_shown(self, document: Document) -> SafeString:
        rows = Fingerprint.objects.filter(document=document).select_related("method")
        return _table(
            ("method", "branch", "status", "SimHash", "tokens"),
            [
                (
                    b.method.key,
                    b.branch,
                    b.status,
                    b.hex,
                    "—" if b.token_count is None else b.token_count,
                )
                for f in rows.order_by("method__key")
                for b in f.branches()
            ],
        )

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Document], search_term: str
    ) -> tuple[QuerySet[Document], bool]:
        """The URL as typed, or a raw SHA-256 by its exact value (the digest is stored as
        bytes: its index answers, no pattern scan)."""
        term = search_term.strip().lower()
        if len(term) == 64 and all(c in "0123456789abcdef" for c in term):
            return queryset.filter(raw_sha256=term), False
        return super().get_search_results(request, queryset, search_term)


def _table(head: tuple[str, ...], rows: list[tuple[Any, ...]]) -> SafeString:
    """A small read-only table, every value escaped (crawl data is never marked safe)."""
    cells = "".join("<td>{}</td>" for _ in head)
    return format_html(
        "<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>",
        format_html_join("", "<th>{}</th>", ((h,) for h in head)),
        format_html_join("", "<tr>" + cells + "</tr>", rows),
    )
