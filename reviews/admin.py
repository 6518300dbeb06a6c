"""Audit: labels and decisions are read-only here too (both are append-only)."""

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import reverse
from django.utils.html import format_html

from ingest.models import Document, Site
from reviews.decisions import audit
from reviews.models import Claim, Decision, Label, ReviewerPreference


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "pair",
        "editor",
        "verdict",
        "reason_code",
        "region",
        "purpose",
        "retraction",
        "superseded_by",
        "created_at",
    ]
    list_filter = ["verdict", "purpose", "region", "retraction"]
    search_fields = ["reason", "editor__username"]


class ActorKindFilter(admin.SimpleListFilter):
    title = "actor"
    parameter_name = "actor"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        actors = Decision.objects.order_by("actor").values_list("actor", flat=True).distinct()
        return [("person:", "any person"), ("rule:", "any rule")] + [(a, a) for a in actors[:100]]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Decision]) -> QuerySet[Decision]:
        value = self.value()
        if not value:
            return queryset
        if value in ("person:", "rule:"):
            return queryset.filter(actor__startswith=value)
        return queryset.filter(actor=value)


class MethodFilter(admin.SimpleListFilter):
    title = "method"
    parameter_name = "method"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        keys = Decision.objects.order_by("method_key").values_list("method_key", flat=True)
        return [(k, k) for k in keys.distinct()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Decision]) -> QuerySet[Decision]:
        return queryset.filter(method_key=self.value()) if self.value() else queryset


class SiteFilter(admin.SimpleListFilter):
    """Decisions on groups holding a page of the site (members now or as recorded)."""

    title = "site"
    parameter_name = "site"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(h, h) for h in Site.objects.order_by("host").values_list("host", flat=True)[:200]]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Decision]) -> QuerySet[Decision]:
        if not self.value():
            return queryset
        ids = set(
            Document.objects.filter(site__host=self.value()).values_list("pk", flat=True)[:5000]
        )
        return audit.decisions_touching(queryset, ids)


@admin.action(description="Export the selected decisions as CSV")
def export_csv(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Decision]
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        audit.decisions_csv(queryset, bom=True), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="decisions.csv"'
    return response


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    """The decision log for auditors: read-only for everyone, superusers included."""

    list_display = [
        "id",
        "created_at",
        "action",
        "actor",
        "group_history",
        "new_group",
        "reverts",
        "documents",
        "method_key",
        "reason_code",
        "reason",
        "distance",
        "group_version",
    ]
    list_filter = [
        "action",
        ActorKindFilter,
        ("created_at", admin.DateFieldListFilter),
        MethodFilter,
        SiteFilter,
    ]
    search_fields = ["actor", "reason", "reason_code"]
    search_help_text = "A document id or a URL (fragment), an actor, or words of the reason."
    date_hierarchy = "created_at"
    actions = [export_csv]
    list_select_related = ["reverts"]

    @admin.display(description="group")
    def group_history(self, obj: Decision) -> str:
        url = reverse("reviews:group-detail", args=[obj.group_id])
        return format_html('<a href="{}">group {} history</a>', url, obj.group_id)

    @admin.display(description="documents")
    def documents(self, obj: Decision) -> str:
        return ", ".join(map(str, obj.document_ids or []))

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Decision], search_term: str
    ) -> tuple[QuerySet[Decision], bool]:
        found, distinct = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if not term:
            return found, distinct
        touching = audit.decisions_touching(queryset, audit.documents_matching(term))
        either = Q(pk__in=found.values("pk")) | Q(pk__in=touching.values("pk"))
        return queryset.filter(either), distinct


@admin.register(Claim)
class ClaimAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "kind",
        "pair",
        "group",
        "editor",
        "claimed_at",
        "expires_at",
        "released_at",
    ]


@admin.register(ReviewerPreference)
class ReviewerPreferenceAdmin(admin.ModelAdmin):
    list_display = ["user", "blind_mode"]
