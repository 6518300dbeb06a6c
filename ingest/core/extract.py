"""Text extraction; the current extractor version is ``EXTRACTOR_VERSION``.

Guarantees: ``extract`` never raises; it always returns an ``Extracted`` whose
``status`` is one of ``STATUSES``. Two branches come out of every page:

- ``main_text``: trafilatura, paragraphs one per line. ``trafilatura-2-doctype-v3``
  (current) runs it as ``trafilatura-2-v2`` did, with one difference by the doc type the
  page declares (``ingest.core.doctype``): a forum thread or a listing keeps its
  comments — on a forum thread the replies are the content —, and so does a page
  declaring itself an article or nothing whose markup is a discussion thread
  (``ingest.core.doctype.thread_markup``), while every other page drops them.
  ``trafilatura-2-v2`` runs it with its fallback extractors (not ``fast``), tables kept,
  comments dropped, only ``<nav>`` elements without paragraphs pruned;
  ``trafilatura-2-fast-v1`` ran it in fast mode with ``<nav>`` pruned, which kept a menu,
  a footer or a teaser instead of the article on some table-layout pages and emptied
  articles laid out inside a ``<nav>``;
- ``full_text``: every visible text block of the page (menus, footers included), one
  block per line, spaces folded.

A page nested deeper than the HTML parser's limit (``MAX_DEPTH`` elements) would lose
every text below that depth: its formatting and layout tags are dropped and the flat
page extracted, with a message saying so; if it is still too deep, the status is
``error`` and ``full_text`` is the page with its tags stripped.

Everything here is part of the extractor version: changing an option, the block list
or a status rule means a new extractor version in ``ingest.core.methods`` (and new
method keys).

Crawl-quality pages get the status ``blocked`` and a ``quality`` saying what they are,
so that they never enter the candidate index (a login wall served at a thousand URLs is
a crawl problem, not a thousand copies): ``login_wall``, ``paywall``, ``bot_challenge``
(captcha), ``access_denied``, ``rate_limited`` — from the HTTP status, or from a phrase
(English, Chinese, Vietnamese) or a password field on a short page — and ``nav_shell``:
a short page whose main text is only link texts of short lines (a client-rendered page
fetched without running its script, whose "main text" is the site menu). The rules are
written out in ``docs/page-kinds.md``.

``doc_type`` is what the page declares (``ingest.core.doctype``), read from the same
parsed tree before its scripts are dropped.

``language`` is a heuristic, not a classifier: the ``<html lang>`` primary subtag when
present, else the script of the text (Han → zh, kana → ja, Hangul → ko, Vietnamese
letters → vi, mostly ASCII letters → en, else ``und``).
"""

import html as htmllib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import trafilatura
from lxml import etree

from ingest.core.doctype import ARTICLE, FORUM, OTHER, DocTypeGuess, infer_doc_type, thread_markup
from ingest.core.doctype import NONE as NO_DOC_TYPE
from ingest.core.methods import EXTRACTOR, EXTRACTOR_V1, EXTRACTOR_V2
from ingest.core.normalize import fold_spaces, nfc_words, tokens_words

EXTRACTOR_VERSION = EXTRACTOR

_V2_OPTIONS: dict[str, Any] = {
    "fast": False,
    "prune_xpath": "//nav[not(.//p)]",
    "include_comments": False,
}
# Forum threads and listings keep what trafilatura takes for comments (on a thread the
# replies are the content, on a listing they are often its entries), and nothing is
# pruned (a thread's posts sit in navigation-like blocks on some forum software).
_THREAD_OPTIONS: dict[str, Any] = {"fast": False, "include_comments": True}
# trafilatura.extract options of each extractor version's main-text branch, by the doc
# type the page declares (ingest.core.doctype; "*": every doc type not named). From
# trafilatura-2-doctype-v3 on, a page that declares itself a forum thread or a listing
# keeps its comments; every other page drops them as before (readers' comments are not
# an article; on product and undeclared pages keeping them lowered the word F1 on
# wcxb-dev: bench/results/2026-12-02-forums.md).
_MAIN_OPTIONS: dict[str, dict[str, dict[str, Any]]] = {
    EXTRACTOR_V1: {"*": {"fast": True, "prune_xpath": "//nav", "include_comments": False}},
    EXTRACTOR_V2: {"*": _V2_OPTIONS},
    EXTRACTOR: {"*": _V2_OPTIONS, "forum": _THREAD_OPTIONS, "listing": _THREAD_OPTIONS},
}
EXTRACTORS = frozenset(_MAIN_OPTIONS)


def options_doc_type(version: str, guess: DocTypeGuess, root: Any, url: str) -> str:
    """The doc type whose options ``version``'s main-text branch uses for a page: the
    declared one, except that under ``trafilatura-2-doctype-v3`` a page declaring itself
    an article or nothing whose markup is a discussion thread (``thread_markup``: forum
    software, schema.org posts, repeated post blocks at a thread URL) is extracted as a
    forum thread, its replies kept."""
    if version == EXTRACTOR and guess.doc_type in (ARTICLE, OTHER) and thread_markup(root, url):
        return FORUM
    return guess.doc_type


def main_options(version: str, doc_type: str) -> dict[str, Any]:
    """The trafilatura options of ``version``'s main-text branch for a page of
    ``doc_type`` (what the page declares)."""
    by_type = _MAIN_OPTIONS[version]
    return by_type.get(doc_type, by_type["*"])


# libxml2's HTML parser stops building the tree below this many nested elements.
MAX_DEPTH = 256

STATUSES = frozenset({"ok", "empty", "too_short", "blocked", "error"})
# What a blocked page is (Extracted.quality); "" for every other status.
QUALITIES = frozenset(
    {"login_wall", "paywall", "bot_challenge", "access_denied", "rate_limited", "nav_shell"}
)
BLOCKED_HTTP_STATUSES = frozenset({401, 403, 407, 429, 451})
_HTTP_QUALITY = {
    401: "login_wall",
    407: "login_wall",
    403: "access_denied",
    451: "access_denied",
    429: "rate_limited",
}
# A page longer than this (in words, Han characters counted two to a word) is content
# even if it mentions logging in or a captcha.
SHORT_PAGE_WORDS = 150


@dataclass(frozen=True)
class Extracted:
    status: str  # "ok" | "empty" | "too_short" | "blocked" | "error"
    main_text: str
    full_text: str
    title: str
    language: str  # ISO 639-1 where known, else "und"
    main_tokens: int  # tokens of main_text as the reference fingerprint counts them
    full_tokens: int
    message: str = ""  # why blocked, or the error
    quality: str = ""  # one of QUALITIES when blocked, else ""
    doc_type: DocTypeGuess = NO_DOC_TYPE  # what the page declares itself to be


_DROP_TAGS = (
    "head",
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "iframe",
    "object",
    "embed",
    "canvas",
    "select",
    "datalist",
)
_BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "option",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)

# Phrases that, on a short page, mean a login wall, a paywall or a bot challenge.
_BLOCK_PHRASES: tuple[tuple[str, str], ...] = tuple(
    (phrase, signal)
    for signal, phrases in (
        (
            "login wall",
            (
                "sign in to continue",
                "log in to continue",
                "login to continue",
                "please log in",
                "please sign in",
                "please login",
                "you must be logged in",
                "you need to log in",
                "đăng nhập để tiếp tục",
                "đăng nhập để xem",
                "đăng nhập để đọc",
                "vui lòng đăng nhập",
                "bạn cần đăng nhập",
                "bạn phải đăng nhập",
                "yêu cầu đăng nhập",
                "请登录",
                "请先登录",
                "登录后",
                "登录查看",
                "您还未登录",
                "您尚未登录",
                "请登入",
                "請登入",
                "請先登入",
                "登入後",
            ),
        ),
        (
            "paywall",
            (
                "subscribe to continue reading",
                "subscribe to read",
                "subscribers only",
                "đăng ký để đọc tiếp",
                "订阅后阅读",
            ),
        ),
        (
            "bot challenge",
            (
                "verify you are human",
                "verify you are a human",
                "are you a robot",
                "not a robot",
                "captcha",
                "checking your browser",
                "just a moment",
                "enable javascript",
                "enable cookies",
                "xác minh bạn không phải là robot",
                "bạn không phải là robot",
                "mã xác nhận",
                "mã captcha",
                "验证码",
                "驗證碼",
                "人机验证",
                "安全验证",
                "请完成验证",
                "访问过于频繁",
            ),
        ),
        (
            "access denied",
            (
                "access denied",
                "access to this page has been denied",
                "you have been blocked",
                "request blocked",
                "forbidden",
                "truy cập bị từ chối",
                "từ chối truy cập",
                "bạn không có quyền truy cập",
                "访问被拒绝",
                "拒绝访问",
                "禁止访问",
                "您没有权限",
                "拒絕存取",
                "存取被拒",
            ),
        ),
    )
    for phrase in phrases
)
_QUALITY_OF_SIGNAL = {
    "login wall": "login_wall",
    "paywall": "paywall",
    "bot challenge": "bot_challenge",
    "access denied": "access_denied",
}
# A navigation shell: at least this many main-text lines, this share of the main text's
# characters in lines that are the text of a link, lines of at most this many words on
# average (Han characters two to a word).
NAV_SHELL_MIN_LINES = 3
NAV_SHELL_LINK_SHARE = 0.95
NAV_SHELL_MEAN_WORDS = 4.0

_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA_RE = re.compile(r"[\u3040-\u30ff]")
_HANGUL_RE = re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")
# Latin Extended Additional U+1EA0–U+1EF9 is exactly the Vietnamese letters with tone
# marks; ơ ư đ ă ĩ ũ complete the set (ă/ĩ/ũ alone would also match Romanian etc.).
_VIETNAMESE_RE = re.compile(r"[\u1ea0-\u1ef9ơƠưƯđĐăĂĩĨũŨ]")
_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")
_LANG_RE = re.compile(r"^([a-z]{2,3})(?:[-_]|$)")
_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*>", re.I)
_LANG_SAMPLE = 20_000


def extract(
    html: str,
    *,
    url: str = "",
    http_status: int | None = 200,
    min_tokens: int = 8,
    version: str = EXTRACTOR_VERSION,
) -> Extracted:
    """Both text branches, title, language and status of one page under extractor
    ``version``; never raises for any page (an unknown version is a ValueError)."""
    if version not in _MAIN_OPTIONS:
        raise ValueError(f"unknown extractor version {version!r}; known: {sorted(EXTRACTORS)}")
    try:
        return _extract(_clean_input(html), url, http_status, min_tokens, version)
    except Exception as exc:
        return Extracted("error", "", "", "", "und", 0, 0, f"{type(exc).__name__}: {exc}")


def _clean_input(html: str) -> str:
    # NUL and lone surrogates make lxml raise; neither is visible text.
    if not isinstance(html, str):
        raise TypeError(f"html must be str, got {type(html).__name__}")
    return html.encode("utf-8", errors="replace").decode("utf-8").replace("\x00", "")


def _extract(
    html: str, url: str, http_status: int | None, min_tokens: int, version: str
) -> Extracted:
    root, too_deep = _parse(html)
    note = ""
    if too_deep:
        flat = _flatten(html)
        flat_root, still_too_deep = _parse(flat)
        if still_too_deep or flat_root is None:
            return _too_deep(html, root)
        html, root = flat, flat_root
        note = (
            f"HTML nested deeper than {MAX_DEPTH} elements: its formatting and layout tags "
            "were dropped so that no text is lost"
        )
    title = _title(root) if root is not None else ""
    doc_type = infer_doc_type(root)
    has_password = root is not None and bool(root.xpath("//input[@type='password']"))
    html_lang = _html_lang(root) if root is not None else None
    full_text = _visible_text(root) if root is not None else ""
    main_text = (
        _main_text(html, url, version, options_doc_type(version, doc_type, root, url))
        if root is not None
        else ""
    )

    main_tokens = count_tokens(main_text)
    full_tokens = count_tokens(full_text)
    language = html_lang or guess_language(main_text or full_text)

    def result(status: str, message: str = "", quality: str = "") -> Extracted:
        message = "; ".join(m for m in (message, note) if m)
        return Extracted(
            status,
            main_text,
            full_text,
            title,
            language,
            main_tokens,
            full_tokens,
            message,
            quality,
            doc_type,
        )

    if http_status in BLOCKED_HTTP_STATUSES:
        return result("blocked", f"HTTP {http_status}", _HTTP_QUALITY[http_status])
    # The phrase scan and the Han-aware count only matter for short pages (or a 503);
    # _word_count is never below the token count, so long pages skip both.
    short = max(main_tokens, full_tokens) < SHORT_PAGE_WORDS and (
        # full_text normally contains main_text; trafilatura may find text lxml hides.
        max(_word_count(main_text), _word_count(full_text)) < SHORT_PAGE_WORDS
    )
    signal = (
        _block_signal(f"{title}\n{main_text}\n{full_text}") if short or http_status == 503 else None
    )
    if http_status == 503 and signal:
        message = f"HTTP 503 ({signal[1]}: page says {signal[0]!r})"
        return result("blocked", message, _QUALITY_OF_SIGNAL[signal[1]])
    if short:
        if signal:
            phrase, kind = signal
            return result("blocked", f"{kind}: page says {phrase!r}", _QUALITY_OF_SIGNAL[kind])
        if has_password:
            return result("blocked", "login wall: short page with a password field", "login_wall")
    # A shell's page around the menu may be long (a footer, hidden templates): only its
    # main text has to be short.
    if (
        main_text
        and root is not None
        and main_tokens < SHORT_PAGE_WORDS
        and _word_count(main_text) < SHORT_PAGE_WORDS
    ):
        shell = _navigation_only(main_text, root)
        if shell:
            return result("blocked", shell, "nav_shell")
    if main_tokens == 0:
        return result("empty", "no main text")
    if main_tokens < min_tokens:
        return result("too_short", f"{main_tokens} words of main text, minimum is {min_tokens}")
    return result("ok")


def count_tokens(text: str) -> int:
    """Tokens as the reference fingerprint counts them: words after NFC and space
    folding (decomposed accents would otherwise split words apart)."""
    return len(nfc_words(text)[1])


def _parse(html: str) -> tuple[Any, bool]:
    """(the lxml root element or None when there is no document at all, whether the
    parser stopped at its depth limit and dropped what lies below).

    Plain ``etree`` elements, not ``lxml.html`` ones: its per-element class lookup
    would double the cost of the walk below.
    """
    if not html.strip():
        return None, False
    # lxml refuses str input that carries its own encoding declaration; bytes are fine.
    text = _XML_DECL_RE.sub("", html, count=1)
    parser = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.LxmlError:
        return None, False
    too_deep = any(error.type_name == "ERR_RESOURCE_LIMIT" for error in parser.error_log)
    return root, too_deep


# Tags that only format or lay out text; dropped (block ones as a line break) from a page
# nested too deep to parse.
_LAYOUT_BLOCK = (
    "div|section|article|main|header|footer|aside|nav|center|table|tbody|thead|tfoot|tr|"
    "td|th|ul|ol|dl|dd|dt|blockquote|form|fieldset|figure|figcaption|address|details"
)
_LAYOUT_INLINE = "span|font|b|i|u|s|em|strong|small|big|a|sub|sup|abbr|cite|code|mark|q|tt|ins|del"
_BLOCK_TAG_RE = re.compile(rf"(?:\s*</?(?:{_LAYOUT_BLOCK})\b[^>]*>)+", re.I)
_INLINE_TAG_RE = re.compile(rf"</?(?:{_LAYOUT_INLINE})\b[^>]*>", re.I)
_SCRIPT_RE = re.compile(r"<(script|style|noscript|template)\b.*?</\1\s*>", re.I | re.S)
_ANY_TAG_RE = re.compile(r"<!--.*?-->|<[^>]*>", re.S)


def _flatten(html: str) -> str:
    return _INLINE_TAG_RE.sub("", _BLOCK_TAG_RE.sub("<br>", html))


def _too_deep(html: str, root: Any) -> Extracted:
    """A page too deep even without its layout tags: an error, with the page's text."""
    stripped = _ANY_TAG_RE.sub("\n", _SCRIPT_RE.sub("\n", html))
    lines = (fold_spaces(line) for line in htmllib.unescape(stripped).splitlines())
    full_text = "\n".join(line for line in lines if line)
    title = _title(root) if root is not None else ""
    message = (
        f"HTML nested deeper than {MAX_DEPTH} elements even without its layout tags: the "
        "main text cannot be extracted; full_text is the page with its tags stripped"
    )
    return Extracted(
        "error",
        "",
        full_text,
        title,
        guess_language(full_text),
        0,
        count_tokens(full_text),
        message,
    )


def extractor_main_text(html: str, url: str = "", version: str = EXTRACTOR_VERSION) -> str:
    """The main-text branch alone (what the extraction benchmark compares)."""
    html = _clean_input(html)
    root, _ = _parse(html)
    if root is None:
        return _main_text(html, url, version, NO_DOC_TYPE.doc_type)
    return _main_text(
        html, url, version, options_doc_type(version, infer_doc_type(root), root, url)
    )


def _main_text(html: str, url: str, version: str, doc_type: str) -> str:
    text = trafilatura.extract(
        html,
        url=url or None,
        include_tables=True,
        deduplicate=False,
        output_format="txt",
        **main_options(version, doc_type),
    )
    if not text:
        return ""
    lines = (fold_spaces(line) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _visible_text(root: Any) -> str:
    """Visible text, one block element per line, spaces folded; ``root`` is modified."""
    etree.strip_elements(root, *_DROP_TAGS, with_tail=False)
    for element in root.xpath("//*[@hidden or @style]"):
        if element.get("hidden") is not None or _HIDDEN_STYLE_RE.search(element.get("style")):
            _remove_keep_tail(element)
    # One fold_spaces call over the page is much faster than one per line; NUL marks
    # the block boundaries (it cannot occur in the text: the input was cleaned of it).
    parts: list[str] = []
    append = parts.append
    for event, element in etree.iterwalk(root, events=("start", "end")):
        tag = element.tag
        if not isinstance(tag, str):
            continue
        block = tag in _BLOCK_TAGS
        if event == "start":
            if block:
                append("\x00")
            if element.text:
                append(element.text)
        else:
            append("\x00" if block else " " if tag in ("td", "th") else "")
            if element.tail:
                append(element.tail)
    lines = (line.strip(" ") for line in fold_spaces("".join(parts)).split("\x00"))
    return "\n".join(line for line in lines if line)


def _remove_keep_tail(element: Any) -> None:
    parent = element.getparent()
    if parent is None:
        return
    if element.tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


def _title(root: Any) -> str:
    for path in ("//title", "//h1"):
        for element in root.xpath(path):
            text = fold_spaces("".join(element.itertext()))
            if text:
                return text
    return ""


def _html_lang(root: Any) -> str | None:
    html = root if root.tag == "html" else root.find(".//html")
    if html is None:
        return None
    lang = (html.get("lang") or html.get("xml:lang") or "").strip().lower()
    match = _LANG_RE.match(lang)
    return match.group(1) if match else None


def guess_language(text: str) -> str:
    """Script heuristic (see the module docstring); "und" when unsure."""
    sample = unicodedata.normalize("NFC", text[:_LANG_SAMPLE])
    letters = sum(1 for ch in sample if ch.isalpha())
    if letters < 20:
        return "und"
    kana = len(_KANA_RE.findall(sample))
    han = len(_HAN_RE.findall(sample))
    if kana / letters > 0.05:
        return "ja"
    if han / letters > 0.3:
        return "zh"
    if len(_HANGUL_RE.findall(sample)) / letters > 0.3:
        return "ko"
    vietnamese = len(_VIETNAMESE_RE.findall(sample))
    if vietnamese >= 3 and vietnamese / letters > 0.02:
        return "vi"
    if len(_ASCII_LETTER_RE.findall(sample)) / letters > 0.9:
        return "en"
    return "und"


def _word_count(text: str) -> int:
    """Words, with a run of Han characters counted as one word per two characters."""
    count = 0
    for token in tokens_words(text):
        han = len(_HAN_RE.findall(token))
        count += max(1, (han + 1) // 2 + (1 if han < len(token) else 0)) if han else 1
    return count


def _navigation_only(main_text: str, root: Any) -> str:
    """Why ``main_text`` is only the page's navigation ("" when it is not): its lines are
    link texts of the page, short ones (a menu, not a list of headlines)."""
    lines = main_text.splitlines()
    if len(lines) < NAV_SHELL_MIN_LINES:
        return ""
    links = {fold_spaces("".join(a.itertext())).strip() for a in root.iter("a")}
    linked = sum(len(line) for line in lines if line in links)
    if linked < NAV_SHELL_LINK_SHARE * sum(len(line) for line in lines):
        return ""
    mean_words = sum(_word_count(line) for line in lines) / len(lines)
    if mean_words > NAV_SHELL_MEAN_WORDS:
        return ""
    return (
        f"navigation shell: the main text is {len(lines)} link texts of "
        f"{mean_words:.1f} words on average (the site menu, not content)"
    )


def _block_signal(text: str) -> tuple[str, str] | None:
    """(phrase, signal kind) of the first blocked-page phrase in ``text``."""
    haystack = fold_spaces(unicodedata.normalize("NFC", text)).casefold()
    for phrase, kind in _BLOCK_PHRASES:
        if phrase in haystack:
            return phrase, kind
    return None
