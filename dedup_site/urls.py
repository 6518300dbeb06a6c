from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from ingest.api import api
from reviews import api as reviews_api  # noqa: F401  (mounts the desk's endpoints)
from reviews.ops_views import prometheus as prometheus_metrics


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for the container health check: the app is up and the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """The desk's icon, for a page that names none (a browser's default request). The
    address is resolved per request: the manifest storage of a deployment knows it only
    once `collectstatic` has run, after the URLs are imported (`check --deploy`)."""
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # A page that names no icon (a browser's default request, a crawler) gets the desk's.
    path("favicon.ico", favicon),
    path("metrics", prometheus_metrics, name="prometheus-metrics"),
    path("", include("ingest.urls")),
    path("review/", include("reviews.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
]
