"""The MinHash-LSH channel through the channel seam: off by default, its own method key,
its index (ingest.MinHashSet) against brute force, its pairs and evidence, the check
API, the pair panel and the calibration's errors per action."""

import random
from typing import Any

import pytest
from django.urls import reverse

from ingest.channels import minhash, registry
from ingest.core import channels
from ingest.core import minhash as core
from ingest.models import CandidatePair, MinHashSet
from reviews.labels import labelling
from reviews.management.commands.calibrate import calibration_json
from tests import factories

pytestmark = pytest.mark.django_db

# SimHash values 32 bits apart: no SimHash nomination between them.
FAR = [0, (1 << 32) - 1, ((1 << 32) - 1) << 32, 0x5555555555555555, 0x3333333333333333]
VOCABULARY = [f"word{i}" for i in range(3000)]


def _text(rng: random.Random, n: int = 160) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(n))


def _edited(rng: random.Random, text: str, edits: int) -> str:
    words = text.split()
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(VOCABULARY)
    return " ".join(words)


@pytest.fixture
def minhash_on(settings):
    settings.MINHASH_CHANNEL = True
    settings.PASSAGE_CHANNEL = False  # the MinHash channel alone nominates the copies
    return settings


def _main(doc) -> str:
    return doc.extractions.get().main_text


def _doc(n: int, text: str, **kwargs):
    return factories.indexed_document(
        url=f"https://s{n}.example.com/p", text=text, simhash=FAR[n % len(FAR)], **kwargs
    )


def test_the_channel_is_off_by_default_and_changes_nothing(settings) -> None:
    assert settings.MINHASH_CHANNEL is False
    assert registry.get("minhash") not in registry.running()
    settings.PASSAGE_CHANNEL = False
    rng = random.Random(1)
    text = _text(rng)
    a, b = _doc(1, text), _doc(2, _edited(rng, text, 4))
    factories.find(a, b)
    assert not CandidatePair.objects.exists() and not MinHashSet.objects.exists()


def test_a_near_copy_is_a_pair_of_the_minhash_channel_with_its_evidence(minhash_on) -> None:
    rng = random.Random(2)
    text = _text(rng)
    a, b, other = _doc(1, text), _doc(2, _edited(rng, text, 4)), _doc(3, _text(rng))
    factories.find(a, b, other)
    assert MinHashSet.objects.count() == 3
    pair = factories.pair_of(a, b)
    assert pair.channels == channels.MINHASH  # no SimHash, exact or passage nomination
    exact = core.jaccard(core.shingles(_main(a)), core.shingles(_main(b)))
    assert exact >= 0.7
    assert pair.evidence["minhash"]["jaccard"] == round(exact, 4)
    assert CandidatePair.objects.count() == 1  # the unrelated page pairs with nothing
    # Searching again adds nothing (the index rows and the pair exist).
    factories.find(a, b, other)
    assert CandidatePair.objects.count() == 1 and MinHashSet.objects.count() == 3


def test_the_index_finds_what_brute_force_finds(minhash_on) -> None:
    """Recall of the stored band index against brute force: every pair of documents
    sharing a band in memory is found by the index lookup (exact), and the pairs whose
    shingle Jaccard reaches the threshold are nominated (LSH, probabilistic: 32 bands
    of 4 find a pair at J = 0.7 with probability 0.9998)."""
    rng = random.Random(3)
    texts: dict[int, str] = {}
    docs: list[Any] = []
    for _family in range(12):
        base = _text(rng)
        for member in range(4):
            text = base if member == 0 else _edited(rng, base, rng.randint(1, 6))
            doc = _doc(len(docs), text)
            docs.append(doc)
            texts[doc.pk] = text
    factories.find(*docs)
    recall = minhash.recall_check(texts)
    assert recall.pairs >= 40  # the families' near copies
    assert recall.band_recall >= 0.99 and recall.recall >= 0.95
    # The stored index answers as the in-memory bands do (the lookup is exact).
    method_id = MinHashSet.objects.values_list("method", flat=True).first()
    assert method_id is not None
    sigs = minhash.stored(method_id, list(texts))
    assert len(sigs) == len(texts)
    for d, sig in sigs.items():
        found = minhash.query(method_id=method_id, sig=sig, exclude=[d], threshold=0.0)
        brute = {o for o, s in sigs.items() if o != d and set(s.bands()) & set(sig.bands())}
        assert {f.document_id for f in found} == brute
    # Every pair at the threshold by brute force that a lookup returns is stored with the
    # channel's bit, and every pair with the bit is at the threshold (the exact Jaccard
    # decides).
    shingled = {d: core.shingles(t) for d, t in texts.items()}
    ids = sorted(texts)
    exact = {
        (a, b): core.jaccard(shingled[a], shingled[b])
        for i, a in enumerate(ids)
        for b in ids[i + 1 :]
    }
    returned = {
        (a, b)
        for (a, b), j in exact.items()
        if j >= 0.7
        and set(sigs[a].bands()) & set(sigs[b].bands())
        and core.estimate(sigs[a], sigs[b]) >= 0.7 - minhash.MARGIN
    }
    assert len(returned) == recall.found == recall.pairs
    stored = set(
        CandidatePair.objects.filter(
            channels__in=channels.masks_with(channels.MINHASH)
        ).values_list("a_id", "b_id")
    )
    assert returned == stored
    for pair in CandidatePair.objects.filter(channels__in=channels.masks_with(channels.MINHASH)):
        assert pair.evidence["minhash"]["jaccard"] == round(exact[(pair.a_id, pair.b_id)], 4)


def test_the_check_api_reports_the_minhash_channel(minhash_on, client, api_token) -> None:
    rng = random.Random(4)
    text = _text(rng)
    stored = _doc(1, text)
    factories.find(stored)
    checked = _edited(rng, text, 3)
    r = client.post(
        "/api/v1/check",
        {"text": checked, "doc_type": "article"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert r.status_code == 200, r.content
    answer = r.json()
    [match] = answer["matches"]
    assert match["document_id"] == stored.pk and "minhash" in match["channels"]
    assert answer["verdict"] == "near" and "minhash" in answer["channels"]
    # The same text stored: pair building nominates it by the same channels (one rule).
    copy = _doc(2, checked)
    factories.find(copy)
    assert channels.names(factories.pair_of(stored, copy).channels) == match["channels"]


def test_the_pair_page_shows_the_minhash_panel(minhash_on, client, editor) -> None:
    rng = random.Random(5)
    text = _text(rng)
    a, b = _doc(1, text), _doc(2, _edited(rng, text, 3))
    factories.find(a, b)
    pair = factories.pair_of(a, b)
    client.force_login(editor)
    page = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert 'id="minhash-panel"' in page
    assert f"{pair.evidence['minhash']['jaccard']:.2f}" in page
    # Off: a pair the channel made still shows its evidence; another pair no panel.
    minhash_on.MINHASH_CHANNEL = False
    page = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert 'id="minhash-panel"' in page
    minhash_on.PASSAGE_CHANNEL = True
    c, d = _doc(3, text + " tail words here"), _doc(4, text + " other words there")
    factories.find(c, d)
    other = factories.pair_of(c, d)
    assert "minhash" not in other.evidence
    page = client.get(reverse("reviews:pair-detail", args=[other.id])).content.decode()
    assert 'id="minhash-panel"' not in page and 'id="passages-panel"' in page


def test_calibration_sweeps_the_jaccard_beside_the_other_scores(minhash_on, client, editor) -> None:
    rng = random.Random(6)
    text = _text(rng)
    a, b, c = _doc(1, text), _doc(2, _edited(rng, text, 1)), _doc(3, _edited(rng, text, 4))
    factories.find(a, b, c)
    for x, y, verdict in ((a, b, "duplicate"), (a, c, "distinct")):
        labelling.label_record(
            pair=factories.pair_of(x, y),
            editor=editor,
            verdict=verdict,
            reason_code="other",
            reason="r",
            region="body",
        )
    payload = calibration_json()
    scores = [a["score"] for r in payload["reports"] for a in r["actions"]]
    assert "minhash_jaccard" in scores
    client.force_login(editor)
    html = client.get(reverse("reviews:calibration"), {"sections": "all"}).content.decode()
    assert "Jaccard similarity, token 5-shingles" in html
