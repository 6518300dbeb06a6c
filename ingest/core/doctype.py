"""Doc type of a page from what the page declares, rules ``doctype-rules-v1``.

A crawl rarely says what a page is; per-doc-type thresholds need real types. This module
reads the page's own declarations and returns the type together with the rule and the
evidence that decided it (``DocTypeGuess``), so that every inferred type can be traced
and a wrong one corrected at its source. The rules, strongest first:

1. ``schema.org``: the ``@type`` of the top-level JSON-LD nodes (``@graph`` members
   included) and the ``itemtype`` of top-level microdata items. Forum and Q&A types win
   over product types, product over article, article over list types (an article page
   often carries an ``ItemList`` of related stories; a product page a breadcrumb).
   Three or more top-level products or articles make a listing.
2. ``og:type``: ``article`` → article; ``product``, ``og:product`` → product.
3. Price markup: ``product:price:amount`` / ``og:price:amount`` meta, or one or two
   ``itemprop="price"`` elements → product; three or more → listing.
4. Article meta: ``article:published_time`` / ``article:author`` meta, or an
   ``itemprop="articleBody"`` element → article.
5. Forum software: a ``<meta name="generator">`` naming forum software (phpBB, Discourse,
   Discuz!, vBulletin, XenForo, …) → forum.
6. List structure: five or more ``<article>`` elements, or eight or more headings whose
   text is a link → listing; twenty or more elements whose class names a price (a
   product grid) → listing.

Nothing declared: ``other`` under the rule ``none``. Changing a rule means a new
``RULES_VERSION``. Pure: no Django, no I/O; never raises for any page.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lxml import etree

RULES_VERSION = "doctype-rules-v1"

ARTICLE, PRODUCT, LISTING, FORUM, OTHER = "article", "product", "listing", "forum", "other"
DOC_TYPES = (ARTICLE, PRODUCT, LISTING, FORUM, OTHER)

# schema.org types → doc type. Only types that say what the page *is*.
_SCHEMA_TYPES: dict[str, str] = {
    **{
        t: ARTICLE
        for t in (
            "article",
            "newsarticle",
            "blogposting",
            "reportagenewsarticle",
            "analysisnewsarticle",
            "opinionnewsarticle",
            "reviewnewsarticle",
            "backgroundnewsarticle",
            "askpublicnewsarticle",
            "liveblogposting",
            "scholarlyarticle",
            "techarticle",
            "report",
        )
    },
    **{
        t: PRODUCT
        for t in ("product", "productgroup", "productmodel", "individualproduct", "offer", "car")
    },
    **{t: LISTING for t in ("itemlist", "collectionpage", "searchresultspage", "offercatalog")},
    **{t: FORUM for t in ("discussionforumposting", "qapage", "question")},
}
# Priority when a page declares several.
_RANK = {FORUM: 0, PRODUCT: 1, ARTICLE: 2, LISTING: 3}
# Top-level items of one type that make the page a list of them.
_LIST_OF = 3

_OG_TYPES = {
    "article": ARTICLE,
    "news": ARTICLE,
    "product": PRODUCT,
    "og:product": PRODUCT,
    "product.item": PRODUCT,
}
_PRICE_META = ("product:price:amount", "og:price:amount", "product:price")
_ARTICLE_META = ("article:published_time", "article:author", "article:section")
_FORUM_GENERATORS = re.compile(
    r"phpbb|discourse|discuz|vbulletin|xenforo|invision|mybb|simple machines|smf\b|"
    r"flarum|nodebb|punbb|fluxbb|vanilla forums|phpwind",
    re.I,
)
_ARTICLES_FOR_LIST = 5
_LINKED_HEADINGS_FOR_LIST = 8
_PRICE_CLASSES_FOR_LIST = 20
# Headings whose whole text is a link (a list of items, each a link to its page).
_LINKED_HEADINGS = (
    "count(//*[self::h2 or self::h3 or self::h4][a and normalize-space(.)=normalize-space(a)])"
)
_JSON_MAX = 200_000


@dataclass(frozen=True)
class DocTypeGuess:
    doc_type: str  # one of DOC_TYPES
    # "schema.org" | "og:type" | "price" | "article-meta" | "forum-generator" |
    # "list-structure" | "none"
    rule: str
    evidence: str  # what the page said, e.g. "JSON-LD @type NewsArticle"

    def describe(self) -> str:
        return f"{self.rule}: {self.evidence}" if self.evidence else self.rule


NONE = DocTypeGuess(OTHER, "none", "the page declares no type")


def infer_doc_type(root: Any) -> DocTypeGuess:
    """The doc type an lxml document ``root`` declares (``NONE`` for ``None``); read
    before scripts are stripped (JSON-LD lives in ``<script>``)."""
    if root is None:
        return NONE
    try:
        return _infer(root)
    except Exception:  # a hostile page must not stop the extraction
        return NONE


def infer_doc_type_html(html: str) -> DocTypeGuess:
    """``infer_doc_type`` of an HTML text (parsed here; ``extract`` passes its own tree)."""
    if not html.strip():
        return NONE
    parser = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(
            html.encode("utf-8", errors="replace").replace(b"\x00", b""), parser
        )
    except (etree.LxmlError, ValueError):
        return NONE
    return infer_doc_type(root)


def _infer(root: Any) -> DocTypeGuess:
    for rule in (_schema, _og_type, _price, _article_meta, _forum_generator, _list_structure):
        guess = rule(root)
        if guess is not None:
            return guess
    return NONE


def _schema(root: Any) -> DocTypeGuess | None:
    found: list[tuple[str, str, str]] = []  # (doc type, declared type, where)
    for script in root.xpath("//script[@type]"):
        if "ld+json" not in (script.get("type") or "").lower():
            continue
        text = (script.text or "").strip()
        if not text or len(text) > _JSON_MAX:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue
        for node in _top_nodes(data):
            for declared in _types_of(node.get("@type")):
                kind = _SCHEMA_TYPES.get(declared.casefold())
                if kind:
                    found.append((kind, declared, "JSON-LD @type"))
    for item in root.xpath("//*[@itemscope][@itemtype][not(ancestor::*[@itemscope])]"):
        for url in (item.get("itemtype") or "").split():
            declared = url.rstrip("/").rsplit("/", 1)[-1]
            kind = _SCHEMA_TYPES.get(declared.casefold())
            if kind:
                found.append((kind, declared, "microdata itemtype"))
    if not found:
        return None
    counts: dict[str, int] = {}
    for kind, _, _ in found:
        counts[kind] = counts.get(kind, 0) + 1
    for kind in (PRODUCT, ARTICLE):
        if counts.get(kind, 0) >= _LIST_OF and FORUM not in counts:
            declared = next(d for k, d, _ in found if k == kind)
            return DocTypeGuess(LISTING, "schema.org", f"{counts[kind]} top-level {declared} items")
    kind, declared, where = min(found, key=lambda f: _RANK[f[0]])
    return DocTypeGuess(kind, "schema.org", f"{where} {declared}")


def _top_nodes(data: Any) -> Iterator[dict[str, Any]]:
    """The top-level JSON-LD nodes: the object itself, list members, ``@graph`` members
    and the page's ``mainEntity``."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node[:100])
        elif isinstance(node, dict):
            yield node
            graph = node.get("@graph")
            if isinstance(graph, list):
                stack.extend(graph[:100])
            main = node.get("mainEntity")
            if isinstance(main, dict):
                yield main


def _types_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value.rsplit("/", 1)[-1]]
    if isinstance(value, list):
        return [v.rsplit("/", 1)[-1] for v in value if isinstance(v, str)]
    return []


def _meta(root: Any, names: tuple[str, ...]) -> tuple[str, str] | None:
    for meta in root.xpath("//meta[@property or @name]"):
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        if key in names:
            return key, (meta.get("content") or "").strip()
    return None


def _og_type(root: Any) -> DocTypeGuess | None:
    found = _meta(root, ("og:type",))
    if found is None:
        return None
    kind = _OG_TYPES.get(found[1].lower())
    return DocTypeGuess(kind, "og:type", f"og:type={found[1]}") if kind else None


def _price(root: Any) -> DocTypeGuess | None:
    found = _meta(root, _PRICE_META)
    if found is not None:
        return DocTypeGuess(PRODUCT, "price", f"meta {found[0]}")
    prices = len(root.xpath("//*[@itemprop='price']"))
    if prices >= _LIST_OF:
        return DocTypeGuess(LISTING, "price", f'{prices} itemprop="price" elements')
    if prices:
        return DocTypeGuess(PRODUCT, "price", 'itemprop="price"')
    return None


def _article_meta(root: Any) -> DocTypeGuess | None:
    found = _meta(root, _ARTICLE_META)
    if found is not None:
        return DocTypeGuess(ARTICLE, "article-meta", f"meta {found[0]}")
    if root.xpath("//*[@itemprop='articleBody']"):
        return DocTypeGuess(ARTICLE, "article-meta", 'itemprop="articleBody"')
    return None


def _forum_generator(root: Any) -> DocTypeGuess | None:
    found = _meta(root, ("generator",))
    if found is not None and _FORUM_GENERATORS.search(found[1]):
        return DocTypeGuess(FORUM, "forum-generator", f"generator={found[1][:60]}")
    return None


def _list_structure(root: Any) -> DocTypeGuess | None:
    articles = int(root.xpath("count(//article)"))
    if articles >= _ARTICLES_FOR_LIST:
        return DocTypeGuess(LISTING, "list-structure", f"{articles} <article> elements")
    linked = int(root.xpath(_LINKED_HEADINGS))
    if linked >= _LINKED_HEADINGS_FOR_LIST:
        return DocTypeGuess(LISTING, "list-structure", f"{linked} headings that are links")
    priced = int(root.xpath("count(//*[contains(@class,'price')])"))
    if priced >= _PRICE_CLASSES_FOR_LIST:
        return DocTypeGuess(LISTING, "list-structure", f"{priced} elements of a price class")
    return None
