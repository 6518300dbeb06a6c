"""An API token acts with its user's current state and permissions."""

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from ingest.models import Document
from tests import factories

pytestmark = pytest.mark.django_db

PAGE = {"url": "https://api.example.com/1", "html": "<p>" + "word " * 40 + "</p>"}


def _token(username: str, role: str | None = None) -> tuple[str, User]:
    user = factories.user_create(username=username, role=role)
    return factories.api_token_create(user=user), user


def _post(client: Client, token: str, path: str, payload: object):
    return client.post(
        f"/api/v1/{path}",
        payload,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


def test_a_deactivated_users_token_is_refused_with_401(client: Client) -> None:
    token, user = _token("bot", role="crawler")
    assert _post(client, token, "check", {"text": "alpha beta gamma"}).status_code == 200
    user.is_active = False
    user.save()
    assert _post(client, token, "documents", PAGE).status_code == 401
    assert _post(client, token, "check", {"text": "alpha beta gamma"}).status_code == 401
    assert (
        client.get("/api/v1/canonical", headers={"Authorization": f"Bearer {token}"}).status_code
        == 401
    )
    assert not Document.objects.exists()


@pytest.mark.parametrize("role", [None, "editor", "auditor"])
def test_a_token_without_the_crawler_role_cannot_ingest(client: Client, role: str | None) -> None:
    token, _ = _token("someone", role=role)
    r = _post(client, token, "documents", PAGE)
    assert r.status_code == 403
    assert "crawler" in r.json()["detail"]
    assert not Document.objects.exists()


@pytest.mark.parametrize("role", ["crawler", "admin"])
def test_the_crawler_and_admin_roles_ingest(client: Client, role: str) -> None:
    token, _ = _token("bot", role=role)
    assert _post(client, token, "documents", PAGE).status_code == 201


def test_the_ingest_permission_alone_is_enough(client: Client) -> None:
    token, user = _token("bot")
    user.user_permissions.add(Permission.objects.get(codename="add_document"))
    assert _post(client, token, "documents", PAGE).status_code == 201


def test_a_role_taken_away_takes_the_tokens_right_away(client: Client) -> None:
    token, user = _token("bot", role="crawler")
    assert _post(client, token, "documents", PAGE).status_code == 201
    user.groups.clear()
    assert _post(client, token, "documents", PAGE).status_code == 403


def test_check_needs_the_crawler_role_or_read_access(client: Client) -> None:
    payload = {"text": "alpha beta gamma delta"}
    assert _post(client, _token("nobody")[0], "check", payload).status_code == 403
    assert _post(client, _token("bot", role="crawler")[0], "check", payload).status_code == 200
    assert _post(client, _token("aud", role="auditor")[0], "check", payload).status_code == 200


def test_the_canonical_output_needs_read_access(client: Client) -> None:
    crawler, _ = _token("bot", role="crawler")
    auditor, _ = _token("aud", role="auditor")
    r = client.get("/api/v1/canonical", headers={"Authorization": f"Bearer {crawler}"})
    assert r.status_code == 403
    r = client.get("/api/v1/canonical", headers={"Authorization": f"Bearer {auditor}"})
    assert r.status_code == 200
