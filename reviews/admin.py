"""Audit: labels and decisions are read-only here too (invariants 6 and 7)."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

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


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "action",
        "group",
        "new_group",
        "actor",
        "reason_code",
        "distance",
        "group_version",
        "created_at",
    ]
    list_filter = ["action"]
    search_fields = ["actor", "reason"]


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
