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
    assert Fingerprint.objects.filter(document=document, simhash__isnull=False).exists()


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


BAD_DOCUMENTS = [
    pytest.param({"url": "https://api.example.com/\u0000"}, "url", id="nul-in-url"),
    pytest.param(
        {"url": "https://api.example.com/f", "final_url": "https://api.example.com/\u0000"},
        "final_url",
        id="nul-in-final-url",
    ),
    pytest.param(
        {"url": "https://api.example.com/h", "headers": {"X-A": "a\u0000b"}},
        "headers",
        id="nul-in-header",
    ),
    pytest.param(
        {"url": "https://api.example.com/h2", "headers": {"X-\udcff": "b"}},
        "headers",
        id="surrogate-in-header-name",
    ),
    pytest.param({"url": "https://" + "h" * 300 + ".example.com/"}, "url", id="long-host"),
    pytest.param({"url": "https://api.example.com/\ud800"}, "url", id="surrogate-in-url"),
    pytest.param({"url": "https://api.example.com/" + "x" * 3000}, "url", id="url-too-long"),
    pytest.param(
        {"url": "https://api.example.com/s", "html": "<p>\ud800</p>"},
        "html",
        id="surrogate-in-html",
    ),
    pytest.param(
        {"url": "https://api.example.com/y1", "fetched_at": "0001-01-01T00:00:00+05:00"},
        "fetched_at",
        id="before-year-1-in-utc",
    ),
    pytest.param(
        {"url": "https://api.example.com/y2", "fetched_at": "1200-01-01T00:00:00Z"},
        "fetched_at",
        id="year-1200",
    ),
]


@pytest.mark.parametrize(("fields", "field"), BAD_DOCUMENTS)
def test_a_value_that_cannot_be_stored_is_a_400_naming_the_field(
    post, api_token: str, fields: dict[str, object], field: str
) -> None:
    good = {"url": "https://api.example.com/good", "html": HTML}
    r = post(api_token, [good, {"html": HTML, **fields}, good])

    assert r.status_code == 400, r.content
    assert any(e["field"].split(".")[-1] == field for e in r.json()["errors"]), r.json()
    assert Document.objects.count() == 0


@pytest.mark.parametrize(
    "payload",
    [
        {"text": "alpha \ud800 beta"},
        {"html": "<p>alpha \udfff beta</p>"},
        {"text": "alpha beta", "url": "https://e.com/\ud800"},
    ],
)
def test_the_check_api_refuses_a_lone_surrogate_with_a_400(client, api_token, payload) -> None:
    r = client.post(
        "/api/v1/check",
        payload,
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )

    assert r.status_code == 400, r.content
    assert r.json()["errors"]


@pytest.mark.postgres
def test_pages_still_render_after_hostile_documents(post, api_token: str, client, editor) -> None:
    for param in BAD_DOCUMENTS:
        fields = param.values[0]
        assert isinstance(fields, dict)
        post(api_token, {"html": HTML, **fields})
    r = post(api_token, {"url": "https://api.example.com/kept", "html": HTML})
    assert r.status_code == 201
    document = Document.objects.get()

    client.force_login(editor)
    assert client.get("/").status_code == 200
    assert client.get(document.get_absolute_url()).status_code == 200
    assert client.get("/batches/").status_code == 200
