"""Doc type from what the page declares (ingest/core/doctype.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from ingest.core.doctype import NONE, infer_doc_type_html, thread_markup


def _page(head: str = "", body: str = "<p>Some text.</p>") -> str:
    return f"<html><head><title>t</title>{head}</head><body>{body}</body></html>"


def _ld(data: str) -> str:
    return f'<script type="application/ld+json">{data}</script>'


@pytest.mark.parametrize(
    ("head", "body", "doc_type", "rule"),
    [
        (_ld('{"@type": "NewsArticle"}'), "", "article", "schema.org"),
        (
            _ld('{"@graph": [{"@type": "WebPage"}, {"@type": "BlogPosting"}]}'),
            "",
            "article",
            "schema.org",
        ),
        (_ld('[{"@type": "BreadcrumbList"}, {"@type": ["Product"]}]'), "", "product", "schema.org"),
        (_ld('{"@type": "CollectionPage"}'), "", "listing", "schema.org"),
        (
            _ld('{"@type": "QAPage", "mainEntity": {"@type": "Question"}}'),
            "",
            "forum",
            "schema.org",
        ),
        (_ld('{"@type": "DiscussionForumPosting"}'), "", "forum", "schema.org"),
        (
            "",
            '<div itemscope itemtype="https://schema.org/Product">'
            '<span itemprop="price">9</span></div>',
            "product",
            "schema.org",
        ),
        ('<meta property="og:type" content="article">', "", "article", "og:type"),
        ('<meta property="og:type" content="product">', "", "product", "og:type"),
        ('<meta property="product:price:amount" content="10">', "", "product", "price"),
        ("", '<span itemprop="price">1</span>', "product", "price"),
        ("", '<span itemprop="price">1</span>' * 4, "listing", "price"),
        (
            '<meta property="article:published_time" content="2026-01-01">',
            "",
            "article",
            "article-meta",
        ),
        ('<meta name="generator" content="Discuz! X3.4">', "", "forum", "forum-generator"),
        ("", "<article>a</article>" * 6, "listing", "list-structure"),
        ("", '<h3><a href="/x">Headline</a></h3>' * 9, "listing", "list-structure"),
        ('<meta property="og:type" content="website">', "", "other", "none"),
    ],
)
def test_declarations(head: str, body: str, doc_type: str, rule: str) -> None:
    guess = infer_doc_type_html(_page(head, body or "<p>x</p>"))
    assert (guess.doc_type, guess.rule) == (doc_type, rule)
    assert guess.describe()


def test_a_product_page_with_an_article_ld_is_a_product() -> None:
    """Forum beats product beats article beats list types, whatever their order."""
    head = _ld('{"@type": "Article"}') + _ld('{"@type": "Product"}') + _ld('{"@type": "ItemList"}')
    assert infer_doc_type_html(_page(head)).doc_type == "product"


def test_three_top_level_products_are_a_listing() -> None:
    head = _ld('[{"@type": "Product"}, {"@type": "Product"}, {"@type": "Product"}]')
    guess = infer_doc_type_html(_page(head))
    assert guess.doc_type == "listing"
    assert "3 top-level Product" in guess.evidence


def test_nested_microdata_items_do_not_count() -> None:
    body = '<div itemscope itemtype="https://schema.org/Article"><div itemscope itemtype="https://schema.org/Product"></div></div>'
    assert infer_doc_type_html(_page(body=body)).doc_type == "article"


def test_schema_beats_og_type() -> None:
    head = '<meta property="og:type" content="article">' + _ld('{"@type": "Product"}')
    assert infer_doc_type_html(_page(head)).doc_type == "product"


def test_broken_json_ld_is_ignored() -> None:
    head = _ld('{"@type": "Product"') + '<meta property="og:type" content="article">'
    assert infer_doc_type_html(_page(head)).doc_type == "article"


def test_nothing_declared_is_other() -> None:
    assert infer_doc_type_html(_page()) == NONE
    assert infer_doc_type_html("") == NONE


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_never_raises(junk: str) -> None:
    guess = infer_doc_type_html(_page(_ld(junk), junk))
    assert guess.doc_type in ("article", "product", "listing", "forum", "other")


# --- an article with related links; a thread in the page's markup -----------------------

_BODY_PARAGRAPH = " ".join(["The launch went ahead at dawn after two delays."] * 8)  # 72 words
_RELATED = "".join(f'<h3><a href="/story/{i}">Related story {i}</a></h3>' for i in range(12))


def test_an_article_body_beside_linked_headings_is_not_a_listing() -> None:
    body = "<div>" + f"<p>{_BODY_PARAGRAPH}</p>" * 5 + "</div>" + _RELATED
    assert infer_doc_type_html(_page(body=body)) == NONE
    # Teasers under each linked heading are a listing still.
    teasers = "".join(
        f'<h3><a href="/story/{i}">Story {i}</a></h3><p>{_BODY_PARAGRAPH}</p>' for i in range(9)
    )
    guess = infer_doc_type_html(_page(body=f"<div>{teasers}</div>"))
    assert (guess.doc_type, guess.rule) == ("listing", "list-structure")
    # A story followed by its discussion in post blocks stays a listing (of posts).
    discussed = body + "".join(f'<div class="comment"><p>Reply {i}.</p></div>' for i in range(4))
    guess = infer_doc_type_html(_page(body=discussed))
    assert (guess.doc_type, guess.rule) == ("listing", "list-structure")


def _root(html: str) -> object:
    return etree.fromstring(html.encode(), etree.HTMLParser(encoding="utf-8"))


def _posts(n: int, cls: str = "post-box") -> str:
    return "".join(
        f'<div class="{cls}"><span class="author">user{i}</span><p>Reply {i}.</p></div>'
        for i in range(n)
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://forum.example.org/topic/catering-tips",
        "https://example.com/threads/best-hosts.123/",
        "https://example.com/showthread.php?t=1930933",
        "https://bbs.example.org/viewtopic.php?id=309936",
        "https://example.com/community/thread-222085.html",
        "https://example.com/r/science/comments/1rku5x9/some_title/",
    ],
)
def test_post_blocks_at_a_thread_url_are_a_thread(url: str) -> None:
    assert "4 post blocks" in thread_markup(_root(_page(body=_posts(4))), url)


@pytest.mark.parametrize(
    ("body", "url"),
    [
        (_posts(3), "https://forum.example.org/topic/x"),  # a question and two replies
        (_posts(12), "https://example.com/blog/"),  # a listing of blog posts
        (_posts(12, "card"), "https://example.com/threads/x"),  # blocks that are not posts
        (_posts(12, "newsletter-post"), "https://example.com/t/x"),  # first word not a post
        ("<p>Some text.</p>", "https://example.com/threads/x"),
        (_posts(12, "comment"), "https://blog.example.org/2018/09/open-thread/"),  # a slug word
    ],
)
def test_what_is_not_a_thread(body: str, url: str) -> None:
    assert thread_markup(_root(_page(body=body)), url) == ""


def test_forum_software_and_schema_org_posts_are_a_thread() -> None:
    generator = _page(head='<meta name="generator" content="Discourse 3.4.0">')
    assert thread_markup(_root(generator)).startswith("generator=Discourse")
    item = '<div itemscope itemtype="https://schema.org/DiscussionForumPosting"><p>x</p></div>'
    nested = _page(body=f'<div itemscope itemtype="https://schema.org/WebPage">{item * 2}</div>')
    assert thread_markup(_root(nested)) == "2 schema.org post or answer items"
    assert thread_markup(_root(_page(body=item))) == ""
    # Readers' comments under a blog post are marked up as Comment items: not a thread.
    comments = '<div itemscope itemtype="https://schema.org/Comment"><p>x</p></div>' * 6
    assert thread_markup(_root(_page(body=comments))) == ""
    assert thread_markup(None) == ""


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.text(max_size=60))
def test_thread_markup_never_raises(junk: str, url: str) -> None:
    assert isinstance(thread_markup(_root(_page(junk, junk) + " "), url), str)
