"""The desk's roles; defined in dedup_site.roles, which the ingest app uses as well."""

from dedup_site.roles import (
    ADJUDICATOR,
    ADMIN,
    AUDITOR,
    AUDITOR_PERMISSIONS,
    CRAWLER,
    CRAWLER_PERMISSIONS,
    EDITOR,
    EDITOR_PERMISSIONS,
    ROLES,
    can_adjudicate,
    can_admin,
    can_check,
    can_edit,
    can_export_labels,
    can_ingest,
    can_view,
)

__all__ = [
    "ADJUDICATOR",
    "ADMIN",
    "AUDITOR",
    "AUDITOR_PERMISSIONS",
    "CRAWLER",
    "CRAWLER_PERMISSIONS",
    "EDITOR",
    "EDITOR_PERMISSIONS",
    "ROLES",
    "can_adjudicate",
    "can_admin",
    "can_check",
    "can_edit",
    "can_export_labels",
    "can_ingest",
    "can_view",
]
