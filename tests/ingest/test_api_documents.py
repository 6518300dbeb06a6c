import pytest

from ingest.models import Document, Fingerprint

pytestmark = pytest.mark.django_db

URL = "/api/v1/documents"
HTML = (
    "<html><head><title>API page</title></head><body><article>"
    + "".join(
        f"<p>Paragraph {i} about harbours, lanterns and copper willows in the meadow.</p>"
        for i in range(12)
    )
    + "</article></body></html>"
)


@pytest.fixture
def post(client, committed):
    def run(token: str, payload: object):
        with committed():
            return client.post(
                URL,
                payload,
                content_type="application/json",
                headers={"Authorization": f"Bearer {token}"},
            )

    return run


def test_one_document_is_stored_and_fingerprinted(post, api_token: str) -> None:
    r = post(api_token, {"url": "https://api.example.com/1", "html": HTML})
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["stored"] == 1
    document = Document.objects.get(pk=body["document_ids"][0])
    assert document.url == "https://api.example.com/1"
    assert Fingerprint.objects.filter(document=document, branch="main", status="ok").exists()


def test_a_list_is_accepted_and_a_repeat_adds_nothing(post, api_token: str) -> None:
    docs = [
        {
            "url": f"https://api.example.com/{i}",
            "html": HTML,
            "fetched_at": "2026-05-01T10:00:00Z",
            "status": 200,
            "headers": {"Content-Type": "text/html"},
            "doc_type": "article",
        }
        for i in range(3)
    ]
    assert post(api_token, docs).json()["stored"] == 3
    again = post(api_token, docs).json()
    assert (again["stored"], again["already_stored"]) == (0, 3)
    assert Document.objects.count() == 3


def test_invalid_payload_is_a_400_naming_the_field(post, api_token: str) -> None:
    r = post(api_token, {"url": "ftp://nope", "html": HTML})
    assert r.status_code == 400
    assert any(e["field"].endswith("url") for e in r.json()["errors"])
    r = post(api_token, {"url": "https://api.example.com/x"})
    assert r.status_code == 400
    assert any(e["field"].endswith("html") for e in r.json()["errors"])
    assert Document.objects.count() == 0


def test_without_a_valid_token_nothing_is_stored(client, post) -> None:
    r = post("wrong", {"url": "https://api.example.com/1", "html": HTML})
    assert r.status_code == 401
    r = client.post(
        URL, {"url": "https://api.example.com/1", "html": HTML}, content_type="application/json"
    )
    assert r.status_code == 401
    assert Document.objects.count() == 0


def test_the_openapi_schema_describes_the_endpoint(client, api_token: str) -> None:
    r = client.get("/api/v1/openapi.json", headers={"Authorization": f"Bearer {api_token}"})
    assert r.status_code == 200
    schema = r.json()
    assert "/api/v1/documents" in schema["paths"]
    assert "post" in schema["paths"]["/api/v1/documents"]
