"""What a page declares about where its text comes from: its publication time, the name
it gives itself, and the sources it credits ("来源：新华网", "Nguồn: VnExpress", "Theo
Tuổi Trẻ", "Source: Reuters"). The representative policy reads these to pick the
original of a copy made across sites (the page another page credits, then the earlier
publication). Pure: no Django; never raises on any input.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

# Meta tags that carry a publication time, most specific first.
_TIME_META = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "publishdate",
    "pubdate",
    "publish_date",
    "date",
    "dc.date.issued",
    "dc.date",
)
# Meta tags that name the site itself.
_NAME_META = ("og:site_name", "application-name", "twitter:site", "author")

# A credit line: a label, a colon (ASCII or full-width) or a space for "Theo", then the
# source. Only short lines count: a credit is not a paragraph.
_CREDIT_MAX_CHARS = 80
# Theo VnExpress / (Theo Tuổi Trẻ) — at the start of a short line only
_THEO = re.compile(r"^[\s(\[]*theo\s+(?P<src>[^\s].{0,60})$", re.IGNORECASE)
_CREDIT_PATTERNS = (
    # 本文来源：新华网 / 来源：人民日报 / 文章来源: … / 转载自 …/ 稿件来源
    re.compile(
        r"^[\s(（【\[]*(?:本文|文章|稿件|新闻|消息)?(?:来源|來源|转载自|轉載自|出处|出處)\s*[:：]?\s*(?P<src>.+)$"
    ),
    # Nguồn: VnExpress / Nguồn tin: …
    re.compile(r"^[\s(\[]*ngu[ồô]n(?:\s+tin)?\s*[:：]\s*(?P<src>.+)$", re.IGNORECASE),
    _THEO,
    # Source: Reuters / (Source: AP) / Originally published by …
    re.compile(
        r"^[\s(\[]*(?:source|originally published (?:by|on|in)|reprinted from)\s*[:：]?\s*"
        r"(?P<src>.+)$",
        re.IGNORECASE,
    ),
)
# Chinese "发布时间：2024-01-02 10:00", "发布时间: 2024年1月2日", "时间：…" in the text.
_TEXT_TIME = re.compile(
    r"(?:发布时间|發佈時間|发表时间|發表時間|发布日期|ngày đăng|đăng lúc|published)\s*[:：]?\s*"
    r"(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*日?"
    r"(?:\s+(?P<H>\d{1,2})[:：](?P<M>\d{2}))?",
    re.IGNORECASE,
)
# Vietnamese date lines (a byline or a dateline on a short line of its own, never a date
# inside a sentence): "09:15 07/02/2017", "07/02/2017 09:15", "Thứ năm, 9/2/2017, 10:30
# (GMT+7)", "Thể thao Việt Nam | 09:15 07/02/2017", "Cập nhật: 07/02/2017", "ngày 7
# tháng 2 năm 2017". Vietnamese pages keep Vietnam's clock (GMT+7) unless they name
# another zone.
_VI_WEEKDAY = r"(?:th[ứu]\s+(?:hai|ba|t[ưu]|n[ăa]m|s[áa]u|b[ảa]y|\d)|ch[ủu]\s+nh[ậa]t)"
_VI_LABEL = (
    r"(?:ng[àa]y\s+[đd][ăa]ng|[đd][ăa]ng\s+l[úu]c|[đd][ăa]ng\s+ng[àa]y|c[ậa]p\s+nh[ậa]t"
    r"(?:\s+l[úu]c)?|xu[ấa]t\s+b[ảa]n|th[ờo]i\s+gian(?:\s+[đd][ăa]ng)?)"
)
_VI_SEP = r"[\s,|·–—-]*"
_VI_DATE_LINE = re.compile(
    r"^(?:[^|·\d]{0,40}[|·]\s*)?"  # a section or site name, then a bar
    rf"(?:{_VI_LABEL}\s*[:：]?\s*)?"
    rf"(?:{_VI_WEEKDAY}{_VI_SEP})?"
    rf"(?:(?P<H1>\d{{1,2}})\s*[:hg]\s*(?P<M1>\d{{2}}){_VI_SEP})?"
    r"(?:(?P<d>\d{1,2})\s*[/.-]\s*(?P<m>\d{1,2})\s*[/.-]\s*(?P<y>\d{4})"
    r"|ng[àa]y\s+(?P<d2>\d{1,2})\s+th[áa]ng\s+(?P<m2>\d{1,2})\s+n[ăa]m\s+(?P<y2>\d{4}))"
    rf"(?:{_VI_SEP}(?P<H2>\d{{1,2}})\s*[:hg]\s*(?P<M2>\d{{2}}))?"
    rf"(?:{_VI_SEP}\(?\s*(?:gmt|utc)\s*(?P<zone>[+-]\s*\d{{1,2}})(?::?00)?\s*\)?)?"
    r"[\s.)]*$",
    re.IGNORECASE,
)
_VI_LINE_MAX_CHARS = 80
_VI_ZONE_HOURS = 7
_TAGS = re.compile(
    r"<(?:script|style)\b.*?</(?:script|style)\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL
)
_META_TAG = re.compile(r"<meta\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""([a-zA-Z_:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_LD_JSON = re.compile(
    r"<script\b[^>]*application/ld\+json[^>]*>(?P<body>.*?)</script>", re.IGNORECASE | re.DOTALL
)
_TIME_TAG = re.compile(
    r"<time\b[^>]*\bdatetime\s*=\s*[\"']([^\"']+)[\"'][^>]*\bpubdate\b|"
    r"<time\b[^>]*\bpubdate\b[^>]*\bdatetime\s*=\s*[\"']([^\"']+)[\"']",
    re.IGNORECASE,
)
# Only the head and the start of a page are scanned for meta tags.
_HTML_SCAN_CHARS = 200_000
_YEARS = (1990, 2199)


@dataclass(frozen=True)
class Provenance:
    published_at: datetime | None = None
    # How the time was found: "meta:article:published_time", "json-ld", "text", …
    published_by: str = ""
    site_name: str = ""
    # Sources the page credits, as written (trimmed).
    credits: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {
            "published_at": self.published_at.isoformat() if self.published_at else None,
            "published_by": self.published_by,
            "site_name": self.site_name,
            "credits": list(self.credits),
        }


def provenance_read(html: str, main_text: str) -> Provenance:
    """The page's declared publication time, own name and credited sources."""
    try:
        head = html[:_HTML_SCAN_CHARS] if isinstance(html, str) else ""
        text = main_text if isinstance(main_text, str) else ""
        metas = _metas(head)
        published, how = _published(metas, head, text)
        return Provenance(
            published_at=published,
            published_by=how,
            site_name=_site_name(metas),
            credits=credits_read(text),
        )
    except Exception:  # hostile input: a page that breaks a rule declares nothing
        return Provenance()


def credits_read(text: str) -> tuple[str, ...]:
    """The sources credited on short lines of the text, in order, without repeats."""
    found: list[str] = []
    for raw in text.splitlines():
        line = unicodedata.normalize("NFKC", raw).strip()
        if not line or len(line) > _CREDIT_MAX_CHARS:
            continue
        for pattern in _CREDIT_PATTERNS:
            m = pattern.match(line)
            if m:
                source = _trim_source(m.group("src"))
                if pattern is _THEO:
                    source = _theo_source(source)
                if source and source not in found:
                    found.append(source)
                break
    return tuple(found)


# A credit names a source in a few words: "Theo Tuổi Trẻ", not "Theo các chuyên gia
# phong thủy, …" (a sentence that starts with "according to").
_SOURCE_MAX_WORDS = 5


def _theo_source(source: str) -> str:
    """The source a "Theo …" line names, or "" when the line is a sentence: the part
    after an author's slash ("Trần Kháng/ Reatimes.vn"), the name in an author's
    parentheses ("PV (Kiến Thức)", "Tào Nga (Tổng hợp) (Khám phá"), a capitalised
    name (or a host) of at most _SOURCE_MAX_WORDS words."""
    if "/" in source:
        source = source.rsplit("/", 1)[1]
    if "(" in source:
        inside = [p.split(")")[0].strip() for p in source.split("(")[1:]]
        named = [p for p in inside if p and not re.match(r"(?i)(?:tổng hợp|video|ảnh)\b", p)]
        source = named[-1] if named else source.split("(")[0]
    source = source.strip(" \t)）】]>\"'“”.。:-")
    words = source.split()
    if not words or len(words) > _SOURCE_MAX_WORDS:
        return ""
    first = words[0]
    if not (first[0].isupper() or first[0].isdigit() or "." in first):
        return ""  # "theo thông tin trên", "theo ghi nhận của PV": a sentence
    return source


def _trim_source(source: str) -> str:
    source = re.split(r"[，,;；|｜]|\s{2,}|(?:版权|版權|责任编辑|責任編輯)", source, maxsplit=1)[0]
    return source.strip(" \t)）】]>\"'“”.。")


def names_of(site_name: str, host: str) -> set[str]:
    """What a credit may call this page's site: its declared name, its host, the host
    without www., and the host's first label beyond www (e.g. "vnexpress")."""
    names = set()
    if site_name.strip():
        names.add(_fold(site_name))
    host = host.lower().strip(".")
    if host:
        names.add(host)
        bare = host[4:] if host.startswith("www.") else host
        names.add(bare)
        label = bare.split(".")[0]
        if len(label) >= 4:
            names.add(label)
    return {n for n in names if n}


def credits_name(credits: tuple[str, ...] | list[str], names: set[str] | frozenset[str]) -> bool:
    """Whether one of the credits names a site known by `names`. A Vietnamese credit
    also matches without its diacritics ("Tuổi Trẻ" names tuoitre.vn)."""
    for credit in credits:
        folded = _fold(credit)
        forms = {folded, _strip_marks(folded)}
        for name in names:
            if name and any(name == f or name in f for f in forms):
                return True
    return False


def _fold(s: str) -> str:
    return unicodedata.normalize("NFKC", s).casefold().replace(" ", "").strip()


def _strip_marks(s: str) -> str:
    decomposed = unicodedata.normalize("NFD", s.replace("đ", "d").replace("Đ", "D"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _metas(head: str) -> dict[str, str]:
    metas: dict[str, str] = {}
    for tag in _META_TAG.findall(head):
        attrs = {k.lower(): (a or b or c) for k, a, b, c in _ATTR.findall(tag)}
        key = (attrs.get("property") or attrs.get("name") or attrs.get("itemprop") or "").lower()
        value = attrs.get("content", "").strip()
        if key and value and key not in metas:
            metas[key] = value
    return metas


def _published(metas: dict[str, str], head: str, text: str) -> tuple[datetime | None, str]:
    for key in _TIME_META:
        if key in metas and (when := parse_time(metas[key])):
            return when, f"meta:{key}"
    for ld in _LD_JSON.finditer(head):
        when = _ld_date(ld.group("body"))
        if when:
            return when, "json-ld"
    for tag in _TIME_TAG.finditer(head):
        when = parse_time(tag.group(1) or tag.group(2))
        if when:
            return when, "time[pubdate]"
    when = vietnamese_date(text[:5000])
    if when is not None:
        return when, "text:vi"
    when = vietnamese_date(_visible_lines(head))
    if when is not None:
        return when, "page:vi"
    m = _TEXT_TIME.search(text[:5000])
    if m:
        try:
            when = datetime(
                int(m["y"]),
                int(m["m"]),
                int(m["d"]),
                int(m["H"] or 0),
                int(m["M"] or 0),
                tzinfo=UTC,
            )
        except ValueError:
            return None, ""
        if _YEARS[0] <= when.year <= _YEARS[1]:
            return when, "text"
    return None, ""


def _visible_lines(html: str) -> str:
    """The page's text, one line per element (tags, scripts and styles dropped)."""
    return "\n".join(x.strip() for x in _TAGS.sub("\n", html).splitlines() if x.strip())


def vietnamese_date(text: str) -> datetime | None:
    """The first Vietnamese date line of the text (see _VI_DATE_LINE), in UTC: the
    page's clock is GMT+7 unless the line names another zone. None when no short line
    is a date, or the date is impossible or outside the plausible years."""
    for raw in text.splitlines():
        line = unicodedata.normalize("NFC", raw).strip()
        if not line or len(line) > _VI_LINE_MAX_CHARS or not any(c.isdigit() for c in line):
            continue
        m = _VI_DATE_LINE.match(line)
        if m is None:
            continue
        day, month, year = (m["d"] or m["d2"]), (m["m"] or m["m2"]), (m["y"] or m["y2"])
        hour, minute = (m["H1"] or m["H2"] or "0"), (m["M1"] or m["M2"] or "0")
        zone = int(m["zone"].replace(" ", "")) if m["zone"] else _VI_ZONE_HOURS
        try:
            local = datetime(int(year), int(month), int(day), int(hour), int(minute))
            when = (local - timedelta(hours=zone)).replace(tzinfo=UTC)
        except (ValueError, OverflowError):
            continue
        if _YEARS[0] <= when.year <= _YEARS[1]:
            return when
    return None


def _ld_date(body: str) -> datetime | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    stack: list[Any] = [data]
    seen = 0
    while stack and seen < 200:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            value = item.get("datePublished")
            if isinstance(value, str) and (when := parse_time(value)):
                return when
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(item)
    return None


def parse_time(value: str) -> datetime | None:
    """An ISO 8601 time (date only, with or without zone) as UTC; None when unusable."""
    value = (value or "").strip()
    if not value:
        return None
    value = value.replace("Z", "+00:00").replace("/", "-")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?", value):
        value = value.replace(" ", "T")
    try:
        when = datetime.fromisoformat(value[:32])
    except ValueError:
        m = re.match(r"(\d{4})-(\d{1,2})-(\d{1,2})", value)
        if not m:
            return None
        try:
            when = datetime(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return None
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when if _YEARS[0] <= when.year <= _YEARS[1] else None


def _site_name(metas: dict[str, str]) -> str:
    for key in _NAME_META:
        value = metas.get(key, "").strip().lstrip("@")
        if value and len(value) <= 100:
            return value
    return ""
