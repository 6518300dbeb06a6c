from django.urls import path

from reviews import views

app_name = "reviews"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("next", views.queue_next, name="queue-next"),
    path("done", views.queue_done, name="queue-done"),
    path("pairs/<int:pair_id>/", views.pair_detail, name="pair-detail"),
    path("pairs/<int:pair_id>/label", views.pair_label, name="pair-label"),
    path("labels/undo", views.label_undo, name="label-undo"),
    path("documents/<int:document_id>/source", views.document_source, name="document-source"),
    path("groups/<int:group_id>/", views.group_detail, name="group-detail"),
    path("groups/<int:group_id>/split", views.group_split, name="group-split"),
    path(
        "groups/<int:group_id>/representative",
        views.group_representative,
        name="group-representative",
    ),
    path("preferences/blind", views.preference_blind, name="preference-blind"),
]
