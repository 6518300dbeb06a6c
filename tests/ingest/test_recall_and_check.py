import io
import random

import pytest
from django.core.management import call_command

from ingest import candidates
from ingest.models import IndexEntry
from tests import factories

pytestmark = pytest.mark.django_db

TEXT = factories.article_text(7, words=150)


def _corpus(n: int = 60, seed: int = 3) -> None:
    """Clusters of near values around a few centres, plus scattered ones."""
    rng = random.Random(seed)
    centres = [rng.getrandbits(64) for _ in range(6)]
    docs = []
    for i in range(n):
        value = rng.choice(centres)
        for _ in range(rng.randint(0, 7)):
            value ^= 1 << rng.randrange(64)
        if i % 5 == 0:
            value = rng.getrandbits(64)
        docs.append(
            factories.indexed_document(
                url=f"https://r.example.com/{i}", text=f"{TEXT} {i}", simhash=value
            )
        )
    candidates.candidates_find(document_ids=[d.pk for d in docs])


@pytest.mark.parametrize("k", [0, 3, 6])
def test_the_recall_check_finds_every_pair_brute_force_finds(k: int) -> None:
    _corpus()
    assert IndexEntry.objects.count() == 60
    out = io.StringIO()
    call_command("candidates", "--recall-check", "-k", str(k), stdout=out)
    text = out.getvalue()
    assert "recall: 1.000" in text
    by_index = int(text.split("found by the index:")[1].split()[0])
    by_brute = int(text.split("found by brute force:")[1].split()[0])
    assert by_index == by_brute
    if k == 6:
        assert by_brute > 0


def test_check_api_answers_exact_near_new_and_insufficient(client, api_token) -> None:
    from ingest.core.extract import extract
    from ingest.core.methods import fingerprint_text
    from ingest.core.simhash import to_signed64

    html = factories.article_html("T", TEXT)
    main = extract(html).main_text
    doc = factories.indexed_document(url="https://c.example.com/1", text=main, simhash=0)
    # Give the stored document its real fingerprint, then index it.
    real = fingerprint_text("simhash64-words-sha256-v1", main)
    doc.fingerprints.filter(branch="main").update(simhash=to_signed64(real.simhash))
    candidates.candidates_find(document_ids=[doc.pk])
    auth = {"Authorization": f"Bearer {api_token}"}

    def ask(**payload: object) -> dict:
        r = client.post("/api/v1/check", payload, content_type="application/json", headers=auth)
        assert r.status_code == 200, r.content
        return r.json()

    exact = ask(text=main)
    assert exact["verdict"] == "exact"
    assert exact["matches"][0]["document_id"] == doc.pk
    assert exact["simhash"] == f"{real.simhash:016x}"

    near = ask(text=main.replace(".", ". Extra words here.", 1))
    assert near["verdict"] in {"near", "new"}
    if near["verdict"] == "near":
        assert near["matches"][0]["distance"] <= near["threshold"]

    assert ask(text=factories.article_text(999, words=150) + " unrelated")["verdict"] == "new"
    assert ask(text="")["verdict"] == "insufficient"
    from_html = ask(html=html)
    assert from_html["verdict"] == "exact"
    assert from_html["extraction_status"] == "ok"


def test_check_api_needs_html_or_text(client, api_token) -> None:
    r = client.post(
        "/api/v1/check",
        {"url": "https://x.example.com"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert r.status_code == 400


def test_check_api_is_in_the_schema(client, api_token) -> None:
    auth = {"Authorization": f"Bearer {api_token}"}
    assert "/api/v1/check" in client.get("/api/v1/openapi.json", headers=auth).json()["paths"]
