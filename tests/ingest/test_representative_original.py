"""The representative of a copy made across sites is the original: the page the copy
credits, else the first published, else the earlier fetch (the group's reason says
which)."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from ingest.models import Document, Extraction, GroupMember
from tests import factories

pytestmark = pytest.mark.django_db

ARTICLE = factories.article_text(77, words=260)


def _page(url: str, fetched: str, head: str = "", extra: str = "", menu: str = "") -> dict:
    html = factories.article_html("Wire story", ARTICLE + extra, menu=menu or "Home News")
    html = html.replace("</head>", f"{head}</head>")
    return {"url": url, "html": html, "fetched_at": fetched, "doc_type": "article"}


def _ingest(committed, tmp_path: Path, pages: list[dict]) -> None:
    path = tmp_path / "crawl.jsonl"
    path.write_text("\n".join(json.dumps(p, ensure_ascii=False) for p in pages), encoding="utf-8")
    with committed():  # the workers' tasks run once the ingest commits
        call_command("ingest", str(path), "--no-progress", stdout=io.StringIO())


def _group_of(url: str):
    return GroupMember.objects.get(document__url=url).group


def test_the_credited_page_is_the_representative_not_the_newest_copy(
    committed, tmp_path: Path
) -> None:
    original = _page(
        "https://www.news.example.cn/a/1.html",
        "2026-05-01T10:00:00Z",
        head='<meta property="og:site_name" content="新华网">',
    )
    # The repost is the newest snapshot and frames the story with its menu and credit.
    repost = _page(
        "https://portal.example.com/n/9.html",
        "2026-05-03T10:00:00Z",
        extra="\n\n本文来源：新华网 版权归原作者所有",
        menu="Portal Home Finance Tech",
    )
    _ingest(committed, tmp_path, [repost, original])
    said = Extraction.objects.get(document__url=repost["url"]).declared
    assert said["credits"] == ["新华网"]
    group = _group_of(original["url"])
    assert group == _group_of(repost["url"])
    assert group.representative.url == original["url"]
    assert "credits its site" in group.representative_reason


def test_the_first_published_page_is_the_representative(committed, tmp_path: Path) -> None:
    early = _page(
        "https://a.example.org/story",
        "2026-05-01T10:00:00Z",
        head='<meta property="article:published_time" content="2026-04-01T08:00:00+08:00">',
    )
    late = _page(
        "https://b.example.net/story",
        "2026-05-09T10:00:00Z",
        head='<meta property="article:published_time" content="2026-04-02T08:00:00+08:00">',
    )
    _ingest(committed, tmp_path, [late, early])
    group = _group_of(early["url"])
    assert group.representative.url == early["url"]
    assert group.representative_reason.startswith("published first (2026-04-01 00:00 UTC)")
    assert Document.objects.count() == 2
