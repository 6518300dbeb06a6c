"""Who reads what: a role for documents and batches, /metrics for a scraper only, the
API schema for logged-in users and token holders."""

import pytest
from django.test import Client
from django.urls import reverse

from tests import factories

pytestmark = pytest.mark.django_db

READ_PAGES = ["ingest:document-list", "ingest:batch-list"]


@pytest.mark.parametrize("name", READ_PAGES)
def test_a_user_without_a_role_reads_no_documents_or_batches(client: Client, name: str) -> None:
    client.force_login(factories.user_create(username="nobody"))
    assert client.get(reverse(name)).status_code == 403


def test_a_user_without_a_role_cannot_open_a_document(client: Client) -> None:
    doc = factories.indexed_document(url="https://a.example/1", text="some text", simhash=1)
    client.force_login(factories.user_create(username="nobody"))
    assert client.get(reverse("ingest:document-detail", args=[doc.pk])).status_code == 403


@pytest.mark.parametrize("role", ["editor", "auditor", "admin"])
@pytest.mark.parametrize("name", READ_PAGES)
def test_the_desk_roles_read_documents_and_batches(client: Client, role: str, name: str) -> None:
    client.force_login(factories.user_create(username=role, role=role))
    assert client.get(reverse(name)).status_code == 200


def test_a_crawler_account_reads_no_documents(client: Client) -> None:
    client.force_login(factories.user_create(username="bot", role="crawler"))
    assert client.get(reverse("ingest:document-list")).status_code == 403


def test_anonymous_users_are_sent_to_log_in(client: Client) -> None:
    r = client.get(reverse("ingest:document-list"))
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


# --- /metrics -------------------------------------------------------------------------


def test_metrics_answer_no_one_by_default(client: Client) -> None:
    r = client.get("/metrics")
    assert r.status_code == 401
    assert r["WWW-Authenticate"] == 'Bearer realm="metrics"'


def test_metrics_answer_the_token(client: Client, settings) -> None:
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    r = client.get("/metrics", headers={"Authorization": "Bearer s3cret"})
    assert r.status_code == 200 and b"dedup_documents" in r.content


def test_metrics_answer_an_allowed_network_only(client: Client, settings) -> None:
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8", "192.0.2.7"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.7").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.8").status_code == 401
    # a forwarded-for header does not count: only the connecting address does
    r = client.get("/metrics", REMOTE_ADDR="192.0.2.8", HTTP_X_FORWARDED_FOR="10.1.2.3")
    assert r.status_code == 401


def test_a_logged_in_desk_user_is_not_a_scraper(client: Client) -> None:
    client.force_login(factories.user_create(username="ed", role="admin"))
    assert client.get("/metrics").status_code == 401


# --- the API schema and docs ----------------------------------------------------------

SCHEMA = "/api/v1/openapi.json"
DOCS = "/api/v1/docs"


@pytest.mark.parametrize("url", [SCHEMA, DOCS])
def test_anonymous_users_get_no_schema(client: Client, url: str) -> None:
    r = client.get(url)
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def test_a_logged_in_user_gets_the_schema(client: Client) -> None:
    client.force_login(factories.user_create(username="ed", role="editor"))
    r = client.get(SCHEMA)
    assert r.status_code == 200 and "/api/v1/documents" in r.json()["paths"]


def test_a_token_holder_gets_the_schema(client: Client, api_token: str) -> None:
    assert client.get(SCHEMA, headers={"Authorization": "Bearer nope"}).status_code == 302
    r = client.get(SCHEMA, headers={"Authorization": f"Bearer {api_token}"})
    assert r.status_code == 200


def test_the_schema_can_be_made_public(client: Client, settings) -> None:
    settings.API_DOCS_PUBLIC = True
    assert client.get(SCHEMA).status_code == 200
