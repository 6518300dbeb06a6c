"""Chinese and Vietnamese reposts made from real pages, for the language benchmark.

Pure functions (no Django, no network): the development pages of
``../shared/data/zh-vi-dev/`` in, generated pages and labelled pairs out. A generated
page is a real article's text (or a transformation of it) placed into the page template
of another real page, usually of another site: the template's article container is
emptied and filled with the new title and paragraphs, its ``<title>`` and description
metadata are replaced, everything else (menus, sidebars, footers, scripts) stays.

Transformation kinds (each pair is ``a`` = the article's page as found, ``b`` = the
generated page, unless said otherwise):

  repost_verbatim     the same text on another site
  repost_source_line  + a 本文来源 / 版权 line (vi: "Theo …" / "Nguồn: …")
  retitle_del2_comment  a new title, two paragraphs deleted, a comment paragraph inserted
  paragraph_shuffle   the paragraphs in another order
  excerpt_wrapped     40–60% of the text (contiguous paragraphs or sentences) between the
                      other site's own introduction and closing lines
  menu_only_change    the article's own page, recrawled with other menu items (same URL)
  price_change        a revision: the same page (same URL, later fetch) with another price;
                      both sides generated, a price sentence inserted where the text has none
  script_convert      (zh) simplified → traditional (or back), with OpenCC
  hard negatives      every pair of generated pages under one template that carry different
                      articles (articles whose texts overlap are left out)

plus fixtures written here: login walls served at many URLs and JavaScript shells whose
only text is the site menu, in Chinese, Vietnamese and English.

Everything is seeded: the same pages and seed give the same pages and pairs, byte for byte.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import lxml.html
from lxml import etree

from ingest.core import boilerplate

KINDS_COMMON = (
    "repost_verbatim",
    "repost_source_line",
    "retitle_del2_comment",
    "paragraph_shuffle",
    "excerpt_wrapped",
    "menu_only_change",
    "price_change",
)
KINDS = {"zh": (*KINDS_COMMON, "script_convert"), "vi": KINDS_COMMON}
# Labels of the generated kinds (the development set's label names).
LABELS = {
    "repost_verbatim": "duplicate",
    "repost_source_line": "near-duplicate",
    "retitle_del2_comment": "near-duplicate",
    "paragraph_shuffle": "near-duplicate",
    "excerpt_wrapped": "near-duplicate",
    "menu_only_change": "duplicate",
    "price_change": "revision",
    "script_convert": "duplicate",
    "hard_negative": "different",
}

_SENT = {"zh": re.compile(r"(?<=[。！？!?])"), "vi": re.compile(r"(?<=[.!?])\s+")}


@dataclass(frozen=True)
class DevPage:
    id: str
    url: str
    html: str
    lang: str
    origin: str
    gold_text: str | None
    transformation: str | None
    charset: str | None

    @property
    def host(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()

    def body(self) -> bytes:
        """The page's bytes: encoded in the charset it declares (utf-8 when none)."""
        codec = (self.charset or "utf-8").lower()
        try:
            return self.html.encode(codec, errors="xmlcharrefreplace")
        except LookupError:
            return self.html.encode("utf-8")


@dataclass(frozen=True)
class GenPage:
    """A page the benchmark ingests beside the development pages."""

    key: str  # unique name, e.g. "zh:repost_verbatim:3:b"
    url: str
    body: bytes
    lang: str
    kind: str  # transformation, or "login_wall" / "js_shell"
    source: str  # the development page whose article it carries ("" for fixtures)
    template: str  # the development page whose template it uses ("" for fixtures)
    fetch_order: int = 0  # later fetches ingest later (a revision comes after its original)


@dataclass(frozen=True)
class GenPair:
    a: str  # dev page id or GenPage key
    b: str
    lang: str
    kind: str
    label: str
    natural: bool = False


@dataclass
class Corpus:
    pages: list[GenPage] = field(default_factory=list)
    pairs: list[GenPair] = field(default_factory=list)
    fixtures: dict[str, list[str]] = field(default_factory=dict)  # kind -> page keys

    def digest(self) -> str:
        h = hashlib.sha256()
        for p in self.pages:
            h.update(p.key.encode() + b"\0" + p.url.encode() + b"\0" + p.body)
        for q in self.pairs:
            h.update(f"{q.a}|{q.b}|{q.kind}".encode())
        return h.hexdigest()[:12]


def load_pages(data: Path) -> list[DevPage]:
    out = []
    with gzip.open(data / "pages.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            html = r["html"]
            if r.get("raw_b64"):
                html = base64.b64decode(r["raw_b64"]).decode(
                    r.get("charset_declared") or "utf-8", errors="replace"
                )
            out.append(
                DevPage(
                    id=r["id"],
                    url=r["url"],
                    html=html,
                    lang=r["lang"],
                    origin=r["origin"],
                    gold_text=r.get("gold_text") or None,
                    transformation=r.get("transformation"),
                    charset=r.get("charset_declared"),
                )
            )
    return out


def load_pairs(data: Path) -> list[dict[str, Any]]:
    with open(data / "pairs.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --- text helpers -------------------------------------------------------------------


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n") if p.strip()]


def sentences(text: str, lang: str) -> list[str]:
    return [s.strip() for s in _SENT[lang].split(text) if s.strip()]


def units(paras: list[str], lang: str, want: int) -> list[str]:
    """The paragraphs, or, when there are fewer than ``want``, their sentences (a text
    in one block still shuffles and excerpts by its sentences)."""
    if len(paras) >= want:
        return paras
    out = [s for p in paras for s in sentences(p, lang)]
    return out if len(out) > len(paras) else paras


def grams(text: str, lang: str, n: int = 5) -> set[str]:
    """Character n-grams (zh, whitespace dropped) or word n-grams (vi, casefolded)."""
    if lang == "zh":
        t = re.sub(r"\s+", "", text)
        return {t[i : i + n] for i in range(max(0, len(t) - n + 1))}
    ws = re.findall(r"\w+", text.casefold())
    return {" ".join(ws[i : i + n]) for i in range(max(0, len(ws) - n + 1))}


def containment(a: str, b: str, lang: str) -> float:
    """The larger share of either text's 5-grams found in the other."""
    ga, gb = grams(a, lang), grams(b, lang)
    if not ga or not gb:
        return 0.0
    shared = len(ga & gb)
    return max(shared / len(ga), shared / len(gb))


# --- transformations of an article (title, paragraphs) -------------------------------

_ZH_SOURCE_LINES = (
    "本文来源：{site}，版权归原作者所有，如有侵权请联系删除。",
    "（本文来源：{site}　版权归原作者所有）",
    "来源：{site}　转载请注明出处，版权归原作者所有。",
    "声明：本文转载自{site}，版权归原作者所有，仅供学习交流。",
)
_VI_SOURCE_LINES = ("Theo {site}", "Nguồn: {site}", "(Theo {site})", "Nguồn tin: {site}")
_ZH_OUTLETS = ("新华网", "人民网", "澎湃新闻", "中国日报", "凤凰网", "新浪财经", "央视新闻")
_VI_OUTLETS = ("VnExpress", "Tuổi Trẻ", "Thanh Niên", "Dân trí", "VietNamNet", "Zing News")
_ZH_TITLE_PREFIX = ("关注｜", "重磅！", "最新：", "热点丨", "刚刚，")
_VI_TITLE_PREFIX = ("Nóng: ", "Tin mới: ", "Chú ý: ", "Cập nhật: ")
_ZH_COMMENTS = (
    "网友热议：不少网友表示，希望相关部门能够持续关注，给公众一个明确的答复。",
    "编者按：此事引发广泛关注，本网将持续跟进报道。",
    "有网友评论称，这件事值得每一个人深思。",
)
_VI_COMMENTS = (
    "Bình luận của bạn đọc: nhiều người cho rằng cơ quan chức năng cần sớm vào cuộc làm rõ.",
    "Ghi chú của tòa soạn: chúng tôi sẽ tiếp tục cập nhật thông tin về sự việc này.",
    "Nhiều độc giả bày tỏ sự quan tâm đặc biệt tới vấn đề này trong những ngày qua.",
)
_ZH_INTROS = ("【{site}讯】", "{site}消息，", "据{site}报道：")
_ZH_OUTROS = (
    "责任编辑：小编 | 转载请注明出处",
    "（完）更多精彩请关注{site}",
    "编辑：{site}新闻中心",
)
_VI_INTROS = ("({site}) - ", "{site} đưa tin:", "Theo thông tin từ {site},")
_VI_OUTROS = ("Mời bạn đọc xem thêm tin tức trên {site}.", "Biên tập: Ban Thời sự {site}")

_ZH_PRICE = re.compile(r"(?:[¥￥]\s*)?\d[\d,.]*\s*(?:万|亿)?\s*元")
_VI_PRICE = re.compile(r"\d{1,3}(?:\.\d{3})+\s*(?:đồng|đ|VNĐ|VND|USD)")


def source_line(paras: list[str], lang: str, rng: random.Random) -> list[str]:
    lines, outlets = (
        (_ZH_SOURCE_LINES, _ZH_OUTLETS) if lang == "zh" else (_VI_SOURCE_LINES, _VI_OUTLETS)
    )
    line = rng.choice(lines).format(site=rng.choice(outlets))
    return [*paras, line] if lang == "vi" or rng.random() < 0.7 else [line, *paras]


def retitle_del2_comment(
    title: str, paras: list[str], lang: str, rng: random.Random
) -> tuple[str, list[str]]:
    prefix = rng.choice(_ZH_TITLE_PREFIX if lang == "zh" else _VI_TITLE_PREFIX)
    ps = units(paras, lang, 6)
    if len(ps) >= 5:
        drop = set(rng.sample(range(1, len(ps)), 2))
        ps = [p for i, p in enumerate(ps) if i not in drop]
    at = rng.randint(1, max(1, len(ps) - 1))
    comment = rng.choice(_ZH_COMMENTS if lang == "zh" else _VI_COMMENTS)
    return prefix + title, [*ps[:at], comment, *ps[at:]]


def shuffle(paras: list[str], lang: str, rng: random.Random) -> list[str]:
    ps = list(units(paras, lang, 4))
    original = list(ps)
    for _ in range(10):
        rng.shuffle(ps)
        if ps != original or len(ps) < 2:
            break
    return ps


def excerpt(paras: list[str], lang: str, rng: random.Random) -> list[str]:
    """A contiguous run of units holding 40–60% of the text's characters."""
    ps = units(paras, lang, 6)
    total = sum(len(p) for p in ps)
    target = rng.uniform(0.4, 0.6) * total
    best: tuple[float, int, int] | None = None
    for start in range(len(ps)):
        size = 0
        for end in range(start, len(ps)):
            size += len(ps[end])
            score = abs(size - target)
            if best is None or score < best[0]:
                best = (score, start, end)
    assert best is not None
    return ps[best[1] : best[2] + 1]


def wrap(paras: list[str], lang: str, site: str, rng: random.Random) -> list[str]:
    intros, outros = (_ZH_INTROS, _ZH_OUTROS) if lang == "zh" else (_VI_INTROS, _VI_OUTROS)
    return [rng.choice(intros).format(site=site), *paras, rng.choice(outros).format(site=site)]


def price_pair(paras: list[str], lang: str, rng: random.Random) -> tuple[list[str], list[str]]:
    """(before, after): the text with one price, and the same text with another. The
    first price the text states changes; a text without one gets a price sentence."""
    pattern = _ZH_PRICE if lang == "zh" else _VI_PRICE
    ps = list(paras)
    for i, p in enumerate(ps):
        m = pattern.search(p)
        if m and re.search(r"[1-9]", m.group(0)):
            new = _price_changed(m.group(0), lang, rng)
            after = list(ps)
            after[i] = p[: m.start()] + new + p[m.end() :]
            if after != ps:
                return ps, after
    amount = rng.randrange(12, 990) * (100 if lang == "zh" else 10_000)
    factor = rng.choice((1.1, 1.2, 1.25, 1.5))
    new_amount = int(round(amount * factor, -2))
    at = min(len(ps), max(1, len(ps) // 2))
    if lang == "zh":
        line = "该产品目前售价为{}元，线上线下同价。"
        before, after_line = line.format(f"{amount:,}"), line.format(f"{new_amount:,}")
    else:
        line = "Giá bán hiện tại là {} đồng, áp dụng toàn quốc."
        before, after_line = (line.format(f"{v:,}".replace(",", ".")) for v in (amount, new_amount))
    return [*ps[:at], before, *ps[at:]], [*ps[:at], after_line, *ps[at:]]


def _price_changed(price: str, lang: str, rng: random.Random) -> str:
    digits = re.search(r"\d[\d,.]*\d|\d", price)
    assert digits is not None
    raw = digits.group(0)
    factor = rng.choice((1.1, 1.2, 1.25, 1.5))
    if lang == "vi":  # dots separate thousands
        text = f"{int(int(raw.replace('.', '')) * factor) + 1000:,}".replace(",", ".")
    elif "," in raw:
        text = f"{int(float(raw.replace(',', '')) * factor) + 1:,}"
    elif "." in raw:
        text = f"{float(raw) * factor + 0.1:.1f}"
    else:
        text = str(int(int(raw) * factor) + 1)
    return price[: digits.start()] + text + price[digits.end() :]


def script_convert(text: str) -> str:
    """Simplified → traditional (Taiwan phrases), or traditional → simplified when the
    text is already traditional. Needs OpenCC (the `bench` extra)."""
    to_trad = _converter("s2t").convert(text)
    if to_trad != text:
        return to_trad
    return _converter("t2s").convert(text)


@functools.cache
def _converter(config: str) -> Any:
    import opencc  # the bench extra; imported here so the rest runs without it

    return opencc.OpenCC(config)


# --- page templates -----------------------------------------------------------------

_CONTAINER_TAGS = ("div", "article", "section", "td", "main")


def _text_len(el: Any) -> int:
    return len("".join(el.itertext()).strip())


def _scored(doc: Any) -> list[tuple[int, Any]]:
    """Every possible article container with its score, in document order: the
    characters of its direct paragraphs (and direct text), links not counted."""
    out = []
    for el in doc.iter(*_CONTAINER_TAGS):
        score = len((el.text or "").strip())
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag in ("p", "br", "span", "font", "strong", "b"):
                links = sum(_text_len(a) for a in child.iter("a"))
                score += max(0, _text_len(child) - 2 * links) if child.tag != "br" else 0
            score += len((child.tail or "").strip())
        if score > 0:
            out.append((score, el))
    return out


def _container(doc: Any) -> Any | None:
    """The template's article container: the element of the highest score (the first
    of them)."""
    best, best_score = None, 0
    for score, el in _scored(doc):
        if score > best_score:
            best, best_score = el, score
    return best


def _paras_of(container: Any) -> list[str]:
    """Each child block's text, and the container's own text between them."""
    paras = [(container.text or "").strip()]
    for child in container:
        if isinstance(child.tag, str) and child.tag not in ("script", "style", "h1"):
            paras.append(re.sub(r"\s+", " ", child.text_content()).strip())
        paras.append((child.tail or "").strip())
    return [p for p in paras if p]


def _title(doc: Any) -> str:
    h1 = doc.find(".//h1")
    return (h1.text_content() if h1 is not None else doc.findtext(".//title") or "").strip()


def article_of(html: str, keep: Callable[[list[str]], bool] | None = None) -> tuple[str, list[str]]:
    """(title, paragraphs) of a page's article container: the highest-scoring container
    (the one ``transplant`` fills) whose paragraphs ``keep`` accepts (any, without
    ``keep``); no paragraphs when none is accepted."""
    doc = lxml.html.document_fromstring(html)
    title = _title(doc)
    for _score, el in sorted(_scored(doc), key=lambda c: -c[0]):  # stable: ties keep order
        paras = _paras_of(el)
        if keep is None or keep(paras):
            return title, paras
    return title, []


def _page_line_keys(html: str) -> set[int]:
    """The keys (the product's boilerplate line keys) of the paragraphs of every possible
    article container of a page."""
    doc = lxml.html.document_fromstring(html)
    keys = (boilerplate.line_key(p) for _s, el in _scored(doc) for p in _paras_of(el))
    return {k for k in keys if k is not None}


def site_lines(pages: Sequence[DevPage]) -> dict[str, set[int]]:
    """Per page id, the lines its site repeats: container paragraphs found on enough of
    the other pages of the same host, by the product's rule for a site's boilerplate lines
    (``ingest.core.boilerplate.learn``: on at least 3 other pages and 30% of them)."""
    by_host: dict[str, list[DevPage]] = defaultdict(list)
    for p in pages:
        by_host[p.host].append(p)
    keys = {p.id: _page_line_keys(p.html) for p in pages}
    return {
        p.id: boilerplate.learn([keys[o.id] for o in by_host[p.host] if o.url != p.url])
        for p in pages
    }


def in_text_share(part: str, whole: str, lang: str) -> float:
    """The share of ``part``'s 5-grams found in ``whole``."""
    gp = grams(part, lang)
    return len(gp & grams(whole, lang)) / len(gp) if gp else 0.0


def transplant(template_html: str, title: str, paras: Sequence[str]) -> bytes:
    """The template page with its article replaced by ``title`` and ``paras``, as UTF-8
    bytes declaring UTF-8. Raises ValueError when the template has no article container."""
    doc = lxml.html.document_fromstring(template_html)
    container = _container(doc)
    if container is None:
        raise ValueError("no article container in the template")
    for child in list(container):
        container.remove(child)
    container.text = "\n"
    heading = etree.SubElement(container, "h1")
    heading.text = title
    for p in paras:
        el = etree.SubElement(container, "p")
        el.text = p
        el.tail = "\n"
    # Other headings outside the container keep the old article's title: replace them.
    for h in doc.iter("h1"):
        if h is not heading and container not in h.iterancestors():
            for child in list(h):
                h.remove(child)
            h.text = title
    head = doc.find("head")
    if head is None:
        head = etree.Element("head")
        doc.insert(0, head)
    for meta in list(head.iter("meta")):
        name = (meta.get("name") or meta.get("property") or "").lower()
        if meta.get("charset") is not None or (meta.get("http-equiv") or "").lower() == (
            "content-type"
        ):
            meta.getparent().remove(meta)
        elif name in ("description", "og:description", "twitter:description"):
            meta.set("content", paras[0][:120] if paras else title)
        elif name in ("og:title", "twitter:title", "title", "keywords"):
            meta.set("content", title)
    charset = etree.Element("meta", charset="utf-8")
    head.insert(0, charset)
    t = head.find("title")
    if t is None:
        t = etree.SubElement(head, "title")
    for child in list(t):
        t.remove(child)
    t.text = title
    return lxml.html.tostring(doc, encoding="utf-8", doctype="<!DOCTYPE html>")


def menu_changed(html: str, rng: random.Random, lang: str) -> bytes:
    """The same page with its menu edited: a few short link texts near the top renamed
    and one menu item added (what a recrawl of the same URL finds a week later)."""
    doc = lxml.html.document_fromstring(html)
    links = [a for a in doc.iter("a") if 0 < len((a.text_content() or "").strip()) <= 12]
    top = links[: max(3, len(links) // 3)]
    words = (
        ("专题", "视频", "直播", "数据", "活动")
        if lang == "zh"
        else (
            "Video",
            "Podcast",
            "Sự kiện",
            "Infographic",
            "Bất động sản",
        )
    )
    for a in rng.sample(top, min(3, len(top))):
        for child in list(a):
            a.remove(child)
        a.text = rng.choice(words) + str(rng.randrange(10))
    if top:
        new = etree.Element("a", href="/new-section/")
        new.text = rng.choice(words)
        new.tail = " "
        top[0].addnext(new)
    head = doc.find("head")
    if head is not None:
        for meta in list(head.iter("meta")):
            if meta.get("charset") is not None or (meta.get("http-equiv") or "").lower() == (
                "content-type"
            ):
                meta.getparent().remove(meta)
        head.insert(0, etree.Element("meta", charset="utf-8"))
    return lxml.html.tostring(doc, encoding="utf-8", doctype="<!DOCTYPE html>")


# --- fixtures: login walls and JavaScript shells --------------------------------------

_WALL = {
    "zh": (
        "用户登录 - 会员中心",
        "请登录后查看全文",
        "用户名 / 手机号",
        "密码",
        "验证码",
        "登录",
        "没有账号？立即注册 | 忘记密码",
        "登录即表示同意《用户协议》和《隐私政策》",
    ),
    "vi": (
        "Đăng nhập tài khoản",
        "Vui lòng đăng nhập để đọc tiếp bài viết",
        "Email hoặc số điện thoại",
        "Mật khẩu",
        "Mã xác nhận",
        "Đăng nhập",
        "Chưa có tài khoản? Đăng ký ngay | Quên mật khẩu",
        "Bằng việc đăng nhập, bạn đồng ý với Điều khoản sử dụng và Chính sách bảo mật",
    ),
    "en": (
        "Sign in to your account",
        "Please sign in to continue reading this article",
        "Email or username",
        "Password",
        "Verification code",
        "Sign in",
        "No account yet? Register now | Forgot your password?",
        "By signing in you agree to our Terms of Use and Privacy Policy",
    ),
}
_MENU = {
    "zh": ("首页", "新闻", "财经", "科技", "体育", "娱乐", "汽车", "房产", "教育", "视频", "登录"),
    "vi": (
        "Trang chủ",
        "Thời sự",
        "Thế giới",
        "Kinh doanh",
        "Giải trí",
        "Thể thao",
        "Pháp luật",
        "Giáo dục",
        "Sức khỏe",
        "Đời sống",
        "Đăng nhập",
    ),
    "en": (
        "Home",
        "News",
        "World",
        "Business",
        "Technology",
        "Sport",
        "Culture",
        "Opinion",
        "Video",
        "Podcasts",
        "Sign in",
    ),
}
_FIXTURE_HOSTS = {
    "zh": "www.example-zh-portal.cn",
    "vi": "example-vi-bao.vn",
    "en": "news.example.org",
}


def login_wall(lang: str) -> bytes:
    title, prompt, user, password, captcha, button, links, terms = _WALL[lang]
    menu = "".join(f'<li><a href="/c{i}/">{m}</a></li>' for i, m in enumerate(_MENU[lang]))
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
        f'</head><body><header><ul class="nav">{menu}</ul></header><main><div class="login">'
        f"<h1>{title}</h1><p>{prompt}</p><form method=post action=/login>"
        f'<label>{user}<input name="u"></label><label>{password}<input type=password name=p>'
        f'</label><label>{captcha}<input name="c"><img src="/captcha.png"></label>'
        f"<button>{button}</button></form><p>{links}</p><p>{terms}</p></div></main>"
        f"<footer><p>© 2026 {_FIXTURE_HOSTS[lang]}</p></footer></body></html>"
    ).encode()


def js_shell(lang: str) -> bytes:
    menu = "".join(f'<li><a href="/c{i}/">{m}</a></li>' for i, m in enumerate(_MENU[lang]))
    more = " · ".join(reversed(_MENU[lang]))
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{_MENU[lang][1]}'
        f'</title><script src="/static/app.3f9a.js" defer></script></head><body>'
        f'<nav><ul class="menu">{menu}</ul></nav><div id="app"></div>'
        f"<noscript>JavaScript</noscript><footer><p>{more}</p></footer>"
        "<script>window.__INITIAL_STATE__={};</script></body></html>"
    ).encode()


# --- the corpus -----------------------------------------------------------------------


@dataclass(frozen=True)
class Article:
    page: DevPage
    title: str
    paras: list[str]


def articles(
    pages: Iterable[DevPage],
    text_of: Callable[[DevPage], tuple[str, str]],
    min_chars: int = 100,
    agree: float = 0.5,
) -> dict[str, list[Article]]:
    """The articles to transform, per language: zh real article pages and vi pages that
    carry a whole article (not a transformation), with their (title, text).

    The text is the page's gold text where known. Else it is the text of the page's
    article container: the highest-scoring container (``_scored``) that is not
    boilerplate, that is whose text the extractor ``text_of`` keeps (at least ``agree`` of
    its 5-grams are in the extracted text: a footer or sidebar the extractor drops is not
    the article) and less than half of whose characters are lines its site repeats
    (``site_lines``). When no such container holds ``min_chars`` characters, the text is
    the extracted text itself."""
    pages = list(pages)
    repeated = site_lines(pages)
    out: dict[str, list[Article]] = defaultdict(list)
    for p in pages:
        if p.transformation or p.lang not in KINDS:
            continue
        if p.lang == "zh" and p.origin != "real":
            continue
        if p.gold_text:
            title, _ = article_of(p.html)
            paras = paragraphs(p.gold_text)
        else:
            main_title, main = text_of(p)
            site = repeated[p.id]

            def keep(
                ps: list[str], main: str = main, site: set[int] = site, lang: str = p.lang
            ) -> bool:
                ours = sum(len(x) for x in ps if boilerplate.line_key(x) not in site)
                total = sum(len(x) for x in ps)
                return in_text_share("\n".join(ps), main, lang) >= agree and 2 * ours > total

            title, paras = article_of(p.html, keep)
            if sum(len(x) for x in paras) < min_chars:
                title, paras = main_title, paragraphs(main)
        if sum(len(x) for x in paras) >= min_chars:
            out[p.lang].append(Article(p, title or paras[0][:30], paras))
    return out


def templates(
    pages: Iterable[DevPage], usable: Callable[[DevPage], bool]
) -> dict[str, list[DevPage]]:
    """Pages whose template can carry another article, per language."""
    out: dict[str, list[DevPage]] = defaultdict(list)
    for p in pages:
        if p.lang in KINDS and not p.transformation and usable(p):
            out[p.lang].append(p)
    return out


def build(
    arts: dict[str, list[Article]],
    temps: dict[str, list[DevPage]],
    *,
    per_kind: int = 30,
    seed: int = 29,
    fixtures_per_kind: int = 10,
    overlap: Callable[[Article, Article], bool] | None = None,
) -> Corpus:
    """Generate ``per_kind`` pairs of every kind per language, the hard negatives among
    the generated pages, and the fixtures."""
    rng = random.Random(seed)
    corpus = Corpus()
    by_template: dict[str, list[tuple[str, str]]] = defaultdict(list)  # template -> (key, src)
    for lang in sorted(KINDS):
        pool, temp_pool = arts.get(lang, []), temps.get(lang, [])
        if not pool or not temp_pool:
            continue
        used: set[tuple[str, str, str]] = set()
        for kind in KINDS[lang]:
            for i in range(per_kind):
                art = pool[(i + rng.randrange(len(pool))) % len(pool)]
                others = [t for t in temp_pool if t.host != art.page.host] or [
                    t for t in temp_pool if t.id != art.page.id
                ]
                # A fresh (article, template) for each pair of a kind where there are enough.
                for _ in range(20):
                    tmpl = rng.choice(others)
                    if (kind, art.page.id, tmpl.id) not in used:
                        break
                used.add((kind, art.page.id, tmpl.id))
                key = f"{lang}:{kind}:{i}"
                site = tmpl.host.split(".")[-2] if "." in tmpl.host else tmpl.host
                path = hashlib.sha256(key.encode()).hexdigest()[:12]
                url = f"https://{tmpl.host}/{kind.replace('_', '-')}/{path}.html"
                title, paras = art.title, list(art.paras)
                a_key = art.page.id
                order = 1
                if kind == "menu_only_change":
                    body = menu_changed(art.page.html, rng, lang)
                    url, tmpl = art.page.url, art.page
                elif kind == "price_change":
                    before, after = price_pair(paras, lang, rng)
                    a_key = f"{key}:a"
                    a_url = url
                    corpus.pages.append(
                        GenPage(
                            a_key,
                            a_url,
                            transplant(tmpl.html, title, before),
                            lang,
                            kind,
                            art.page.id,
                            tmpl.id,
                            1,
                        )
                    )
                    body = transplant(tmpl.html, title, after)
                    order = 2
                else:
                    if kind == "repost_source_line":
                        paras = source_line(paras, lang, rng)
                    elif kind == "retitle_del2_comment":
                        title, paras = retitle_del2_comment(title, paras, lang, rng)
                    elif kind == "paragraph_shuffle":
                        paras = shuffle(paras, lang, rng)
                    elif kind == "excerpt_wrapped":
                        paras = wrap(excerpt(paras, lang, rng), lang, site, rng)
                    elif kind == "script_convert":
                        title, paras = script_convert(title), [script_convert(p) for p in paras]
                    body = transplant(tmpl.html, title, paras)
                    by_template[tmpl.id].append((f"{key}:b", art.page.id))
                corpus.pages.append(
                    GenPage(f"{key}:b", url, body, lang, kind, art.page.id, tmpl.id, order)
                )
                corpus.pairs.append(GenPair(a_key, f"{key}:b", lang, kind, LABELS[kind]))
    # Hard negatives: generated pages under one template carrying different articles.
    lang_of = {p.key: p.lang for p in corpus.pages}
    art_of = {a.page.id: a for pool in arts.values() for a in pool}
    for _tmpl, members in sorted(by_template.items()):
        for i, (ka, sa) in enumerate(members):
            for kb, sb in members[i + 1 :]:
                if sa == sb:
                    continue
                if overlap is not None and overlap(art_of[sa], art_of[sb]):
                    continue
                corpus.pairs.append(
                    GenPair(ka, kb, lang_of[ka], "hard_negative", LABELS["hard_negative"])
                )
    for lang in ("zh", "vi", "en"):
        host = _FIXTURE_HOSTS[lang]
        for kind, make in (("login_wall", login_wall), ("js_shell", js_shell)):
            body = make(lang)
            keys = corpus.fixtures.setdefault(kind, [])
            for i in range(fixtures_per_kind):
                key = f"{lang}:{kind}:{i}"
                path = "/user/login?next=/news/" if kind == "login_wall" else "/news/"
                url = f"https://{host}{path}{1000 + 37 * i}.html"
                corpus.pages.append(GenPage(key, url, body, lang, kind, "", "", 1))
                keys.append(key)
    return corpus
