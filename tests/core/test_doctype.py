"""Doc type from what the page declares (ingest/core/doctype.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.doctype import NONE, infer_doc_type_html


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
