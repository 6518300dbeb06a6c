"""Passage-channel pairs at the desk: the pair view's passage panel, the queue's channel
filter and counts, the export's channel columns."""

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from ingest import candidates, passages
from ingest.core.methods import fingerprint_text
from ingest.models import CandidatePair, PassageTemplate
from reviews.labels import exports
from reviews.models import Label
from tests import factories

pytestmark = pytest.mark.django_db

ARTICLE = factories.article_text(501, words=400)
WORDS = ARTICLE.split()


@pytest.fixture(autouse=True)
def _passage_channel_on(settings) -> None:
    settings.PASSAGE_CHANNEL = True


def _doc(path: str, text: str, site: str):
    value = fingerprint_text(django_settings.ACTIVE_METHOD, text).simhash
    assert value is not None
    return factories.indexed_document(
        url=f"https://{site}/{path}", text=text, simhash=value, site=site
    )


@pytest.fixture
def excerpt_pair() -> CandidatePair:
    article = _doc("story", ARTICLE, "wire.example.com")
    excerpt_text = "<script>alert(1)</script> Teaser: " + " ".join(WORDS[100:260])
    excerpt = _doc("teaser", excerpt_text, "portal.example.com")
    candidates.candidates_find(document_ids=[article.pk])
    candidates.candidates_find(document_ids=[excerpt.pk])
    return CandidatePair.objects.get()


def passage_panel(client, pair: CandidatePair) -> str:
    """The pair page's passage panel, fetched as the page fetches it once shown."""
    page = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    url = reverse("reviews:pair-panel", args=[pair.id, "passages"])
    assert f'hx-get="{url}"' in page and f'<a href="{url}">' in page
    r = client.get(url, headers={"HX-Request": "true"})
    assert r.status_code == 200
    return r.content.decode()


def test_the_pair_page_leaves_the_passage_panel_to_its_own_request(
    client, editor, excerpt_pair, monkeypatch
) -> None:
    from reviews.pair import panels as pair_panels

    def refuse(**kwargs: object) -> None:
        raise AssertionError("the page winnowed the texts")

    monkeypatch.setattr(pair_panels, "pair_passages", refuse)
    client.force_login(editor)
    body = client.get(reverse("reviews:pair-detail", args=[excerpt_pair.id])).content.decode()
    assert 'id="passages-panel"' in body and "panel-pending" in body
    assert "B contains" not in body


def test_the_passage_panel_is_a_page_of_its_own_without_javascript(
    client, editor, excerpt_pair
) -> None:
    client.force_login(editor)
    url = reverse("reviews:pair-panel", args=[excerpt_pair.id, "passages"])
    body = client.get(url).content.decode()
    assert "<html" in body
    assert f'href="{reverse("reviews:pair-detail", args=[excerpt_pair.id])}"' in body
    assert f"B contains {excerpt_pair.a_in_b:.0%} of A" in body
    assert "<script>alert" not in body
    fragment = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in fragment and 'id="passages-panel"' in fragment


def test_a_panel_the_page_does_not_defer_is_not_found(client, editor, excerpt_pair) -> None:
    client.force_login(editor)
    for name in ("semantic", "nothing"):
        r = client.get(reverse("reviews:pair-panel", args=[excerpt_pair.id, name]))
        assert r.status_code == 404


def test_the_pair_view_states_containment_and_highlights_both_sides(
    client, editor, excerpt_pair
) -> None:
    client.force_login(editor)
    body = passage_panel(client, excerpt_pair)
    assert 'id="passages-panel"' in body
    assert "A contains 9" in body or "A contains 100%" in body  # A holds nearly all of B
    assert f"B contains {excerpt_pair.a_in_b:.0%} of A" in body
    panel = body.split('id="passages-panel"')[1]
    side_a = panel.split('class="text side-a"')[1].split('class="text side-b"')[0]
    side_b = panel.split('class="text side-b"')[1]
    assert '<mark class="shared" data-run="1">' in side_a
    assert '<mark class="shared" data-run="1">' in side_b
    assert "<script>alert" not in body  # crawled text is escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in panel


def test_template_passages_are_greyed(client, editor, excerpt_pair) -> None:
    from ingest.core import passages as core

    first = core.passages(ARTICLE)[0]  # English: the same hashes under either method
    PassageTemplate.objects.create(
        method=passages.method_for(excerpt_pair.method.key),
        site=excerpt_pair.a.site,
        hash=core.to_signed(first.hash),
        df=50,
    )
    client.force_login(editor)
    body = passage_panel(client, excerpt_pair)
    assert '<span class="template"' in body
    assert "template passages (boilerplate, not counted): 1 in A" in body


def test_the_queue_filters_and_counts_by_channel(client, editor, excerpt_pair) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:queue"), {"channel": "passages"})
    assert r.context["pairs"].paginator.count == 1
    assert r.context["counts"]["channel"]["passages"] == 1
    assert r.context["counts"]["channel"]["simhash"] == 0
    r = client.get(reverse("reviews:queue"), {"channel": "simhash"})
    assert r.context["pairs"].paginator.count == 0


def test_the_export_has_one_column_per_channel(editor, excerpt_pair) -> None:
    Label.objects.create(
        pair=excerpt_pair, editor=editor, verdict="near_duplicate", reason="excerpt"
    )
    rows = list(exports.label_rows())
    assert rows[0]["channel_passages"] == 1
    assert rows[0]["channel_simhash"] == 0 and rows[0]["channel_exact"] == 0
    assert rows[0]["b_in_a"] == excerpt_pair.b_in_a > 0.9
    assert {"channel_exact", "channel_simhash", "channel_passages"} <= set(exports.COLUMNS)
