from django.urls import path

from reviews import decision_views, desk_views, ops_views, views

app_name = "reviews"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("next", views.queue_next, name="queue-next"),
    path("done", views.queue_done, name="queue-done"),
    path("pairs/<int:pair_id>/", views.pair_detail, name="pair-detail"),
    path("pairs/<int:pair_id>/label", views.pair_label, name="pair-label"),
    path("pairs/<int:pair_id>/panels/<slug:name>", views.pair_panel, name="pair-panel"),
    path("pairs/progress", views.pair_progress, name="pair-progress"),
    path("labels/undo", views.label_undo, name="label-undo"),
    path("pairs/<int:pair_id>/adjudicate", desk_views.pair_adjudicate, name="pair-adjudicate"),
    path("agreement/", desk_views.agreement_page, name="agreement"),
    path("crawl-quality/", desk_views.crawl_quality, name="crawl-quality"),
    path("labels/import", desk_views.labels_import, name="labels-import"),
    path("documents/<int:document_id>/source", views.document_source, name="document-source"),
    path("groups/<int:group_id>/", views.group_detail, name="group-detail"),
    path("groups/<int:group_id>/split", views.group_split, name="group-split"),
    path(
        "groups/<int:group_id>/representative",
        views.group_representative,
        name="group-representative",
    ),
    path("preferences/blind", views.preference_blind, name="preference-blind"),
    path("preferences/locale", views.preference_locale, name="preference-locale"),
    # labels out
    path("calibration/", views.calibration, name="calibration"),
    path("search", views.search, name="search"),
    path("calibration/section", views.calibration_section, name="calibration-section"),
    path("calibration/sample/", views.calibration_sample, name="calibration-sample"),
    path(
        "calibration/sample/new",
        views.calibration_sample_create,
        name="calibration-sample-create",
    ),
    path("labels/export", views.labels_export, name="labels-export"),
    # merge decisions, audit and recovery
    path("groups/<int:group_id>/merge", decision_views.group_merge, name="group-merge"),
    path("groups/<int:group_id>/accept", decision_views.group_accept, name="group-accept"),
    path(
        "decisions/<int:decision_id>/restore",
        decision_views.decision_restore,
        name="decision-restore",
    ),
    path("approvals/", decision_views.approvals, name="approvals"),
    path("audit/", decision_views.audit_page, name="audit"),
    # metrics, drift and method upgrades
    path("metrics/", ops_views.metrics_page, name="metrics"),
    path("methods/", ops_views.methods_page, name="methods"),
    path("methods/compute", ops_views.method_compute, name="method-compute"),
    path("methods/switch", ops_views.method_switch, name="method-switch"),
    path("methods/retire", ops_views.method_retire, name="method-retire"),
]
