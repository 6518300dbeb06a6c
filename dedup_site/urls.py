from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from ingest.api import api
from reviews import api as reviews_api  # noqa: F401  (mounts the desk's endpoints)
from reviews.ops_views import prometheus as prometheus_metrics


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for the container health check: the app is up and the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # A page that names no icon (a browser's default request, a crawler) gets the desk's.
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    path("metrics", prometheus_metrics, name="prometheus-metrics"),
    path("", include("ingest.urls")),
    path("review/", include("reviews.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
]
