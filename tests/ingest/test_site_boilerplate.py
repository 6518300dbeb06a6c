"""A site's template spread over its hosts, and its footer kept in main texts: templates
are counted per registrable domain, boilerplate lines learned from the full-page branch
of the site's other pages are dropped from what the passage channel and a pair's SimHash
check read, the drop is recorded, and the pair view shows it (escaped)."""

from datetime import UTC, datetime

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from ingest import candidates, sites
from ingest.core.methods import fingerprint_text
from ingest.core.simhash import hamming
from ingest.models import BoilerplateDrop, CandidatePair, Document
from reviews.pair.passage_panel import pair_passages
from tests import factories

pytestmark = pytest.mark.django_db

# A sidebar of the site (what one newspaper's two hosts both show beside every story,
# and the extractor keeps in the main text): ~300 words in blocks.
SIDEBAR = [" ".join(factories.article_text(900 + i, words=30).split()) for i in range(10)]
MENU = "News | Sport | Culture | Travel | Opinion | Subscribe to the newsletter"
FOOTER = [
    "Browse | Feedback | About us | Contact us | Advertise with us | Privacy policy",
    "<b>(c) 2008 Earthtimes.example</b> — all rights reserved; reproduction forbidden",
    " ".join(factories.article_text(950, words=120).split()),
]


def _page(host: str, path: str, article: str, blocks: list[str]) -> Document:
    main = "\n".join([article, *blocks])
    full = "\n".join([MENU, article, *blocks])
    value = fingerprint_text(django_settings.ACTIVE_METHOD, main).simhash
    return factories.indexed_document(
        url=f"https://{host}/{path}", text=main, simhash=value or 0, site=host, full_text=full
    )


def _article(seed: int, words: int) -> str:
    return " ".join(factories.article_text(seed, words=words).split())


def _pair(a: Document, b: Document) -> CandidatePair | None:
    x, y = sorted((a.pk, b.pk))
    return CandidatePair.objects.filter(a_id=x, b_id=y).first()


def test_a_template_spread_over_two_hosts_pairs_nothing() -> None:
    hosts = ["entertainment.timesexample.co.uk", "www.timesexample.co.uk"]
    docs = [_page(hosts[i % 2], f"story-{i}", _article(100 + i, 120), SIDEBAR) for i in range(4)]
    candidates.candidates_find(document_ids=[d.pk for d in docs])
    assert not CandidatePair.objects.exists()
    # One site: the template is counted on the domain's first site, for both hosts.
    counted = sites.template_sites(d.site_id for d in docs)
    assert len(set(counted.values())) == 1
    drop = BoilerplateDrop.objects.get(document=docs[0])
    assert drop.domain == "timesexample.co.uk" and drop.learned_from == 3
    assert drop.lines == SIDEBAR


def test_the_same_story_on_both_hosts_is_still_paired() -> None:
    hosts = ["entertainment.timesexample.co.uk", "www.timesexample.co.uk"]
    others = [_page(hosts[i % 2], f"other-{i}", _article(200 + i, 120), SIDEBAR) for i in range(4)]
    story = _article(300, 150)
    a, b = _page(hosts[0], "story", story, SIDEBAR), _page(hosts[1], "story", story, SIDEBAR)
    candidates.candidates_find(document_ids=[d.pk for d in [*others, a, b]])
    pair = _pair(a, b)
    assert pair is not None and pair.exact
    assert CandidatePair.objects.count() == 1


def test_two_short_articles_carrying_the_site_footer_are_not_paired() -> None:
    host = "www.earthtimes.example"
    history = [_page(host, f"old-{i}", _article(400 + i, 200), FOOTER) for i in range(3)]
    candidates.candidates_find(document_ids=[d.pk for d in history])
    a = _page(host, "a", _article(500, 40), FOOTER)
    b = _page(host, "b", _article(501, 40), FOOTER)
    # The footer is most of both texts: their fingerprints are within the threshold.
    fa, fb = (
        fingerprint_text(
            django_settings.ACTIVE_METHOD, "\n".join([_article(s, 40), *FOOTER])
        ).simhash
        for s in (500, 501)
    )
    assert fa is not None and fb is not None and hamming(fa, fb) <= 3
    candidates.candidates_find(document_ids=[a.pk, b.pk])
    assert _pair(a, b) is None
    assert BoilerplateDrop.objects.get(document=b).lines == FOOTER


def test_a_site_with_too_few_pages_is_read_whole_and_keeps_its_record() -> None:
    host = "young.example.org"
    first = _page(host, "a", _article(600, 120), FOOTER)
    candidates.candidates_find(document_ids=[first.pk])
    drop = BoilerplateDrop.objects.get(document=first)
    assert drop.lines == [] and drop.learned_from == 0
    for i in range(4):
        _page(host, f"later-{i}", _article(610 + i, 120), FOOTER)
    # Searched again (a redelivered task), it reads the text it read the first time.
    candidates.candidates_find(document_ids=[first.pk])
    assert BoilerplateDrop.objects.filter(document=first).count() == 1


def test_the_rule_off_reads_main_texts_whole_and_counts_templates_per_host(settings) -> None:
    settings.SITE_BOILERPLATE = False
    hosts = ["entertainment.timesexample.co.uk", "www.timesexample.co.uk"]
    docs = [_page(hosts[i % 2], f"story-{i}", _article(100 + i, 120), SIDEBAR) for i in range(4)]
    candidates.candidates_find(document_ids=[d.pk for d in docs])
    assert CandidatePair.objects.exists()  # what the sidebar did before the rule
    assert not BoilerplateDrop.objects.exists()


def test_the_pair_view_shows_the_dropped_lines_as_boilerplate(client, editor) -> None:
    host = "www.earthtimes.example"
    history = [_page(host, f"old-{i}", _article(700 + i, 200), FOOTER) for i in range(3)]
    story = _article(710, 200)
    a = _page(host, "story", story, FOOTER)
    b = _page("copy.example.net", "story", story, [])
    candidates.candidates_find(document_ids=[d.pk for d in [*history, a, b]])
    pair = _pair(a, b)
    assert pair is not None
    view = pair_passages(pair=pair)
    assert view.boilerplate_a == FOOTER and view.boilerplate_b == []
    client.force_login(editor)
    # The pair page fetches its passage panel once shown.
    url = reverse("reviews:pair-panel", args=[pair.id, "passages"])
    assert url in client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    body = client.get(url, headers={"HX-Request": "true"}).content.decode()
    panel = body.split('id="boilerplate-panel"')[1]
    assert "Browse | Feedback | About us" in panel
    assert "&lt;b&gt;(c) 2008 Earthtimes.example&lt;/b&gt;" in panel  # escaped
    assert "<b>(c) 2008" not in body


def test_a_page_recrawled_at_one_url_keeps_its_article() -> None:
    """Three fetches of one URL are one page of its site: the article's lines are on
    them, not on three other pages, so they are not taken for the site's lines."""
    host = "www.recrawled.example"
    others = [_page(host, f"other-{i}", _article(700 + i, 120), FOOTER) for i in range(4)]
    story = _article(710, 150)
    fetches = [
        factories.indexed_document(
            url=f"https://{host}/story",
            text="\n".join([story, *FOOTER]),
            simhash=0,
            site=host,
            full_text="\n".join([MENU, story, *FOOTER]),
            fetched_at=datetime(2026, 5, day, tzinfo=UTC),
        )
        for day in (1, 8, 15, 22)
    ]
    candidates.candidates_find(document_ids=[d.pk for d in [*others, *fetches]])
    drop = BoilerplateDrop.objects.get(document=fetches[-1])
    assert drop.lines == FOOTER
    assert drop.learned_from == len(others)


def test_list_items_and_table_rows_of_the_site_s_blocks_are_dropped() -> None:
    """The main text writes a sidebar list as "- item" lines and a layout table as
    "| cell |" rows; the full-page branch has each block plain."""
    host = "www.listed.example"
    items = [" ".join(factories.article_text(800 + i, words=12).split()) for i in range(6)]
    blocks = [*items, "Contact the desk", "All rights reserved 2026"]
    marked = [f"- {x}" for x in items] + ["| Contact the desk All rights reserved 2026 |"]
    docs = []
    for i in range(5):
        article = _article(820 + i, 120)
        docs.append(
            factories.indexed_document(
                url=f"https://{host}/p{i}",
                text="\n".join([article, *marked]),
                simhash=0,
                site=host,
                full_text="\n".join([MENU, article, *blocks]),
            )
        )
    candidates.candidates_find(document_ids=[d.pk for d in docs])
    assert BoilerplateDrop.objects.get(document=docs[-1]).lines == marked
