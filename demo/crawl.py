"""Built-in demo / gold crawl: invented pages whose right answers are known.

The text banks (topics, sentences, names, menus per language) are data files in
demo/banks/; this module composes pages from them.

Thresholds come from labels, per doc type, so the desk ships a crawl with a written
answer key: each case names its pages, the label an editor should give and the
machine-checkable promises (`checks`) the pipeline must keep. Every promise was
computed with the project's own extractor settings and fingerprint methods and is
re-verified by tests/demo/test_crawl.py, for several seeds.

Pure: no Django. Same seed → the same pages and a byte-identical WARC (record ids and
dates come from the seed, never from the clock). All text is invented here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import unicodedata
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from functools import cache
from html import escape
from io import BytesIO
from pathlib import Path
from typing import Any, BinaryIO, TextIO
from urllib.parse import quote

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

GENERATOR = "dedup-desk democrawl v1"
LABELS = ("duplicate", "near-duplicate", "revision", "distinct", "unsure")
EXTRACTION_EXPECTATIONS = ("ok", "empty", "blocked", "too_short")

# How the promises in `checks` were computed (the pipeline tests must do the same).
MAIN_TEXT_EXTRACTOR = (
    "trafilatura.extract(html, fast=True, include_comments=False, include_tables=True, "
    "deduplicate=False) on the body decoded with the page's encoding; None counts as ''"
)
FULL_TEXT_EXTRACTOR = "trafilatura.html2txt(html, clean=False)"
CHECK_KEYS: dict[str, str] = {
    "method": "fingerprint method key for the text and distance checks "
    "(default simhash64-words-sha256-v1)",
    "same_raw_sha256": "every pair: SHA-256 of the raw bodies equal (true) or not (false)",
    "exact_main_text": "every pair: main texts equal after the method's normalization",
    "main_distance_max": "every pair: Hamming distance of the main-text SimHashes <= value",
    "main_distance_min": "every pair: Hamming distance of the main-text SimHashes >= value",
    "full_distance_max": "every pair: Hamming distance of the full-text SimHashes <= value",
    "full_distance_min": "every pair: Hamming distance of the full-text SimHashes >= value",
    "numbers_differ": "every pair: the numbers (\\d+([.,]\\d+)*) in the main texts differ",
    "reorder_words_distance_zero": "every pair: words-method distance 0, shingle3-method > 0",
    "main_text_contained": "every pair: the shorter normalized main text is a substring "
    "of the longer one",
    "no_fingerprint": "every page: the main text fingerprints as insufficient_features",
    "extraction_status": "every page: the extraction status the pipeline must record",
    "main_tokens_max": "every page: at most this many reference-method tokens in the main text",
    "passage_channel": "every pair: a stored candidate pair lists the passage channel (true), "
    "or no stored pair does (false)",
    "passage_containment_pct_min": "every pair: the larger passage containment (percent of "
    "one text's passages found in the other) >= value",
    "semantic_cosine_min": "every pair: cosine of the main-text embeddings >= value (model "
    "all-MiniLM-L6-v2, stored float16 vectors; another model is held to its shipped "
    "threshold only; checked where "
    "the semantic extra and the model are installed)",
    "semantic_cosine_max": "every pair: cosine of the main-text embeddings <= value (as "
    "semantic_cosine_min)",
}

REFERENCE = "simhash64-words-sha256-v1"
SHINGLE = "simhash64-shingle3-sha256-v1"
CJK = "simhash64-cjkbigram-sha256-v1"

_BASE_TIME = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
_BANKS = Path(__file__).resolve().parent / "banks"


@cache
def _bank_file(group: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((_BANKS / f"{group}.json").read_text(encoding="utf-8"))
    return data


def _frozen(value: Any) -> Any:
    """JSON lists back to the tuples the generator indexes, topics to _Topic."""
    if isinstance(value, dict) and "topic" in value:
        return _Topic(**{k: _frozen(v) for k, v in value["topic"].items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _bank(group: str, name: str) -> Any:
    """One text bank of demo/banks/<group>.json."""
    return _frozen(_bank_file(group)[name])


_ID_NAMESPACE = uuid.UUID("6f1c2d0e-5a7b-4c1e-9d3f-2b8a7e4c9d10")
_REASONS = {200: "OK", 403: "Forbidden", 429: "Too Many Requests"}


@dataclass(frozen=True)
class DemoPage:
    id: str
    url: str
    site: str
    doc_type: str
    fetched_at: datetime
    http_status: int
    headers: list[tuple[str, str]]
    body: bytes
    encoding: str
    expect_extraction: str


@dataclass(frozen=True)
class DemoCase:
    case: str
    title: str
    pages: tuple[str, ...]
    expected_label: str
    reason: str
    checks: dict[str, object]


# --------------------------------------------------------------------------------------
# Invented vocabularies. A topic gives the cast (places, things, officials, groups), a
# few headlines and topic sentences; generic sentences are filled from the cast, so two
# articles share grammar but not substance.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Topic:
    key: str
    section: str
    places: tuple[str, ...]
    things: tuple[str, ...]
    officials: tuple[str, ...]
    groups: tuple[str, ...]
    headlines: tuple[str, ...]
    specific: tuple[str, ...]


_EN_TOPICS: tuple[_Topic, ...] = _bank("en", "en_topics")

_EN_GENERIC = _bank("en", "en_generic")

_EN_AUTHORS = _bank("en", "en_authors")
_EN_COMMENTERS = _bank("en", "en_commenters")
_EN_COMMENTS = _bank("en", "en_comments")
_WEEKDAYS = _bank("common", "weekdays")
_MONTHS = _bank("common", "months")

_NEWS_RELATED = _bank("news", "news_related")
_WIRE_RELATED = _bank("wire", "wire_related")

# Forum posts: first person, one hobby per topic.
_FORUM_TOPICS: tuple[tuple[str, str, tuple[str, ...]], ...] = _bank("forum", "forum_topics")
_FORUM_GENERIC = _bank("forum", "forum_generic")
_FORUM_USERS = _bank("forum", "forum_users")
_FORUM_REPLIES = _bank("forum", "forum_replies")

# Products: name, SKU, price in cents, category, specs, description sentences.
_PRODUCTS: tuple[tuple[str, str, int, str, tuple[tuple[str, str], ...], tuple[str, ...]], ...] = (
    (
        "Brushed Steel Kettle 1.7 l",
        "KT-2041",
        4990,
        "Kitchen",
        (("Capacity", "1.7 l"), ("Power", "2200 W"), ("Weight", "1.1 kg")),
        (
            "A concealed element boils a full kettle in about four minutes and switches off "
            "automatically.",
            "The water window on both sides shows the level from either hand.",
            "A removable limescale filter in the spout can be rinsed under the tap.",
            "The handle stays cool, and the lid opens with a soft push of a button.",
            "The base has a cord store underneath, so the cable never trails across the worktop.",
            "Boil-dry protection cuts the power if the kettle is switched on while empty.",
        ),
    ),
    (
        "Trail Backpack 28 l",
        "BP-3310",
        8900,
        "Outdoor",
        (("Volume", "28 l"), ("Weight", "980 g"), ("Back length", "44-52 cm")),
        (
            "The ventilated back panel keeps a gap between the pack and your shirt on warm climbs.",
            "A zipped front pocket holds a map, a snack and a phone within easy reach.",
            "Side pockets take a one-litre bottle each and have elastic tops.",
            "The rain cover packs into its own pouch at the bottom of the bag.",
            "Hip belt pockets are large enough for a compact camera or a pair of gloves.",
            "Reflective tabs on the shoulder straps help you be seen on the road home.",
        ),
    ),
    (
        "Folding Desk Lamp",
        "LM-1187",
        3450,
        "Home office",
        (("Light output", "450 lm"), ("Colour temperature", "2700-6500 K"), ("Cable", "1.5 m")),
        (
            "The arm folds flat so the lamp fits into a drawer when the desk is cleared.",
            "Five brightness steps and three colour tones are set with a touch strip.",
            "A USB port in the base charges a phone while you work.",
            "The diffuser spreads the light evenly and avoids a hot spot on the page.",
            "The weighted base keeps the lamp steady even with the arm fully extended.",
            "A memory function remembers the last setting when the lamp is switched on.",
        ),
    ),
    (
        "Wireless Headphones H2",
        "HP-5520",
        11900,
        "Audio",
        (("Battery", "up to 40 h"), ("Charging", "USB-C"), ("Weight", "250 g")),
        (
            "Active noise cancelling quietens engine hum on trains and planes.",
            "Ten minutes of charging gives about four hours of playback.",
            "The ear cushions use soft memory foam covered in breathable fabric.",
            "A transparency mode lets you hear announcements without taking them off.",
            "The headband folds so the headphones fit into the included hard case.",
            "Two devices can be connected at once, for example a laptop and a phone.",
        ),
    ),
    (
        "Burr Coffee Grinder",
        "CG-0930",
        7490,
        "Kitchen",
        (("Grind settings", "31"), ("Bean hopper", "250 g"), ("Motor", "150 W")),
        (
            "Conical steel burrs grind evenly from fine espresso to coarse filter coffee.",
            "The timer dial measures a dose for one to twelve cups.",
            "A slow motor keeps the beans cool and the kitchen quiet in the morning.",
            "The grounds container has a snug lid and a spout that does not spill.",
            "The upper burr lifts out by hand for cleaning without any tools.",
            "A safety switch stops the motor when the hopper is removed.",
        ),
    ),
    (
        "Packable Rain Jacket",
        "RJ-4402",
        6400,
        "Clothing",
        (("Waterproof rating", "10,000 mm"), ("Weight", "310 g"), ("Sizes", "XS-XXL")),
        (
            "The jacket packs into its own chest pocket and clips onto a harness loop.",
            "Taped seams and a storm flap keep out wind-driven rain.",
            "Underarm zips let out heat on steep walks and fast cycling.",
            "The hood adjusts at the back so it turns with your head.",
            "Elastic cuffs seal around gloves without letting water run down the sleeves.",
            "A longer back hem keeps you dry when you sit on a wet bench.",
        ),
    ),
    (
        "Oak Cutting Board",
        "CB-2218",
        2990,
        "Kitchen",
        (("Size", "40 x 28 cm"), ("Thickness", "3 cm"), ("Wood", "European oak")),
        (
            "Each board is cut from a single piece of oak and oiled by hand.",
            "A juice groove around the edge catches liquid from roasts and fruit.",
            "Rubber feet keep the board from sliding on a smooth worktop.",
            "The reverse side is flat and ready for bread or cheese.",
            "Wash by hand and oil it now and then to keep the grain from drying.",
            "Small knots and colour changes are natural and make every board different.",
        ),
    ),
    (
        "Insulated Bottle 750 ml",
        "WB-7705",
        2490,
        "Outdoor",
        (("Capacity", "750 ml"), ("Keeps cold", "24 h"), ("Keeps hot", "12 h")),
        (
            "Double steel walls keep water cold on a hot day and tea warm on a winter walk.",
            "The wide mouth takes ice cubes and is easy to clean with a brush.",
            "A powder-coated finish gives a firm grip even with wet hands.",
            "The loop lid screws tight and does not leak in a bag.",
            "No metallic taste is left in the drink, even after a full day.",
            "The bottle fits most car cup holders and bicycle cages.",
        ),
    ),
)
_PRODUCT_GENERIC = _bank("product", "product_generic")
_SHOP_RELATED = _bank("shop", "shop_related")

# Vietnamese (written with full diacritics; stored NFC, one page NFD, one in cp1258).
_VI_TOPICS: tuple[_Topic, ...] = _bank("vi", "vi_topics")
_VI_GENERIC = _bank("vi", "vi_generic")
_VI_AUTHORS = _bank("vi", "vi_authors")
_VI_RELATED = _bank("vi", "vi_related")

# Chinese (simplified; every character is in GBK).
_ZH_TOPICS: tuple[_Topic, ...] = _bank("zh", "zh_topics")
_ZH_GENERIC = _bank("zh", "zh_generic")
_ZH_AUTHORS = _bank("zh", "zh_authors")
_ZH_RELATED = _bank("zh", "zh_related")


# --------------------------------------------------------------------------------------
# Articles and products as data, rendered into site templates below.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Article:
    slug: str
    title: str
    paragraphs: tuple[str, ...]
    author: str
    published: datetime
    comments: int
    related: tuple[str, ...]
    section: str


@dataclass(frozen=True)
class _Product:
    slug: str
    name: str
    sku: str
    price_cents: int
    category: str
    specs: tuple[tuple[str, str], ...]
    paragraphs: tuple[str, ...]
    rating: str
    reviews: int
    related: tuple[str, ...]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _slugify(text: str) -> str:
    ascii_only = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = "".join(c if c.isalnum() else " " for c in ascii_only.lower()).split()
    return "-".join(words[:8]) or "page"


def _rotate_sentences(paragraph: str) -> str:
    sentences = re.split(r"(?<=[.!?]) ", paragraph)
    return " ".join(sentences[1:] + sentences[:1])


class _Writer:
    """Fills sentence templates from one topic's cast with seeded choices."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def slots(self, topic: _Topic) -> dict[str, str]:
        rng = self.rng
        official = rng.choice(topic.officials)
        return {
            "place": rng.choice(topic.places),
            "thing": rng.choice(topic.things),
            "official": official,
            "Official": _cap(official),
            "group": rng.choice(topic.groups),
            "weekday": rng.choice(_WEEKDAYS),
            "month": rng.choice(_MONTHS),
            "m": str(rng.randint(4, 11)),
            "m2": str(rng.randint(4, 12)),
            "num": str(rng.randint(2, 9)),
            "num3": str(rng.randint(120, 980)),
            "num4": str(rng.choice((15, 20, 25, 30, 40))),
            "big": f"{rng.randint(12, 98) * 100:,}",
            "money": f"{rng.randint(12, 95) / 10:.1f}",
            "pct": str(rng.randint(6, 35)),
        }

    def fill(self, template: str, topic: _Topic) -> str:
        return template.format(**self.slots(topic))

    def article(
        self,
        topic: _Topic,
        specific: Sequence[str],
        generic: Sequence[str],
        *,
        n_specific: int,
        n_generic: int,
        per_paragraph: int,
        joiner: str,
    ) -> tuple[str, tuple[str, ...]]:
        rng = self.rng
        picked = [*rng.sample(list(specific), n_specific), *rng.sample(list(generic), n_generic)]
        chosen = [self.fill(s, topic) for s in picked]
        rng.shuffle(chosen)
        paragraphs = tuple(
            joiner.join(chosen[i : i + per_paragraph]) for i in range(0, len(chosen), per_paragraph)
        )
        headline = self.fill(rng.choice(topic.headlines), topic)
        return _cap(headline), paragraphs


# --------------------------------------------------------------------------------------
# HTML. Lines are (depth, text); "pretty" output indents, "compact" output has no
# whitespace between tags (the whitespace-only case).
# --------------------------------------------------------------------------------------

_Lines = list[tuple[int, str]]


def _render(lines: _Lines, *, compact: bool = False) -> str:
    if compact:
        return "".join(text for _, text in lines)
    return "\n".join("  " * depth + text for depth, text in lines) + "\n"


def _e(text: str) -> str:
    return escape(text, quote=True)


def _menu(depth: int, css: str, items: Sequence[str], path: Callable[[str], str]) -> _Lines:
    lines: _Lines = [(depth, f'<nav class="{css}">'), (depth + 1, "<ul>")]
    for item in items:
        lines.append((depth + 2, f'<li><a href="{_e(path(item))}">{_e(item)}</a></li>'))
    return [*lines, (depth + 1, "</ul>"), (depth, "</nav>")]


def _head(lang: str, charset: str, title: str, url: str) -> _Lines:
    return [
        (0, "<!DOCTYPE html>"),
        (0, f'<html lang="{lang}">'),
        (0, "<head>"),
        (1, f'<meta charset="{charset}">'),
        (1, f"<title>{_e(title)}</title>"),
        (1, '<meta name="viewport" content="width=device-width, initial-scale=1">'),
        (1, f'<link rel="canonical" href="{_e(url)}">'),
        (0, "</head>"),
    ]


def _paragraph_lines(depth: int, paragraphs: Sequence[str], *, wrap: bool) -> _Lines:
    out: _Lines = []
    for text in paragraphs:
        body = _e(text)
        if wrap:  # hard line breaks inside the paragraph, as some CMSes emit
            words = body.split(" ")
            body = "\n".join(" ".join(words[i : i + 9]) for i in range(0, len(words), 9))
        out.append((depth, f"<p>{body}</p>"))
    return out


_NEWS_MENU: dict[str, tuple[str, ...]] = {
    "Local": ("North", "South", "Harbour", "Villages"),
    "Politics": ("Council", "Elections", "Parliament"),
    "Business": ("Markets", "Jobs", "Property", "Small business"),
    "Transport": ("Roads", "Rail", "Cycling"),
    "Education": ("Schools", "Universities"),
    "Health": ("Hospitals", "Wellbeing"),
    "Science": ("Space", "Nature", "Technology"),
    "Sport": ("Football", "Rowing", "Athletics", "Results"),
    "Culture": ("Theatre", "Music", "Books", "Listings"),
    "Opinion": ("Editorials", "Letters", "Columnists"),
}
_NEWS_UTILITY = _bank("news", "news_utility")
_NEWS_MOST_READ = _bank("news", "news_most_read")
_NEWS_FOOTER = _bank("news", "news_footer")
_NEWS_LEGAL = (
    "The Example Courier is an invented newspaper used to test duplicate detection. "
    "Registered office: 1 Example Street, Example Town. Registered in England No. 0000000. "
    "We follow the editors' code of practice and publish corrections on the corrections "
    "page. Reproduction of any material without permission is prohibited."
)
_NEWS_MENU_V2 = _bank("news", "news_menu_v2")


def _mega_menu(depth: int) -> _Lines:
    lines: _Lines = [(depth, '<nav class="main-menu">'), (depth + 1, '<ul class="sections">')]
    for section, subsections in _NEWS_MENU.items():
        base = f"/{_slugify(section)}/"
        lines.append((depth + 2, f'<li><a href="{base}">{_e(section)}</a>'))
        lines.append((depth + 3, '<ul class="sub">'))
        for sub in subsections:
            lines.append((depth + 4, f'<li><a href="{base}{_slugify(sub)}/">{_e(sub)}</a></li>'))
        lines += [(depth + 3, "</ul>"), (depth + 2, "</li>")]
    return [*lines, (depth + 1, "</ul>"), (depth, "</nav>")]


def _news_html(
    art: _Article,
    url: str,
    stamp: str,
    *,
    redesign: bool = False,
    compact: bool = False,
    wrap: bool = False,
    byline_extra: str = "",
) -> str:
    """A heavy, realistic template: the page's own words are a minority of its text."""
    date_text = f"{art.published.day} {art.published:%B %Y}"
    lines = _head("en", "utf-8", f"{art.title} | The Example Courier", url)
    lines.append((0, "<body>"))
    if redesign:
        lines += [
            (1, '<header class="masthead">'),
            (2, '<a class="brand" href="/">Example Courier</a>'),
            (2, '<a class="subscribe" href="/subscribe/">Subscribe for 1 euro</a>'),
            *_menu(2, "nav-v2", _NEWS_MENU_V2, lambda s: f"/{_slugify(s)}/"),
            (1, "</header>"),
        ]
    else:
        lines += [
            (1, '<div class="utility-bar">'),
            *_menu(2, "utility", _NEWS_UTILITY, lambda s: f"/{_slugify(s)}/"),
            (1, "</div>"),
            (1, '<header class="site-header">'),
            (2, '<a class="logo" href="/">The Example Courier</a>'),
            *_mega_menu(2),
            (1, "</header>"),
        ]
    related_heading = f"More from {art.section}" if redesign else "Related articles"
    lines += [
        (1, "<main>"),
        (2, '<article class="story">'),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (
            3,
            f'<p class="byline">By {_e(art.author)}{byline_extra} · <time datetime="'
            f'{art.published:%Y-%m-%d}">{date_text}</time> · <a class="comment-count" '
            f'href="#comments">{art.comments} comments</a></p>',
        ),
        *_paragraph_lines(3, art.paragraphs, wrap=wrap),
        (2, "</article>"),
        (2, '<aside class="related">'),
        (3, f"<h2>{_e(related_heading)}</h2>"),
        (3, "<ul>"),
        *[
            (4, f'<li><a href="/{_slugify(r)}/">{_e(r)}</a></li>')
            for r in (art.related[::-1] if redesign else art.related)
        ],
        (3, "</ul>"),
        (2, "</aside>"),
    ]
    if not redesign:
        lines += [
            (2, '<aside class="most-read">'),
            (3, "<h2>Most read</h2>"),
            (3, "<ol>"),
            *[(4, f'<li><a href="/{_slugify(r)}/">{_e(r)}</a></li>') for r in _NEWS_MOST_READ],
            (3, "</ol>"),
            (2, "</aside>"),
        ]
    lines += [
        (2, '<section class="comments" id="comments">'),
        (3, f"<h2>{art.comments} comments</h2>"),
    ]
    for i in range(min(art.comments, 2)):
        who = _EN_COMMENTERS[(art.comments + i) % len(_EN_COMMENTERS)]
        said = _EN_COMMENTS[(art.comments * 3 + i) % len(_EN_COMMENTS)]
        lines += [
            (3, '<div class="comment">'),
            (4, f'<p class="comment-meta">{_e(who)}</p>'),
            (4, f"<p>{_e(said)}</p>"),
            (3, "</div>"),
        ]
    lines.append((2, "</section>"))
    lines.append((1, "</main>"))
    if redesign:
        lines += [
            (1, '<footer class="footer-v2">'),
            (2, "<p>Example Courier Media Group · Newsroom: +44 20 0000 0000</p>"),
            (2, '<p><a href="/privacy/">Privacy settings</a> · <a href="/jobs/">Jobs</a></p>'),
            (2, f'<p class="generated">Served {stamp}</p>'),
            (1, "</footer>"),
        ]
    else:
        lines += [
            (1, '<footer class="site-footer">'),
            *_menu(2, "footer-links", _NEWS_FOOTER, lambda s: f"/{_slugify(s)}/"),
            (2, f"<p>{_e(_NEWS_LEGAL)}</p>"),
            (2, "<p>© 2026 The Example Courier Ltd. All rights reserved.</p>"),
            (2, f'<p class="generated">Page generated {stamp}</p>'),
            (1, "</footer>"),
        ]
    lines += [(0, "</body>"), (0, "</html>")]
    return _render(lines, compact=compact)


def _wire_html(art: _Article, url: str) -> str:
    date_text = f"{art.published:%B} {art.published.day}, {art.published.year}"
    lines = _head("en", "utf-8", f"{art.title} - Example Wire", url)
    lines += [
        (0, "<body>"),
        (1, '<div class="topbar">'),
        (2, '<a class="wordmark" href="/">EXAMPLE WIRE</a>'),
        *_menu(
            2, "sections", ("World", "Business", "Markets", "Technology", "Regions"), _wire_path
        ),
        (1, "</div>"),
        (1, '<main class="content">'),
        (2, "<article>"),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (3, f'<div class="meta">{_e(art.author)} · {date_text} · {art.comments} comments</div>'),
        *_paragraph_lines(3, art.paragraphs, wrap=False),
        (2, "</article>"),
        (2, '<aside class="related">'),
        (3, "<h2>Related coverage</h2>"),
        (3, "<ul>"),
        *[(4, f"<li>{_e(r)}</li>") for r in art.related],
        (3, "</ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="wire-footer">'),
        (2, "<p>Reporting by Example Wire; editing by the regional desk.</p>"),
        (2, "<p>Example Wire is an invented news agency used for testing.</p>"),
        (2, "<p>All quotes delayed by at least 15 minutes. © 2026 Example Wire.</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _wire_path(section: str) -> str:
    return f"/{_slugify(section)}/"


def _talk_html(
    title: str,
    url: str,
    author: str,
    posted: datetime,
    paragraphs: Sequence[str],
    replies: Sequence[tuple[str, str]],
    *,
    kind: str = "thread",
) -> str:
    lines = _head("en", "utf-8", f"{title} - Talk Example", url)
    lines += [
        (0, "<body>"),
        (1, '<header class="forum-header">'),
        (2, '<a class="logo" href="/">Talk Example</a>'),
        *_menu(2, "forum-nav", ("Forums", "Latest", "Top", "Blog", "Members", "Rules"), _wire_path),
        (1, "</header>"),
        (1, "<main>"),
        (2, f'<article class="{kind}">'),
        (3, f"<h1>{_e(title)}</h1>"),
        (
            3,
            f'<p class="post-meta">Posted by {_e(author)} on {posted:%Y-%m-%d} · '
            f"{len(replies)} replies</p>",
        ),
        *_paragraph_lines(3, paragraphs, wrap=False),
        (2, "</article>"),
    ]
    if kind == "teaser":
        lines.append(
            (
                2,
                '<div class="read-more"><a href="https://news.example.com/">Continue reading '
                "at The Example Courier</a></div>",
            )
        )
    lines += [(2, '<section class="comments">'), (3, f"<h2>{len(replies)} replies</h2>")]
    for who, said in replies:
        lines += [
            (3, '<div class="comment">'),
            (4, f'<p class="comment-meta">{_e(who)}</p>'),
            (4, f"<p>{_e(said)}</p>"),
            (3, "</div>"),
        ]
    lines += [
        (2, "</section>"),
        (2, '<aside class="sidebar">'),
        (3, "<h2>Related threads</h2>"),
        (3, "<ul><li>Beginners: read this first</li><li>Show us your weekend projects</li></ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="forum-footer">'),
        (2, "<p>Talk Example is a community forum. Be kind, stay on topic.</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


_SHOP_MENU = _bank("shop", "shop_menu")


def _price(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def _shop_frame(title: str, url: str, main: _Lines, *, stock_related: Sequence[str]) -> str:
    lines = _head("en", "utf-8", f"{title} | Example Shop", url)
    lines += [
        (0, "<body>"),
        (1, '<header class="shop-header">'),
        (2, '<a class="logo" href="/">Example Shop</a>'),
        (2, '<a class="basket" href="/basket/">Basket (0)</a>'),
        *_menu(2, "categories", _SHOP_MENU, lambda s: f"/c/{_slugify(s)}/"),
        (1, "</header>"),
        (1, "<main>"),
        *main,
        (2, '<aside class="related-products">'),
        (3, "<h2>Customers also viewed</h2>"),
        (3, "<ul>"),
        *[(4, f'<li><a href="/p/{_slugify(r)}/">{_e(r)}</a></li>') for r in stock_related],
        (3, "</ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="shop-footer">'),
        (2, "<p>Free delivery on orders over $50 · Returns within 30 days</p>"),
        (2, "<p>© 2026 Example Shop. Prices include VAT.</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _product_html(prod: _Product, url: str) -> str:
    main: _Lines = [
        (
            2,
            '<nav class="breadcrumb"><a href="/">Home</a> › '
            f'<a href="/c/{_slugify(prod.category)}/">{_e(prod.category)}</a></nav>',
        ),
        (2, '<div class="product">'),
        (3, f"<h1>{_e(prod.name)}</h1>"),
        (3, f'<p class="price">{_price(prod.price_cents)}</p>'),
        (3, f'<p class="sku">SKU: {_e(prod.sku)}</p>'),
        (3, f'<p class="rating">Rated {prod.rating} out of 5 · {prod.reviews} reviews</p>'),
        (3, '<div class="description">'),
        *_paragraph_lines(4, prod.paragraphs, wrap=False),
        (3, "</div>"),
        (3, '<table class="specs">'),
        *[(4, f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>") for k, v in prod.specs],
        (3, "</table>"),
        (2, "</div>"),
    ]
    return _shop_frame(prod.name, url, main, stock_related=prod.related)


def _stub_html(name: str, url: str) -> str:
    main: _Lines = [
        (2, '<div class="product">'),
        (3, f"<h1>{_e(name)}</h1>"),
        (3, "<p>Sold out.</p>"),
        (2, "</div>"),
    ]
    lines = _head("en", "utf-8", f"{name} | Example Shop", url)
    lines += [(0, "<body>"), (1, "<main>"), *main, (1, "</main>"), (0, "</body>"), (0, "</html>")]
    return _render(lines)


_VI_MENU = _bank("vi", "vi_menu")
_VI_WEEKDAYS = _bank("vi", "vi_weekdays")


def _vi_html(art: _Article, url: str, charset: str) -> str:
    date_text = f"{_VI_WEEKDAYS[art.published.weekday()]}, {art.published.day}/" + (
        f"{art.published.month}/{art.published.year}"
    )
    lines = _head("vi", charset, f"{art.title} - Tin Tức Mẫu", url)
    lines += [
        (0, "<body>"),
        (1, '<header class="header">'),
        (2, '<a class="logo" href="/">Tin Tức Mẫu</a>'),
        *_menu(2, "menu-chinh", ("Trang chủ", *_VI_MENU), lambda s: f"/{_slugify(s)}/"),
        (1, "</header>"),
        (1, '<main class="main">'),
        (2, '<article class="bai-viet">'),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (
            3,
            f'<p class="thong-tin">{_e(art.author)} · {date_text} · '
            f'<span class="so-binh-luan">{art.comments} bình luận</span></p>',
        ),
        *_paragraph_lines(3, art.paragraphs, wrap=False),
        (2, "</article>"),
        (2, '<aside class="related">'),
        (3, "<h2>Bài viết liên quan</h2>"),
        (3, "<ul>"),
        *[(4, f'<li><a href="/{_slugify(r)}.html">{_e(r)}</a></li>') for r in art.related],
        (3, "</ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="footer">'),
        (2, "<p>© 2026 Tin Tức Mẫu. Trang tin thử nghiệm, nội dung hoàn toàn hư cấu.</p>"),
        (2, "<p>Liên hệ quảng cáo · Điều khoản sử dụng · Chính sách bảo mật</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


_ZH_MENU = _bank("zh", "zh_menu")


def _zh_html(art: _Article, url: str) -> str:
    p = art.published
    lines = _head("zh-CN", "gbk", f"{art.title}_示例新闻网", url)
    lines += [
        (0, "<body>"),
        (1, '<div class="header">'),
        (2, '<a class="logo" href="/">示例新闻网</a>'),
        *_menu(2, "nav", _ZH_MENU, lambda s: f"/{len(s)}/"),
        (1, "</div>"),
        (1, '<div class="main">'),
        (2, '<div class="article">'),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (
            3,
            f'<p class="info">{p.year}年{p.month}月{p.day}日 {_e(art.author)} · '
            f'<span class="comment-num">{art.comments}条评论</span></p>',
        ),
        *_paragraph_lines(3, art.paragraphs, wrap=False),
        (2, "</div>"),
        (2, '<div class="related">'),
        (3, "<h2>相关文章</h2>"),
        (3, "<ul>"),
        *[(4, f"<li>{_e(r)}</li>") for r in art.related],
        (3, "</ul>"),
        (2, "</div>"),
        (1, "</div>"),
        (1, '<div class="footer">'),
        (2, "<p>示例新闻网 版权所有 2026 本站内容均为虚构，仅供测试。</p>"),
        (2, "<p>关于我们 | 联系方式 | 广告服务 | 隐私政策</p>"),
        (1, "</div>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _login_html(url: str, next_path: str) -> str:
    lines = _head("en", "utf-8", "Sign in | The Example Courier", url)
    lines += [
        (0, "<body>"),
        (1, '<main class="login">'),
        (2, "<h1>Sign in to keep reading</h1>"),
        (2, "<p>This article is for subscribers.</p>"),
        (2, '<form method="post" action="/account/login">'),
        (3, f'<input type="hidden" name="next" value="{_e(next_path)}">'),
        (3, '<label>Email <input type="email" name="email"></label>'),
        (3, '<label>Password <input type="password" name="password"></label>'),
        (3, '<button type="submit">Sign in</button>'),
        (2, "</form>"),
        (1, "</main>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _blocked_html(status: int, url: str, ref: str, *, lang: str = "en") -> str:
    if lang == "zh":
        title, msg = "访问被拒绝", "您的请求已被安全系统拦截，请完成验证后重试。"
        charset = "gbk"
    elif status == 403:
        title, msg = "Access denied", "You do not have permission to view this page."
        charset = "utf-8"
    else:
        title, msg = "Too many requests", "Please wait a minute and prove you are not a robot."
        charset = "utf-8"
    lines = _head(lang, charset, title, url)
    lines += [
        (0, "<body>"),
        (1, '<div class="challenge">'),
        (2, f"<h1>{_e(title)}</h1>"),
        (2, f"<p>{_e(msg)}</p>"),
        (2, '<div class="captcha" data-sitekey="demo"></div>'),
        (2, f'<p class="ref">Reference #{ref}</p>'),
        (1, "</div>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _empty_html(url: str, title: str, *, app_shell: bool) -> str:
    lines = _head("en", "utf-8", title, url)
    if app_shell:  # a client-rendered page fetched without running its script
        lines += [
            (0, "<body>"),
            (1, '<div id="root"></div>'),
            (1, '<script src="/static/app.3f9c1a.js" defer></script>'),
            (0, "</body>"),
        ]
    else:
        lines.append((0, "<body></body>"))
    lines.append((0, "</html>"))
    return _render(lines)


# --------------------------------------------------------------------------------------
# Encodings.
# --------------------------------------------------------------------------------------

# Vietnamese tone marks: windows-1258 has them as combining characters, and has the
# vowel shapes (â ă ê ô ơ ư) precomposed, but not most letters carrying both.
_VI_TONES = frozenset("\u0300\u0301\u0303\u0309\u0323")


def cp1258_form(text: str) -> str:
    """The same text in the form windows-1258 can encode: letters precomposed where
    the code page has them, tone marks as combining characters otherwise.
    NFC of the result equals NFC of the input."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFC", text):
        try:
            ch.encode("cp1258")
        except UnicodeEncodeError:
            decomposed = unicodedata.normalize("NFD", ch)
            shape = "".join(c for c in decomposed if c not in _VI_TONES)
            tones = "".join(c for c in decomposed if c in _VI_TONES)
            ch = unicodedata.normalize("NFC", shape) + tones
            ch.encode("cp1258")  # raises if the text cannot be written in cp1258
        out.append(ch)
    return "".join(out)


_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
_FULLWIDTH.update({c.lower(): chr(ord(c.lower()) + 0xFEE0) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"})


def to_fullwidth(text: str) -> str:
    """ASCII letters and digits → their full-width forms (NFKC maps them back)."""
    return "".join(_FULLWIDTH.get(c, c) for c in text)


# --------------------------------------------------------------------------------------
# The crawl.
# --------------------------------------------------------------------------------------


class _Crawl:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.writer = _Writer(self.rng)
        self.pages: list[DemoPage] = []
        self.cases: list[DemoCase] = []
        self._slugs: set[str] = set()

    # -- helpers ---------------------------------------------------------------------

    def when(self, day: int) -> datetime:
        """A fetch time on day `day` (0 = 2026-03-02), at a seeded minute of the day."""
        minutes = self.rng.randint(0, 14 * 60)
        return _BASE_TIME + timedelta(days=day, minutes=minutes, seconds=self.rng.randint(0, 59))

    def unique_slug(self, text: str) -> str:
        slug = base = _slugify(text)
        n = 2
        while slug in self._slugs:
            slug = f"{base}-{n}"
            n += 1
        self._slugs.add(slug)
        return slug

    def add(
        self,
        page_id: str,
        url: str,
        html: str,
        *,
        doc_type: str,
        fetched_at: datetime,
        encoding: str = "utf-8",
        status: int = 200,
        expect: str = "ok",
        content_charset: str | None = None,
        extra_headers: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
    ) -> DemoPage:
        data = body if body is not None else html.encode(encoding, errors="strict")
        charset = content_charset or encoding
        headers = [
            ("Content-Type", f"text/html; charset={charset}"),
            ("Content-Length", str(len(data))),
            ("Date", format_datetime(fetched_at, usegmt=True)),
            ("Server", "demo"),
            *extra_headers,
        ]
        site = url.split("/")[2]
        page = DemoPage(
            page_id, url, site, doc_type, fetched_at, status, headers, data, encoding, expect
        )
        self.pages.append(page)
        return page

    def case(
        self,
        case: str,
        title: str,
        pages: Sequence[DemoPage],
        label: str,
        reason: str,
        **checks: object,
    ) -> None:
        self.cases.append(DemoCase(case, title, tuple(p.id for p in pages), label, reason, checks))

    def en_article(self, topic: _Topic, *, section_related: Sequence[str]) -> _Article:
        rng = self.rng
        title, paragraphs = self.writer.article(
            topic,
            topic.specific,
            _EN_GENERIC,
            n_specific=8,
            n_generic=6,
            per_paragraph=3,
            joiner=" ",
        )
        return _Article(
            slug=self.unique_slug(title),
            title=title,
            paragraphs=paragraphs,
            author=rng.choice(_EN_AUTHORS),
            published=_BASE_TIME + timedelta(days=rng.randint(-3, 0)),
            comments=rng.randint(0, 60),
            related=tuple(rng.sample(list(section_related), 3)),
            section=topic.section,
        )

    def vi_article(self, topic: _Topic) -> _Article:
        rng = self.rng
        title, paragraphs = self.writer.article(
            topic,
            topic.specific,
            _VI_GENERIC,
            n_specific=5,
            n_generic=10,
            per_paragraph=3,
            joiner=" ",
        )
        return _Article(
            slug=self.unique_slug(title),
            title=title,
            paragraphs=paragraphs,
            author=rng.choice(_VI_AUTHORS),
            published=_BASE_TIME + timedelta(days=rng.randint(-3, 0)),
            comments=rng.randint(0, 80),
            related=tuple(rng.sample(list(_VI_RELATED), 3)),
            section=topic.section,
        )

    def zh_article(self, topic: _Topic) -> _Article:
        rng = self.rng
        title, paragraphs = self.writer.article(
            topic,
            topic.specific,
            _ZH_GENERIC,
            n_specific=5,
            n_generic=10,
            per_paragraph=3,
            joiner="",
        )
        return _Article(
            slug=f"{rng.randint(100000, 999999)}",
            title=title,
            paragraphs=paragraphs,
            author=rng.choice(_ZH_AUTHORS),
            published=_BASE_TIME + timedelta(days=rng.randint(-3, 0)),
            comments=rng.randint(0, 300),
            related=tuple(rng.sample(list(_ZH_RELATED), 3)),
            section=topic.section,
        )

    def product(self, index: int) -> _Product:
        rng = self.rng
        name, sku, cents, category, specs, specific = _PRODUCTS[index]
        generic = [
            g.format(
                name=name,
                category=category.lower(),
                num=rng.randint(2, 5),
                num4=rng.randint(5, 10),
            )
            for g in rng.sample(list(_PRODUCT_GENERIC), 3)
        ]
        sentences = [*specific, *generic]
        rng.shuffle(sentences)
        paragraphs = tuple(" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3))
        return _Product(
            slug=_slugify(name),
            name=name,
            sku=sku,
            price_cents=cents,
            category=category,
            specs=specs,
            paragraphs=paragraphs,
            rating=f"{rng.randint(38, 49) / 10:.1f}",
            reviews=rng.randint(8, 400),
            related=tuple(rng.sample(list(_SHOP_RELATED), 3)),
        )

    def forum_post(self, index: int) -> tuple[str, tuple[str, ...]]:
        rng = self.rng
        _key, title, specific = _FORUM_TOPICS[index]
        generic = [
            g.format(num=rng.randint(2, 12), weekday=rng.choice(_WEEKDAYS))
            for g in rng.sample(list(_FORUM_GENERIC), 5)
        ]
        sentences = [*rng.sample(list(specific), 7), *generic]
        rng.shuffle(sentences)
        return title, tuple(" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3))

    # -- the pages and cases -----------------------------------------------------------

    def build(self) -> None:
        rng = self.rng
        # One topic per English article, so unrelated stories share only grammar.
        en_topics = list(_EN_TOPICS)
        rng.shuffle(en_topics)

        def next_en(related: Sequence[str] = _NEWS_RELATED) -> _Article:
            return self.en_article(en_topics.pop(), section_related=related)

        def news_url(art: _Article) -> str:
            return (
                f"https://news.example.com/{_slugify(art.section)}/"
                f"{art.published:%Y/%m/%d}/{art.slug}/"
            )

        def stamp(at: datetime) -> str:
            return f"{at:%Y-%m-%d %H:%M:%S} UTC"

        def news(
            page_id: str, art: _Article, day: int, *, redesign: bool = False, byline_extra: str = ""
        ) -> DemoPage:
            at = self.when(day)
            url = news_url(art)
            html = _news_html(art, url, stamp(at), redesign=redesign, byline_extra=byline_extra)
            return self.add(page_id, url, html, doc_type="article", fetched_at=at)

        # 1. Verbatim copy: the same bytes served at a tracking-parameter URL.
        a1 = next_en()
        p1 = news("news-a1", a1, 0)
        p1_copy = self.add(
            "news-a1-copy",
            news_url(a1) + "?utm_source=newsletter&utm_medium=email",
            "",
            body=p1.body,
            doc_type="article",
            fetched_at=self.when(1),
        )
        self.case(
            "verbatim_copy",
            "verbatim copy at two URLs",
            [p1, p1_copy],
            "duplicate",
            "same bytes at two URLs (tracking parameters only)",
            same_raw_sha256=True,
            exact_main_text=True,
            main_distance_max=0,
            full_distance_max=0,
        )

        # 2. Whitespace and line breaks only: pretty HTML vs compact HTML with hard breaks.
        a2 = next_en()
        at2 = self.when(0)
        url2 = news_url(a2)
        p2 = self.add(
            "news-a2",
            url2,
            _news_html(a2, url2, stamp(at2)),
            doc_type="article",
            fetched_at=at2,
        )
        p2_ws = self.add(
            "news-a2-compact",
            url2 + "index.html",
            _news_html(a2, url2, stamp(at2), compact=True, wrap=True),
            doc_type="article",
            fetched_at=self.when(1),
        )
        self.case(
            "whitespace_only",
            "whitespace and line-break changes only",
            [p2, p2_ws],
            "duplicate",
            "the HTML differs only in indentation and line breaks",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 3. Template change only: the site was redesigned between two fetches.
        a3 = next_en()
        p3 = news("news-a3", a3, 0)
        p3_new = news("news-a3-redesign", a3, 3, redesign=True)
        self.case(
            "template_change",
            "menu or footer change only",
            [p3, p3_new],
            "duplicate",
            "same article body; the menu, footer and related block changed in a redesign",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 4. Price change on a product page → a revision, not a duplicate.
        products = list(range(len(_PRODUCTS)))
        rng.shuffle(products)
        prod = self.product(products.pop())
        purl = f"https://shop.example.com/p/{prod.slug}/"
        s1 = self.add(
            "shop-p1", purl, _product_html(prod, purl), doc_type="product", fetched_at=self.when(0)
        )
        cheaper = replace(prod, price_cents=prod.price_cents - 500)
        s1_sale = self.add(
            "shop-p1-price",
            purl,
            _product_html(cheaper, purl),
            doc_type="product",
            fetched_at=self.when(2),
        )
        self.case(
            "price_change",
            "price changed on a product page",
            [s1, s1_sale],
            "revision",
            f"same product; the price fell from {_price(prod.price_cents)} to "
            f"{_price(cheaper.price_cents)} (guard: numbers differ)",
            same_raw_sha256=False,
            exact_main_text=False,
            numbers_differ=True,
            main_distance_max=6,  # a one-token change: the words method barely moves
        )

        # 5. Paragraph order shuffled: a content farm reposts a wire story.
        w2 = next_en(_WIRE_RELATED)
        wurl2 = f"https://wire.example.org/{_slugify(w2.section)}/{w2.slug}"
        wp2 = self.add(
            "wire-w2", wurl2, _wire_html(w2, wurl2), doc_type="article", fetched_at=self.when(0)
        )
        # Paragraphs shuffled and each paragraph's sentences rotated: the same words,
        # enough changed 3-shingles that an order-aware method always sees it.
        order = list(range(len(w2.paragraphs)))
        while order == sorted(order):
            rng.shuffle(order)
        shuffled = tuple(_rotate_sentences(w2.paragraphs[i]) for i in order)
        turl = f"https://talk.example.net/blog/digest-{w2.slug}/"
        tp_shuffled = self.add(
            "talk-w2-reordered",
            turl,
            _talk_html(w2.title, turl, "newsdigest_bot", w2.published, shuffled, (), kind="post"),
            doc_type="article",
            fetched_at=self.when(1),
        )
        self.case(
            "sentence_order",
            "sentence order changed",
            [wp2, tp_shuffled],
            "near-duplicate",
            "the same sentences in another order (paragraphs shuffled) on a reposting blog",
            same_raw_sha256=False,
            exact_main_text=False,
            reorder_words_distance_zero=True,
        )

        # 6. Syndication: new headline and an inserted advertisement paragraph.
        w1 = next_en(_WIRE_RELATED)
        wurl1 = f"https://wire.example.org/{_slugify(w1.section)}/{w1.slug}"
        wp1 = self.add(
            "wire-w1", wurl1, _wire_html(w1, wurl1), doc_type="article", fetched_at=self.when(0)
        )
        ad = (
            "Advertisement: subscribe to The Example Courier today and get your first three "
            "months of unlimited reading for free."
        )
        paras = list(w1.paragraphs)
        paras.insert(2, ad)
        new_title = f"{w1.title.split(' ')[0]} news: what the decision means for you"
        synd = replace(
            w1,
            title=new_title,
            paragraphs=tuple(paras),
            slug=self.unique_slug(new_title),
            related=tuple(rng.sample(list(_NEWS_RELATED), 3)),
        )
        ps = news("news-w1-syndicated", synd, 1, byline_extra=", Example Wire")
        self.case(
            "syndication",
            "syndicated article with a new headline and an ad paragraph",
            [wp1, ps],
            "near-duplicate",
            "wire story republished on another host with a new headline and an inserted ad",
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_max=12,
        )

        # 7. Teaser: the first two paragraphs of a full article, on a link blog.
        a4 = next_en()
        p4 = news("news-a4", a4, 1)
        teaser_url = f"https://talk.example.net/links/{a4.slug}/"
        tp = self.add(
            "talk-a4-teaser",
            teaser_url,
            _talk_html(
                a4.title, teaser_url, "linkbot", a4.published, a4.paragraphs[:2], (), kind="teaser"
            ),
            doc_type="article",
            fetched_at=self.when(2),
        )
        self.case(
            "teaser",
            "teaser (first two paragraphs) of a full article",
            [p4, tp],
            "near-duplicate",
            "the teaser is contained in the full article (containment, not similarity)",
            same_raw_sha256=False,
            exact_main_text=False,
            main_text_contained=True,
        )

        # 8. Too short to judge: two out-of-stock stubs.
        stubs = []
        for i, colour in enumerate(("Blue", "Red")):
            name = f"Ceramic Mug, {colour}"
            url = f"https://shop.example.com/p/ceramic-mug-{colour.lower()}/"
            stubs.append(
                self.add(
                    f"shop-stub-{i + 1}",
                    url,
                    _stub_html(name, url),
                    doc_type="product",
                    fetched_at=self.when(1),
                    expect="too_short",
                )
            )
        self.case(
            "short_texts",
            "short texts of a few tokens",
            stubs,
            "unsure",
            "out-of-stock stubs: a handful of words cannot say whether two pages are the same",
            extraction_status="too_short",
            main_tokens_max=7,
        )

        # 9. Empty extraction: an empty <body> and a script-only application shell.
        e1 = self.add(
            "news-empty",
            "https://news.example.com/live/election-night/",
            _empty_html(
                "https://news.example.com/live/", "Live | The Example Courier", app_shell=False
            ),
            doc_type="article",
            fetched_at=self.when(2),
            expect="empty",
        )
        e2 = self.add(
            "shop-app-shell",
            "https://shop.example.com/app/wishlist/",
            _empty_html("https://shop.example.com/app/", "Example Shop", app_shell=True),
            doc_type="product",
            fetched_at=self.when(2),
            expect="empty",
        )
        self.case(
            "empty_extraction",
            "empty extraction",
            [e1, e2],
            "unsure",
            "no text: empty text is never a duplicate of empty text",
            extraction_status="empty",
            no_fingerprint=True,
        )

        # 10. Login walls at many URLs and block pages (403, 429).
        blocked: list[DemoPage] = []
        for i in range(7):
            next_path = f"/{rng.choice(list(_NEWS_MENU)).lower()}/2026/03/0{rng.randint(1, 5)}/" + (
                f"story-{rng.randint(1000, 9999)}/"
            )
            url = f"https://news.example.com/account/login?next={quote(next_path, safe='')}"
            blocked.append(
                self.add(
                    f"news-login-{i + 1}",
                    url,
                    _login_html(url, next_path),
                    doc_type="other",
                    fetched_at=self.when(i % 4),
                    expect="blocked",
                )
            )
        for i in range(3):
            url = f"https://shop.example.com/p/{_slugify(_SHOP_RELATED[i])}/"
            ref = f"{rng.randint(1, 99)}.{rng.getrandbits(32):08x}"
            blocked.append(
                self.add(
                    f"shop-403-{i + 1}",
                    url,
                    _blocked_html(403, url, ref),
                    doc_type="other",
                    fetched_at=self.when(3),
                    status=403,
                    expect="blocked",
                )
            )
        for i in range(2):
            url = f"https://news.example.com/search/?q=harbour&page={i + 2}"
            ref = f"{rng.randint(1, 99)}.{rng.getrandbits(32):08x}"
            blocked.append(
                self.add(
                    f"news-429-{i + 1}",
                    url,
                    _blocked_html(429, url, ref),
                    doc_type="other",
                    fetched_at=self.when(3),
                    status=429,
                    expect="blocked",
                    extra_headers=(("Retry-After", "120"),),
                )
            )
        url = "https://xinwen.example.cn/search/?q=%E5%9C%B0%E9%93%81"
        ref = f"{rng.randint(1, 99)}.{rng.getrandbits(32):08x}"
        blocked.append(
            self.add(
                "cn-403-1",
                url,
                _blocked_html(403, url, ref, lang="zh"),
                doc_type="other",
                fetched_at=self.when(3),
                encoding="gbk",
                status=403,
                expect="blocked",
            )
        )
        self.case(
            "blocked_pages",
            "login wall at many URLs and block pages",
            blocked,
            "distinct",
            "login walls and 403/429 challenge pages carry no content: status blocked, "
            "never a duplicate of an article, never a candidate",
            extraction_status="blocked",
        )

        # 11. Different articles on the same template.
        a5, a6 = next_en(), next_en()
        p5 = news("news-a5", a5, 1)
        p6 = news("news-a6", a6, 1)
        self.case(
            "same_template",
            "different articles on the same template",
            [p5, p6],
            "distinct",
            "same site template, unrelated stories: the main texts are far apart",
            # The words method cannot promise distance here: English function words keep
            # unrelated articles within a few bits of each other. Word 3-shingles can.
            method=SHINGLE,
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_min=16,
        )

        # 12a. NFC vs NFD Vietnamese.
        vi_topics = list(_VI_TOPICS)
        rng.shuffle(vi_topics)
        v1 = self.vi_article(vi_topics.pop())
        vurl = f"https://tintuc.example.vn/{_slugify(v1.section)}/{v1.slug}.html"
        vhtml = _vi_html(v1, vurl, "utf-8")
        vp = self.add("vn-a1", vurl, vhtml, doc_type="article", fetched_at=self.when(0))
        vp_nfd = self.add(
            "vn-a1-nfd",
            vurl.replace(".html", "-amp.html"),
            unicodedata.normalize("NFD", vhtml),
            doc_type="article",
            fetched_at=self.when(2),
        )
        self.case(
            "unicode_nfc_nfd",
            "NFC vs NFD variants of a Vietnamese article",
            [vp, vp_nfd],
            "duplicate",
            "same text; one page spells every diacritic as combining characters (NFD)",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 12b. Full-width vs half-width letters and digits on a Chinese (GBK) page.
        zh_topics = list(_ZH_TOPICS)
        rng.shuffle(zh_topics)
        z1 = self.zh_article(zh_topics.pop())
        model = f"HX{rng.randint(100, 999)}"
        extra = (
            f"新型号{model}的设备共有{rng.randint(20, 90)}台，编号从A001开始，"
            f"首批将于{rng.randint(4, 11)}月投入使用。"
        )
        z1 = replace(z1, paragraphs=(*z1.paragraphs, extra))
        z1_fw = replace(z1, paragraphs=tuple(to_fullwidth(p) for p in z1.paragraphs))
        zurl = f"https://xinwen.example.cn/{z1.published:%Y%m%d}/{z1.slug}.html"
        zp = self.add(
            "cn-a1",
            zurl,
            _zh_html(z1, zurl),
            doc_type="article",
            fetched_at=self.when(0),
            encoding="gbk",
        )
        zurl_m = zurl.replace("://xinwen.", "://m.xinwen.")
        zp_fw = self.add(
            "cn-a1-fullwidth",
            zurl_m,
            _zh_html(z1_fw, zurl_m),
            doc_type="article",
            fetched_at=self.when(1),
            encoding="gbk",
        )
        self.case(
            "fullwidth_halfwidth",
            "full-width vs half-width letters and digits",
            [zp, zp_fw],
            "duplicate",
            "same text; the mobile page writes letters and digits full-width (ＨＸ vs HX)",
            method=CJK,
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 13. The same URL re-fetched later: only the footer time stamp differs.
        a7 = next_en()
        p7 = news("news-a7", a7, 0)
        p7_again = news("news-a7-refetch", a7, 3)
        self.case(
            "refetch_timestamp",
            "the same page re-fetched with a new timestamp",
            [p7, p7_again],
            "duplicate",
            "same URL fetched three days later; only the 'page generated' stamp changed",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # Filler: ordinary distinct pages on every site.
        filler: list[DemoPage] = []
        for i in range(2):
            art = next_en()
            filler.append(news(f"news-f{i + 1}", art, i % 4))
        wire_story: tuple[_Article, DemoPage] | None = None
        for i in range(1):
            art = next_en(_WIRE_RELATED)
            url = f"https://wire.example.org/{_slugify(art.section)}/{art.slug}"
            filler.append(
                self.add(
                    f"wire-f{i + 1}",
                    url,
                    _wire_html(art, url),
                    doc_type="article",
                    fetched_at=self.when(i + 1),
                )
            )
            wire_story = (art, filler[-1])
        for i in range(len(_FORUM_TOPICS)):
            title, paragraphs = self.forum_post(i)
            user = _FORUM_USERS[i]
            replies = [(rng.choice(_FORUM_USERS), r) for r in rng.sample(list(_FORUM_REPLIES), 2)]
            url = f"https://talk.example.net/t/{_slugify(title)}/{rng.randint(1000, 9999)}"
            posted = _BASE_TIME - timedelta(days=rng.randint(1, 20))
            filler.append(
                self.add(
                    f"talk-f{i + 1}",
                    url,
                    _talk_html(title, url, user, posted, paragraphs, replies),
                    doc_type="article",
                    fetched_at=self.when(i % 4),
                )
            )
        for i in range(5):
            prod = self.product(products.pop())
            url = f"https://shop.example.com/p/{prod.slug}/"
            filler.append(
                self.add(
                    f"shop-f{i + 1}",
                    url,
                    _product_html(prod, url),
                    doc_type="product",
                    fetched_at=self.when(i % 4),
                )
            )
        for i in range(4):
            art = self.vi_article(vi_topics.pop())
            url = f"https://tintuc.example.vn/{_slugify(art.section)}/{art.slug}.html"
            filler.append(
                self.add(
                    f"vn-f{i + 1}",
                    url,
                    _vi_html(art, url, "utf-8"),
                    doc_type="article",
                    fetched_at=self.when(i % 4),
                )
            )
        art = self.vi_article(vi_topics.pop())
        url = f"https://tintuc.example.vn/{_slugify(art.section)}/{art.slug}.html"
        html_1258 = cp1258_form(_vi_html(art, url, "windows-1258"))
        filler.append(
            self.add(
                "vn-cp1258",
                url,
                html_1258,
                doc_type="article",
                fetched_at=self.when(2),
                encoding="cp1258",
                content_charset="windows-1258",
            )
        )
        for i in range(5):
            art = self.zh_article(zh_topics.pop())
            url = f"https://xinwen.example.cn/{art.published:%Y%m%d}/{art.slug}.html"
            filler.append(
                self.add(
                    f"cn-f{i + 1}",
                    url,
                    _zh_html(art, url),
                    doc_type="article",
                    fetched_at=self.when(i % 4),
                    encoding="gbk",
                )
            )
        self.case(
            "distinct_filler",
            "ordinary unrelated pages on every site",
            filler,
            "distinct",
            "different stories, posts and products; at most a language or a template shared",
            method=SHINGLE,
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_min=10,
        )
        assert wire_story is not None
        self._partial_copies(*wire_story)
        self._rewritten_copies()

    def _partial_copies(self, art: _Article, original: DemoPage) -> None:
        """Copies SimHash cannot see (built last, so the pages above stay as they were):
        an excerpt of a wire story, and the whole story inside another site's own
        introduction and closing lines."""
        middle = art.paragraphs[1:3]
        excerpt_url = f"https://talk.example.net/links/{art.slug}-excerpt/"
        excerpt = self.add(
            "talk-wire-excerpt",
            excerpt_url,
            _talk_html(art.title, excerpt_url, "linkbot", art.published, middle, (), kind="teaser"),
            doc_type="article",
            fetched_at=self.when(3),
        )
        self.case(
            "excerpt",
            "excerpt (two middle paragraphs) of a wire story on another site",
            [original, excerpt],
            "near-duplicate",
            "the excerpt is wholly inside the wire story; far in SimHash bits, found by "
            "shared passages",
            same_raw_sha256=False,
            exact_main_text=False,
            passage_channel=True,
            passage_containment_pct_min=80,
        )
        intro = (
            "Our regional desk adds: readers along the coast asked what this story means "
            "for the harbour towns, so we are republishing the agency report in full below "
            "with a note from our own newsroom before and after it. Fishing crews, ferry "
            "operators and the two boatyards on the estuary all told us last week that they "
            "had heard rumours but no details, and several letters to this paper asked for "
            "the full text rather than a summary."
        )
        outro = (
            "Local angle: the county council told our newsroom it would publish its own "
            "response next week, and the harbour board will discuss the matter at its "
            "monthly meeting, which is open to the public and streamed online. The "
            "chamber of commerce plans a breakfast briefing for shop owners on the quay, "
            "and the ferry company says timetables for the summer season are not affected "
            "for now. Send your questions to the regional desk and we will put them to the "
            "council."
        )
        title = f"{art.title} (regional edition)"
        wrapped_art = replace(
            art,
            title=title,
            slug=self.unique_slug(title),
            paragraphs=(intro, *art.paragraphs, outro),
            related=tuple(self.rng.sample(list(_NEWS_RELATED), 3)),
        )
        at = self.when(4)
        url = (
            f"https://news.example.com/{_slugify(wrapped_art.section)}/"
            f"{wrapped_art.published:%Y/%m/%d}/{wrapped_art.slug}/"
        )
        wrapped = self.add(
            "news-wire-wrapped",
            url,
            _news_html(
                wrapped_art, url, f"{at:%Y-%m-%d %H:%M:%S} UTC", byline_extra=", Example Wire"
            ),
            doc_type="article",
            fetched_at=at,
        )
        self.case(
            "intro_outro",
            "the whole wire story inside another site's introduction and closing lines",
            [original, wrapped],
            "near-duplicate",
            "all of the agency text is inside the longer page; its own intro and outro are "
            "the only additions",
            same_raw_sha256=False,
            exact_main_text=False,
            passage_channel=True,
            passage_containment_pct_min=80,
        )

    def _rewritten_copies(self) -> None:
        """Copies only the meaning gives away (built last, so the pages above stay as
        they were): a story rewritten by a content farm, the same facts in the same order
        in new words, and other stories on the same topic. The texts are hand-written
        (demo/banks/rewrites.json): sentence templates cannot paraphrase."""

        def article(name: str, day: int) -> _Article:
            story = _bank("rewrites", name)
            return _Article(
                slug=self.unique_slug(story["title"]),
                title=story["title"],
                paragraphs=tuple(story["paragraphs"]),
                author=self.rng.choice(_EN_AUTHORS),
                published=_BASE_TIME + timedelta(days=day),
                comments=self.rng.randint(0, 60),
                related=tuple(self.rng.sample(list(_NEWS_RELATED), 3)),
                section="Regions",
            )

        def page(page_id: str, art: _Article, host: str, day: int, **kw: Any) -> DemoPage:
            at = self.when(day)
            url = f"https://{host}/{_slugify(art.section)}/{art.published:%Y/%m/%d}/{art.slug}/"
            html = _news_html(art, url, f"{at:%Y-%m-%d %H:%M:%S} UTC", **kw)
            return self.add(page_id, url, html, doc_type="article", fetched_at=at)

        vote = page("news-bridge-vote", article("bridge_vote", 1), "news.example.com", 1)
        farm = page(
            "farm-bridge-vote",
            article("bridge_vote_rewritten", 2),
            "roundup.example.org",
            2,
            redesign=True,
        )
        jam = page("news-bridge-jam", article("bridge_jam", 3), "news.example.com", 3)
        court = page("news-bridge-court", article("bridge_court", 4), "news.example.com", 4)
        self.case(
            "rewritten_story",
            "a story rewritten by a content farm: the same facts in the same order, new words",
            [vote, farm],
            "near-duplicate",
            "every fact of the council story, in its order, reworded sentence by sentence; "
            "SimHash and shared passages do not see it, the embeddings' cosine does",
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_min=6,
            passage_channel=False,
            semantic_cosine_min=0.81,
        )
        self.case(
            "same_topic_other_story",
            "other stories on the same topic: the same town and bridge, other events",
            [vote, jam, court],
            "distinct",
            "the bridge jammed open one day, a court challenge another: the same place, "
            "people and bridge, but not the same story",
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_min=6,
            passage_channel=False,
            semantic_cosine_max=0.72,
        )


def build_demo_crawl(seed: int = 7) -> tuple[list[DemoPage], list[DemoCase]]:
    """The demo pages (in crawl order: by fetch time, then id) and the answer key."""
    crawl = _Crawl(seed)
    crawl.build()
    pages = sorted(crawl.pages, key=lambda p: (p.fetched_at, p.id))
    return pages, crawl.cases


# --------------------------------------------------------------------------------------
# Output.
# --------------------------------------------------------------------------------------


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record_id(seed: int, name: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_ID_NAMESPACE, f'{seed}/{name}')}>"


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def write_warc(pages: list[DemoPage], out: BinaryIO, *, seed: int = 7) -> int:
    """Gzipped WARC: one warcinfo, one request (before the first response), a response
    per page, and one revisit (an identical re-fetch of the first page) at the end.
    Returns the number of records written."""
    if not pages:
        raise ValueError("no pages to write")
    writer = WARCWriter(out, gzip=True)
    first = pages[0]
    start = min(p.fetched_at for p in pages)
    info_id = _record_id(seed, "warcinfo")

    info = {
        "software": GENERATOR,
        "format": "WARC File Format 1.0",
        "description": f"Dedup Desk demo crawl, seed {seed}; all content is invented",
        "isPartOf": f"dedup-desk-demo-{seed}",
    }
    info_body = "".join(f"{k}: {v}\r\n" for k, v in info.items()).encode("utf-8")
    warcinfo = writer.create_warc_record(
        "",
        "warcinfo",
        payload=BytesIO(info_body),
        length=len(info_body),
        warc_content_type="application/warc-fields",
        warc_headers=StatusAndHeaders(
            "",
            [
                ("WARC-Type", "warcinfo"),
                ("WARC-Record-ID", info_id),
                ("WARC-Filename", f"dedup-desk-demo-{seed}.warc.gz"),
                ("WARC-Date", _iso(start - timedelta(minutes=1))),
            ],
            protocol="WARC/1.0",
        ),
    )
    writer.write_record(warcinfo)
    written = 1

    def response_id(page: DemoPage) -> str:
        return _record_id(seed, f"response/{page.id}")

    for page in pages:
        if page is first:
            host = page.url.split("/")[2]
            path = "/" + page.url.split("/", 3)[3] if page.url.count("/") >= 3 else "/"
            request = StatusAndHeaders(
                f"GET {path} HTTP/1.1",
                [
                    ("Host", host),
                    ("User-Agent", "DedupDeskDemoBot/1.0 (+https://example.com/bot)"),
                    ("Accept", "text/html,application/xhtml+xml"),
                ],
                is_http_request=True,
            )
            writer.write_record(
                writer.create_warc_record(
                    page.url,
                    "request",
                    http_headers=request,
                    warc_headers_dict={
                        "WARC-Record-ID": _record_id(seed, f"request/{page.id}"),
                        "WARC-Date": _iso(page.fetched_at),
                        "WARC-Concurrent-To": response_id(page),
                        "WARC-Warcinfo-ID": info_id,
                    },
                )
            )
            written += 1
        status = f"{page.http_status} {_REASONS.get(page.http_status, 'Unknown')}"
        http = StatusAndHeaders(status, list(page.headers), protocol="HTTP/1.1")
        writer.write_record(
            writer.create_warc_record(
                page.url,
                "response",
                payload=BytesIO(page.body),
                length=len(page.body),
                http_headers=http,
                warc_headers_dict={
                    "WARC-Record-ID": response_id(page),
                    "WARC-Date": _iso(page.fetched_at),
                    "WARC-Warcinfo-ID": info_id,
                },
            )
        )
        written += 1

    # An unchanged re-fetch recorded as a revisit (headers only, no payload).
    later = max(p.fetched_at for p in pages) + timedelta(minutes=10)
    revisit_headers = [
        (k, format_datetime(later, usegmt=True) if k == "Date" else v) for k, v in first.headers
    ]
    writer.write_record(
        writer.create_revisit_record(
            first.url,
            _sha1_b32(first.body),
            first.url,
            _iso(first.fetched_at),
            http_headers=StatusAndHeaders("200 OK", revisit_headers, protocol="HTTP/1.1"),
            warc_headers_dict={
                "WARC-Record-ID": _record_id(seed, f"revisit/{first.id}"),
                "WARC-Date": _iso(later),
                "WARC-Refers-To": response_id(first),
                "WARC-Warcinfo-ID": info_id,
            },
        )
    )
    return written + 1


def page_html(page: DemoPage) -> str:
    return page.body.decode(page.encoding)


def write_jsonl(pages: list[DemoPage], out: TextIO) -> int:
    """One JSON object a line (url, html, status, fetched_at, headers, final_url,
    doc_type); the html is decoded, so Content-Type says utf-8 and the length is gone."""
    for page in pages:
        headers = {k: v for k, v in page.headers if k != "Content-Length"}
        headers["Content-Type"] = "text/html; charset=utf-8"
        row = {
            "url": page.url,
            "html": page_html(page),
            "status": page.http_status,
            "fetched_at": _iso(page.fetched_at),
            "headers": headers,
            "final_url": page.url,
            "doc_type": page.doc_type,
        }
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(pages)


def expectations(pages: Sequence[DemoPage], cases: Sequence[DemoCase], seed: int) -> dict:
    """The answer key written beside the crawl (OUT.expected.json)."""
    return {
        "seed": seed,
        "generator": GENERATOR,
        "main_text": MAIN_TEXT_EXTRACTOR,
        "full_text": FULL_TEXT_EXTRACTOR,
        "check_keys": CHECK_KEYS,
        "pages": [
            {
                "id": p.id,
                "url": p.url,
                "site": p.site,
                "doc_type": p.doc_type,
                "fetched_at": _iso(p.fetched_at),
                "encoding": p.encoding,
                "http_status": p.http_status,
                "expect_extraction": p.expect_extraction,
            }
            for p in pages
        ],
        "cases": [
            {
                "case": c.case,
                "title": c.title,
                "pages": list(c.pages),
                "expected_label": c.expected_label,
                "reason": c.reason,
                "checks": c.checks,
            }
            for c in cases
        ],
    }


def expectations_path(out: Path) -> Path:
    """OUT.warc.gz / OUT.warc / OUT.jsonl → OUT.expected.json beside it."""
    name = out.name
    for suffix in (".warc.gz", ".warc", ".jsonl.gz", ".jsonl"):
        if name.endswith(suffix):
            return out.with_name(name[: -len(suffix)] + ".expected.json")
    return out.with_name(name + ".expected.json")
