"""Login walls, captcha / access-denied pages and menu-only shells, in English, Chinese and
Vietnamese, ingested beside real-looking articles and their reposts through the whole
pipeline (extraction, fingerprints, candidate search, groups, queue): none of them is a
candidate, in a group or in the queue, they show as a crawl-quality signal, and the
reposts among the articles are still found. Runs on the configured database (SQLite by
default, PostgreSQL with DATABASE_URL)."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from ingest import services
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.readers import read_jsonl
from ingest.models import CandidatePair, Document, Extraction, GroupMember
from reviews.queue.group_queue import queue_groups
from reviews.queue.pair_queue import queue_pairs
from reviews.queue.queue_filters import QueueFilters
from tests import crawl_quality_pages as fixtures

pytestmark = pytest.mark.django_db

NOT_CONTENT = ("login_wall", "block", "shell")


@pytest.fixture(scope="module")
def crawl(django_db_setup, django_db_blocker):
    """The fixture crawl ingested once for the module (committed: the processing runs as
    each chunk commits), flushed at the end."""
    pages = fixtures.pages()
    with django_db_blocker.unblock():
        services.batch_ingest(
            source="crawl-quality.jsonl",
            fmt="jsonl",
            items=read_jsonl(io.BytesIO(fixtures.jsonl(pages))),
        )
        ids = dict(Document.objects.values_list("url", "pk"))
    assert len(ids) == len(pages)
    yield pages, ids
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


def _ids(crawl, kinds: tuple[str, ...]) -> set[int]:
    pages, ids = crawl
    return {ids[p.url] for p in pages if p.kind in kinds}


def test_walls_captchas_and_shells_are_blocked_with_what_they_are(crawl) -> None:
    pages, ids = crawl
    got = {
        e.document_id: (e.status, e.quality)
        for e in Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION)
    }
    expected_quality = {"login_wall": {"login_wall"}, "shell": {"nav_shell"}}
    for page in pages:
        status, quality = got[ids[page.url]]
        if page.kind in NOT_CONTENT:
            assert status == "blocked", (page.kind, page.lang, page.url)
            allowed = expected_quality.get(page.kind, {"bot_challenge", "access_denied"})
            assert quality in allowed, (page.kind, page.lang, quality)
        else:
            assert (status, quality) == ("ok", ""), (page.kind, page.lang, page.url)


def test_walls_captchas_and_shells_are_in_no_pair_and_no_group(crawl) -> None:
    walls = _ids(crawl, NOT_CONTENT)
    assert len(walls) == 3 * (10 + 3 + 10)
    assert not CandidatePair.objects.filter(a_id__in=walls).exists()
    assert not CandidatePair.objects.filter(b_id__in=walls).exists()
    assert not GroupMember.objects.filter(document_id__in=walls).exists()


def test_walls_captchas_and_shells_are_not_in_the_queue(crawl) -> None:
    walls = _ids(crawl, NOT_CONTENT)
    filters = QueueFilters()
    for pair in queue_pairs(filters=filters):
        assert pair.a_id not in walls and pair.b_id not in walls
    for group in queue_groups(filters=filters):
        members = set(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))
        assert not members & walls


def test_the_reposts_among_the_articles_are_still_found(crawl) -> None:
    pages, ids = crawl
    reposts = [p for p in pages if p.kind == "repost"]
    found = {(a, b) for a, b in CandidatePair.objects.values_list("a_id", "b_id")} | {
        (b, a) for a, b in CandidatePair.objects.values_list("a_id", "b_id")
    }
    verbatim = [p for p in reposts if p.url.endswith("/1/repost.html")]
    assert len(verbatim) == 3
    for page in verbatim:  # the same story under another site's template, each language
        pair = (ids[page.of], ids[page.url])
        assert pair in found, page.lang
        assert CandidatePair.objects.get(a_id=min(pair), b_id=max(pair)).exact, (
            f"{page.lang}: same main text is an exact pair"
        )
        groups = {
            g
            for g in GroupMember.objects.filter(document_id__in=pair).values_list(
                "group_id", flat=True
            )
        }
        assert len(groups) == 1, page.lang
    # Nothing else was paired: the two stories of one site are not copies.
    articles = _ids(crawl, ("article", "repost"))
    for a, b in found:
        assert a in articles and b in articles


def test_the_doc_type_is_what_the_page_declares_and_how_is_recorded(crawl) -> None:
    pages, ids = crawl
    docs = Document.objects.in_bulk(list(ids.values()))
    for page in pages:
        doc = docs[ids[page.url]]
        if page.kind == "article":
            assert (doc.doc_type, doc.doc_type_source) == ("article", "page")
            assert doc.doc_type_evidence == "og:type: og:type=article"
        elif page.kind == "repost":
            assert (doc.doc_type, doc.doc_type_source) == ("article", "page")
            assert doc.doc_type_evidence == "schema.org: JSON-LD @type NewsArticle"
        else:
            assert (doc.doc_type, doc.doc_type_source) == ("other", "site")


def test_a_doc_type_given_by_the_crawl_wins_over_the_page(committed) -> None:
    page = next(p for p in fixtures.pages() if p.kind == "article")
    url = "https://typed.example.org/story.html"
    line = json.dumps({"url": url, "html": page.html, "doc_type": "listing"})
    with committed():
        services.batch_ingest(
            source="typed.jsonl", fmt="jsonl", items=read_jsonl(io.BytesIO(line.encode()))
        )
    doc = Document.objects.get(url=url)
    assert (doc.doc_type, doc.doc_type_source) == ("listing", "crawl")


def test_the_metrics_page_says_how_many_login_walls_each_site_serves(client, crawl, editor) -> None:
    client.force_login(editor)
    body = client.get(reverse("reviews:metrics")).content.decode()
    assert "10 login walls on courier.example.com" in body
    assert "10 login walls on xinwen.example.cn" in body
    assert "10 login walls on baomoi.example.vn" in body
    assert "10 navigation-only shells on baomoi.example.vn" in body


def test_the_documents_page_lists_the_login_walls_of_a_kind(client, crawl, editor) -> None:
    client.force_login(editor)
    r = client.get(reverse("ingest:document-list"), {"quality": "login_wall"})
    body = r.content.decode()
    assert "30 documents" in body
    assert "login wall" in body
    assert "/news/2026/03/story-1.html" not in body


def test_the_crawl_quality_page_counts_them_by_site_and_kind(client, crawl, editor) -> None:
    client.force_login(editor)
    body = client.get(reverse("reviews:crawl-quality")).content.decode()
    assert "nav_shell" in body and "login_wall" in body
    assert "xinwen.example.cn" in body
