from django.urls import path

from ingest import views

app_name = "ingest"

urlpatterns = [
    path("", views.document_list, name="document-list"),
    path("documents/<int:document_id>/", views.document_detail, name="document-detail"),
    path("batches/", views.batch_list, name="batch-list"),
]
