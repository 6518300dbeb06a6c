"""Doc type of a page from what the page declares, rules ``doctype-rules-v2``.

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
   text is a link → listing, unless the page has an article body (a run of 300 words
   or more in one element's own paragraphs that no linked heading interrupts: the
   linked headings beside it are related stories) and no thread of four or more post
   blocks follows it (a story and its discussion stay a listing); twenty or more
   elements whose class names a price (a product grid) → listing.

Nothing declared: ``other`` under the rule ``none``. Changing a rule means a new
``RULES_VERSION``. Pure: no Django, no I/O; never raises for any page.

``thread_markup`` is not a declaration and not one of the rules: it reads the page's
markup for a discussion thread (forum software's generator, schema.org forum post or
answer items, repeated post blocks at a thread URL), so that the extractor can keep the replies
of a thread that declares itself an article or nothing.
"""

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lxml import etree

RULES_VERSION = "doctype-rules-v2"

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
# Words in the paragraphs of one element that make it an article body (a listing's
# teasers are a few dozen words each, under their own headings).
_ARTICLE_BODY_WORDS = 300
# Headings whose whole text is a link (a list of items, each a link to its page).
_LINKED_HEADINGS = (
    "count(//*[self::h2 or self::h3 or self::h4][a and normalize-space(.)=normalize-space(a)])"
)
_IS_LINKED_HEADING = (
    "self::*[self::h2 or self::h3 or self::h4][a and normalize-space(.)=normalize-space(a)]"
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
    if linked >= _LINKED_HEADINGS_FOR_LIST and not _article_with_related_links(root):
        return DocTypeGuess(LISTING, "list-structure", f"{linked} headings that are links")
    priced = int(root.xpath("count(//*[contains(@class,'price')])"))
    if priced >= _PRICE_CLASSES_FOR_LIST:
        return DocTypeGuess(LISTING, "list-structure", f"{priced} elements of a price class")
    return None


def _article_with_related_links(root: Any) -> bool:
    """An article body and no thread of posts under it: the linked headings are related
    stories. (A story followed by its discussion, in post blocks, is read as a listing
    of posts, its comments kept.)"""
    return _has_article_body(root) and _post_blocks(root)[1] < _POSTS_FOR_THREAD


def _has_article_body(root: Any) -> bool:
    """Whether one element has a run of ``<p>`` children holding ``_ARTICLE_BODY_WORDS``
    words that no linked heading interrupts (teasers each under their own linked
    heading are a listing, not a body)."""
    for parent in root.xpath("//*[p]"):
        words = 0
        for child in parent:
            if child.tag == "p":
                words += len(child.xpath("string()").split())
                if words >= _ARTICLE_BODY_WORDS:
                    return True
            elif child.xpath(_IS_LINKED_HEADING):
                words = 0
    return False


# A discussion thread in the page's markup (thread_markup). A URL of forum software's
# form (a path part or host label naming a forum, a thread, a topic, a board, a
# discussion, or showthread / viewtopic / showtopic).
_THREAD_URL = re.compile(
    r"(?:^|[/.])(?:forums?|threads?|topics?|t|showthread|viewtopic|showtopic|"
    r"discussions?|comments|boards?)(?:[/.?=&]|-\d|$)",
    re.I,
)
# A class token names a post when its first or its only word does (post-box, postbit,
# message, reply, comment-body, answer...).
_POST_WORD = re.compile(r"^(?:posts?|postbit|message|reply|replies|comment|answer)$", re.I)
_CLASS_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_BLOCK_TAGS = "self::div or self::article or self::li or self::section or self::table or self::tr"
# A question and at least three replies; fewer make a thread whose replies hardly weigh.
_POSTS_FOR_THREAD = 4
# schema.org items that are the posts of a thread (anywhere on the page, nested too);
# not ``Comment``: blog software marks readers' comments under an article with it.
_POST_ITEM_TYPES = frozenset({"discussionforumposting", "answer"})
_POST_ITEMS_FOR_THREAD = 2


def thread_markup(root: Any, url: str = "") -> str:
    """What in the page's markup makes it a discussion thread, or "" (a blog post with
    a few readers' comments, a listing of blog posts: ""). Never raises."""
    if root is None:
        return ""
    try:
        return _thread_markup(root, url)
    except Exception:  # a hostile page must not stop the extraction
        return ""


def _thread_markup(root: Any, url: str) -> str:
    generator = _forum_generator(root)
    if generator is not None:
        return generator.evidence
    items = 0
    for item in root.xpath("//*[@itemtype]"):
        for declared in (item.get("itemtype") or "").split():
            if declared.rstrip("/").rsplit("/", 1)[-1].casefold() in _POST_ITEM_TYPES:
                items += 1
    if items >= _POST_ITEMS_FOR_THREAD:
        return f"{items} schema.org post or answer items"
    host_path = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url, flags=re.I).split("#", 1)[0]
    if not _THREAD_URL.search(host_path):
        return ""
    token, blocks = _post_blocks(root)
    if blocks >= _POSTS_FOR_THREAD:
        return f"{blocks} post blocks (class {token[:40]}) at a thread URL"
    return ""


def _post_blocks(root: Any) -> tuple[str, int]:
    """The class token naming a post that most block elements carry, and how many."""
    counts: Counter[str] = Counter()
    for element in root.xpath(f"//*[{_BLOCK_TAGS}][@class]"):
        for token in set((element.get("class") or "").split()):
            words = _CLASS_WORDS.findall(token)
            if words and _POST_WORD.match(words[0]):
                counts[token] += 1
    if not counts:
        return "", 0
    return counts.most_common(1)[0]
