"""Small requests that used to answer 500 or store nonsense: each is a 400 naming the
field (or the parameter) and the reason, and nothing is stored."""

import pytest

from ingest.models import Document
from ingest.services import methods_ensure
from tests import factories

pytestmark = pytest.mark.django_db

HTML = (
    "<html><body><article><p>"
    + "harbour lantern copper willow " * 20
    + "</p></article></body></html>"
)


@pytest.fixture
def reader_token(db) -> str:
    return factories.api_token_create(user=factories.user_create(username="aud", role="auditor"))


def _post(client, token: str, url: str, payload: object):
    return client.post(
        url, payload, content_type="application/json", headers={"Authorization": f"Bearer {token}"}
    )


def _field_named(r, field: str) -> bool:
    return any(e["field"].split(".")[-1] == field for e in r.json()["errors"])


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"text": "alpha beta", "url": "https://e.com/a\u0000b"}, "url"),
        ({"text": "alpha \u0000 beta"}, "text"),
        ({"html": "<p>alpha \u0000 beta</p>"}, "html"),
        ({"text": "alpha beta", "title": "a\u0000"}, "title"),
        ({"text": "alpha beta", "title": "a\ud800"}, "title"),
    ],
)
def test_the_check_refuses_nul_and_lone_surrogates_naming_the_field(
    client, api_token: str, payload: dict[str, str], field: str
) -> None:
    r = _post(client, api_token, "/api/v1/check", payload)
    assert r.status_code == 400, r.content
    assert _field_named(r, field), r.json()


UNFETCHABLE = [
    pytest.param("http://", "no host", id="no-host"),
    pytest.param("http:///path", "no host", id="empty-host"),
    pytest.param("http://[::1/x", "IPv6", id="broken-ipv6"),
    pytest.param("http://example.com:99999/", "out of range", id="port-99999"),
    pytest.param("http://example.com:0/", "port 0", id="port-0"),
]


@pytest.mark.parametrize(("url", "reason"), UNFETCHABLE)
def test_a_url_no_crawler_could_fetch_is_refused_with_the_reason(
    client, api_token: str, url: str, reason: str
) -> None:
    r = _post(client, api_token, "/api/v1/documents", {"url": url, "html": HTML})
    assert r.status_code == 400, r.content
    assert _field_named(r, "url")
    assert reason in r.content.decode()
    assert Document.objects.count() == 0
    r = _post(
        client,
        api_token,
        "/api/v1/documents",
        {"url": "https://e.com/", "final_url": url, "html": HTML},
    )
    assert r.status_code == 400 and _field_named(r, "final_url")
    r = _post(client, api_token, "/api/v1/check", {"text": "alpha beta", "url": url})
    assert r.status_code == 400 and _field_named(r, "url")


@pytest.mark.parametrize(
    "query",
    [
        "limit=99999999999999999999",
        "limit=-1",
        "after=group:99999999999999999999",
        "after=group:%C2%B2",  # a superscript two: a "digit" int() refuses
        "after=nonsense",
    ],
)
def test_canonical_parameters_out_of_bounds_are_a_400(
    client, reader_token: str, query: str
) -> None:
    r = client.get(
        f"/api/v1/canonical?{query}", headers={"Authorization": f"Bearer {reader_token}"}
    )
    assert r.status_code == 400, (r.status_code, r.content[:300])
    name = query.split("=")[0]
    assert _field_named(r, name), r.json()


def test_a_checked_text_over_the_cap_is_a_413_naming_the_limit(client, api_token, settings) -> None:
    settings.CHECK_MAX_TEXT_BYTES = 1000
    r = _post(client, api_token, "/api/v1/check", {"text": "ab " * 400})
    assert r.status_code == 413, r.content
    assert "1000 bytes" in r.json()["detail"]
    assert _post(client, api_token, "/api/v1/check", {"text": "ab " * 300}).status_code == 200


def test_the_default_cap_on_the_checked_text_is_one_megabyte(settings) -> None:
    assert settings.CHECK_MAX_TEXT_BYTES == 1024 * 1024


def test_a_request_body_over_the_limit_is_a_413_before_it_is_read(
    client, api_token, settings
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    payload = {"url": "https://e.com/big", "html": HTML + "x" * 3000}
    r = _post(client, api_token, "/api/v1/documents", payload)
    assert r.status_code == 413
    assert b"2000 bytes" in r.content
    assert Document.objects.count() == 0


def test_past_the_time_budget_the_answer_says_which_channels_were_not_consulted(
    client, api_token, settings
) -> None:
    settings.PASSAGE_CHANNEL = True
    settings.CHECK_TIME_BUDGET_SECONDS = 0
    methods_ensure()  # a stored method: the check goes past its SimHash
    text = "harbour lantern copper willow meadow granite orchard falcon. " * 20
    r = _post(client, api_token, "/api/v1/check", {"text": text})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["not_consulted"] == ["passages", "semantic"]
    assert body["semantic"]["status"] == "skipped"
    assert body["verdict"] in ("new", "near", "exact")  # SimHash and exact text still answer


def test_within_the_time_budget_every_channel_is_consulted(client, api_token, settings) -> None:
    assert settings.CHECK_TIME_BUDGET_SECONDS == 2.0  # the default
    r = _post(client, api_token, "/api/v1/check", {"text": "alpha beta gamma delta " * 10})
    assert r.status_code == 200 and r.json()["not_consulted"] == []
