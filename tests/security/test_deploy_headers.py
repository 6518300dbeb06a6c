"""The TLS settings do what they say on a request, and framing is same-origin only for
the crawled-source view."""

import pytest
from django.test import Client

from tests import factories
from tests.factories import reviewed_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def tls(settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    return settings


def test_plain_http_is_redirected_to_https(client: Client, tls) -> None:
    r = client.get("/accounts/login/")
    assert r.status_code == 301 and r["Location"].startswith("https://")


def test_the_health_check_answers_over_plain_http(client: Client, tls) -> None:
    assert client.get("/healthz").status_code == 200


def test_https_through_the_proxy_gets_hsts(client: Client, tls) -> None:
    r = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
    assert r.status_code == 200
    assert r["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"


def test_desk_pages_may_not_be_framed(client: Client) -> None:
    assert client.get("/accounts/login/")["X-Frame-Options"] == "DENY"


def test_the_source_view_may_be_framed_by_the_desk_only(client: Client) -> None:
    doc = reviewed_document(url="https://a.example/1", text="some words here")
    client.force_login(factories.user_create(username="ed", role="editor"))
    r = client.get(f"/review/documents/{doc.pk}/source")
    assert r.status_code == 200
    assert r["X-Frame-Options"] == "SAMEORIGIN"
