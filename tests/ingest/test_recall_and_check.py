import io
import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ingest import candidates
from ingest.channels import minhash
from ingest.models import IndexEntry, MinHashSet
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


VOCABULARY = [f"word{i}" for i in range(3000)]


def _minhash_corpus(settings) -> None:
    """Families of near copies (a few words edited), with the MinHash channel on; SimHash
    values far apart so that only the MinHash channel's index matters here."""
    settings.MINHASH_CHANNEL = True
    rng = random.Random(5)
    docs = []
    for family in range(8):
        words = [rng.choice(VOCABULARY) for _ in range(160)]
        for member in range(3):
            edited = list(words)
            for _ in range(member * 2):
                edited[rng.randrange(len(edited))] = rng.choice(VOCABULARY)
            docs.append(
                factories.indexed_document(
                    url=f"https://m{family}.example.com/{member}",
                    text=" ".join(edited),
                    simhash=rng.getrandbits(64),
                )
            )
    candidates.candidates_find(document_ids=[d.pk for d in docs])


def test_the_recall_check_checks_the_minhash_index_against_brute_force(settings) -> None:
    _minhash_corpus(settings)
    assert MinHashSet.objects.count() == 24
    out = io.StringIO()
    call_command("candidates", "--recall-check", stdout=out)
    text = out.getvalue()
    by_brute = int(
        text.split("minhash: 24 indexed, 24 queries")[1].split("brute force:")[1].split()[0]
    )
    returned = int(text.split("returned by a lookup:")[1].split()[0])
    assert by_brute >= 16  # each family's copies, a few words apart
    assert returned == by_brute
    assert "minhash recall: 1.000" in text


def test_the_recall_check_fails_when_the_minhash_index_misses_pairs(settings, monkeypatch) -> None:
    _minhash_corpus(settings)
    # An index that answers nothing: brute force still finds the families' pairs.
    monkeypatch.setattr(minhash, "query", lambda **kwargs: [])
    out = io.StringIO()
    with pytest.raises(CommandError, match="minhash recall 0.000"):
        call_command("candidates", "--recall-check", stdout=out)
    assert "minhash recall: 0.000" in out.getvalue()


def test_the_recall_check_says_when_the_minhash_index_is_empty() -> None:
    _corpus(n=10)
    out = io.StringIO()
    call_command("candidates", "--recall-check", stdout=out)
    assert "minhash: the MinHash index is empty (MINHASH_CHANNEL off)" in out.getvalue()


def test_check_api_answers_exact_near_new_and_insufficient(client, api_token) -> None:
    from ingest.core.extract import extract
    from ingest.core.simhash import to_signed64

    html = factories.article_html("T", TEXT)
    main = extract(html).main_text
    doc = factories.indexed_document(url="https://c.example.com/1", text=main, simhash=0)
    # Give the stored document its real fingerprint, then index it.
    real = factories.simhash_of(main, "simhash64-words-sha256-v1")
    doc.fingerprints.all().update(simhash=to_signed64(real))
    candidates.candidates_find(document_ids=[doc.pk])
    auth = {"Authorization": f"Bearer {api_token}"}

    def ask(**payload: object) -> dict:
        r = client.post("/api/v1/check", payload, content_type="application/json", headers=auth)
        assert r.status_code == 200, r.content
        return r.json()

    exact = ask(text=main)
    assert exact["verdict"] == "exact"
    assert exact["matches"][0]["document_id"] == doc.pk
    assert exact["simhash"] == f"{real:016x}"

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
