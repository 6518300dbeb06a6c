"""Business guards and similarity scores for candidate pairs: they annotate a
nomination, labels decide.

Guards never change the distance and never decide anything: they are shown to editors,
exported with labels, and block automatic merges. Two pages with identical SimHash
can still be two products at two prices.

Definitions (applied to NFKC-normalized text, so full-width digits and letters count
as ASCII ones):

- ID token: a run of ASCII letters and digits, optionally joined by "-" or "_"
  ("SKU-4411", "AB12-X9", "iPhone15", "x86_64"), with at least one letter, at least
  one digit and at least 4 characters, that is not a number with a short unit suffix
  ("10kg", "128GB", "1080p", "3rd": those are numbers). Compared as sets, casefolded:
  an ID repeated in a breadcrumb is the same ID.
- Numeric token: once ID tokens are removed, a run of digits with inner separators
  . , : / - between digit groups ("1.250.000", "19.99", "2026-05-01", "10:30"; "v2.3"
  gives "2.3", "199 元" gives "199"), with the Chinese multipliers 万 and 亿 ("1.2万",
  "3亿") or the Vietnamese nghìn, triệu, tỷ ("1,5 triệu") that follow it; and a
  Chinese-numeral amount before 元/块/圆 ("一万二千元", "十元": a unit 十百千万亿 and a
  digit, or a leading 十, in it). Compared as
  multisets of values: the same numbers reordered are not a difference, one price changed
  is, and one price written two ways is one value ("1.2万元" = "12000元", "1.234.567đ" =
  "1234567 VNĐ"). No sign and no currency is kept. A number's value:
  - with : / or - in it (dates, times, ranges), the token as written;
  - both . and , in it: the last one is the decimal mark, the other groups thousands
    ("1.234,56" = "1,234.56");
  - one kind repeated: thousands separators if every group after the first has three
    digits ("1.250.000", "1,250,000"), else the token as written ("1.2.10");
  - one separator before three digits: a thousands separator beside a Vietnamese
    currency (đ ₫ VNĐ VND đồng; the đồng has no fractions), a decimal mark in "1,250
    triệu", a thousands separator after "," in any other text and a decimal mark after
    "." (the English convention: "1,250" = 1250, "1.250" = 1.25); before other digit
    counts, a decimal mark ("19.99", "12,5").
- Title: NFC, spaces folded, casefolded; a difference counts only when both titles
  are non-empty.

`similarity` works on bounded excerpts (the first and last max_chars / 2 characters
of a longer text), so a 5 MB page costs what a 20,000-character page costs. Empty or
blank text is similar to nothing (empty is not a duplicate of empty).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from rapidfuzz import fuzz

from ingest.core.normalize import WORD_RE, is_blank, normalize_nfc_v1, tokens_words

MAX_SHOWN = 20  # differing tokens kept for display, per side

_ID_RE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*(?![A-Za-z0-9])")
_LETTER_RE = re.compile(r"[A-Za-z]")
_DIGIT_RE = re.compile(r"[0-9]")
_NUMBER_WITH_UNIT_RE = re.compile(r"[0-9]+(?:[.,][0-9]+)?[A-Za-z]{1,3}")
# Currencies beside a number (after NFKC: ￥ is ¥). They set the separator convention and
# are not part of the value. "đ" only where no letter follows ("đi" is a word).
_VN_CURRENCY = r"vnđ|vnd|₫|đồng|đ(?![^\W\d_])"
_CURRENCY = rf"(?:{_VN_CURRENCY}|元|块|圆|人民币|rmb|cny|¥|\$|€|£|usd|eur)"
_VN_MULTIPLIER = r"(?:nghìn|ngàn|triệu|tỷ|tỉ)(?![^\W\d_])"
_NUMBER_RE = re.compile(
    r"(?P<num>\d+(?:[.,:/\-]\d+)*)"
    rf"(?P<mult>\s?(?:[万萬亿億]+|{_VN_MULTIPLIER}))?"
    rf"(?P<post>\s?{_CURRENCY})?",
    re.IGNORECASE,
)
_VN_RE = re.compile(_VN_CURRENCY, re.IGNORECASE)
_VN_BEFORE_RE = re.compile(r"(?:vnđ|vnd|₫|đ)\s?$", re.IGNORECASE)
_MULTIPLIERS = {
    "万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8,
    "nghìn": 10**3, "ngàn": 10**3, "triệu": 10**6, "tỷ": 10**9, "tỉ": 10**9,
}  # fmt: skip
_ZH_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "两": 2, "贰": 2, "三": 3, "叁": 3,
    "四": 4, "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8,
    "捌": 8, "九": 9, "玖": 9,
}  # fmt: skip
_ZH_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_ZH_BIG = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
_ZH_NUMERAL_RE = re.compile(
    r"(?<![0-9])[" + "".join([*_ZH_DIGITS, *_ZH_UNITS, *_ZH_BIG]) + r"]+(?=\s?(?:元|块|圆))"
)
# A currency code glued to a number ("RMB199") is a price, not an ID.
_CURRENCY_CODES = frozenset(("rmb", "cny", "vnd", "usd", "eur", "hkd", "twd"))


@dataclass(frozen=True)
class Guards:
    numbers_differ: bool
    ids_differ: bool
    title_differs: bool
    numbers_a: tuple[str, ...] = ()  # only the differing ones, for display
    numbers_b: tuple[str, ...] = ()
    ids_a: tuple[str, ...] = ()
    ids_b: tuple[str, ...] = ()

    def any(self) -> bool:
        return self.numbers_differ or self.ids_differ or self.title_differs

    def flags(self) -> list[str]:
        names = ("numbers_differ", "ids_differ", "title_differs")
        return [name for name in names if getattr(self, name)]


def _is_id(token: str) -> bool:
    return (
        len(token) >= 4
        and _LETTER_RE.search(token) is not None
        and _DIGIT_RE.search(token) is not None
        and _NUMBER_WITH_UNIT_RE.fullmatch(token) is None
        and not (token[3:].isdigit() and token[:3].casefold() in _CURRENCY_CODES)
    )


def _thousands(groups: list[str]) -> bool:
    return 1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])


def _decimal(num: str, *, vn_currency: bool, vn_multiplier: bool) -> Decimal | None:
    """The value of digits with . and , in them (the module docstring's rules), or None
    when they are not one number ("1.2.10")."""
    seps = [c for c in num if c in ".,"]
    groups = re.split(r"[.,]", num)
    if not seps:
        return Decimal(num)
    if len(set(seps)) == 2:
        mark = seps[-1]
        if seps.count(mark) != 1 or not _thousands(groups[:-1]):
            return None
        return Decimal("".join(groups[:-1]) + "." + groups[-1])
    if len(seps) > 1:
        return Decimal("".join(groups)) if _thousands(groups) else None
    grouping = seps[0] == "." if vn_multiplier else vn_currency or seps[0] == ","
    if grouping and _thousands(groups):
        return Decimal("".join(groups))
    return Decimal(groups[0] + "." + groups[1])


def _key(value: Decimal) -> str:
    return format(value.normalize(), "f")


@lru_cache(maxsize=4096)
def _number_key(num: str, mult: str, vn_currency: bool) -> str:
    """What a numeric token is compared by: its value, or the token as written."""
    if num.isdigit() and not mult:
        return num.lstrip("0") or "0"
    written = num + mult
    if any(c in num for c in ":/-"):
        return written
    mult = mult.strip().casefold()
    try:
        value = _decimal(num, vn_currency=vn_currency, vn_multiplier=mult in _MULTIPLIERS)
        if value is None:
            return written
        for char in mult if mult[:1] in _ZH_BIG else (mult,) if mult else ():
            value *= _MULTIPLIERS[char]
        return _key(value)
    except (KeyError, InvalidOperation):  # crawled text: never fail a batch on a number
        return written


def zh_numeral_value(numeral: str) -> int:
    """The value of a Chinese numeral ("一万二千" = 12000, "十五" = 15, "两亿" = 2×10⁸)."""
    total = section = number = 0
    for char in numeral:
        if char in _ZH_DIGITS:
            number = _ZH_DIGITS[char]
        elif char in _ZH_UNITS:
            section += (number or 1) * _ZH_UNITS[char]
            number = 0
        elif _ZH_BIG[char] == 10**8:
            total = (total + section + number or 1) * 10**8
            section = number = 0
        else:
            total += (section + number or 1) * 10**4
            section = number = 0
    return total + section + number


def _numbers(chunk: str, offset: int, vn_text: bool, out: list[tuple[int, str, str]]) -> None:
    """(position, token as written, value key) of the Arabic-digit numbers of one chunk;
    `vn_text` says whether the text has a Vietnamese currency sign anywhere."""
    for m in _NUMBER_RE.finditer(chunk):
        num, mult, post = m.group("num", "mult", "post")
        vn = vn_text and (
            bool(post and _VN_RE.fullmatch(post.strip()))
            or _VN_BEFORE_RE.search(chunk, max(0, m.start() - 5), m.start()) is not None
        )
        if mult:
            out.append((offset + m.start(), num + mult.rstrip(), _number_key(num, mult, vn)))
        else:
            out.append((offset + m.start(), num, _number_key(num, "", vn)))


def _zh_numerals(text: str, out: list[tuple[int, str, str]]) -> None:
    """(position, numeral, value key) of the Chinese-numeral amounts of a text."""
    for m in _ZH_NUMERAL_RE.finditer(text):
        numeral = m.group()
        # An amount has a unit (十百千万亿) and a digit or a leading 十 ("十元"); a lone
        # digit before 元 is too often part of a word ("统一元素").
        has_unit = any(c in _ZH_UNITS or c in _ZH_BIG for c in numeral)
        if has_unit and (numeral[0] in "十拾" or any(c in _ZH_DIGITS for c in numeral)):
            out.append((m.start(), numeral, str(zh_numeral_value(numeral))))


def _split(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(ID tokens, numeric tokens as (written, value key)) of one text, in order."""
    text = unicodedata.normalize("NFKC", text)
    ids: list[str] = []
    numbers: list[tuple[int, str, str]] = []
    vn_text = _VN_RE.search(text) is not None
    last = 0
    for match in _ID_RE.finditer(text):
        if _is_id(match.group()):
            ids.append(match.group())
            _numbers(text[last : match.start()], last, vn_text, numbers)
            last = match.end()
    _numbers(text[last:], last, vn_text, numbers)
    if _ZH_NUMERAL_RE.search(text) is not None:
        _zh_numerals(text, numbers)
        numbers.sort()
    return ids, [(written, key) for _, written, key in numbers]


def id_tokens(text: str) -> list[str]:
    """SKU-like tokens, in order of appearance (see the module docstring)."""
    return _split(text)[0]


def numeric_tokens(text: str) -> list[str]:
    """Numbers (prices, dates, versions), outside ID tokens, in order of appearance."""
    return [written for written, _ in _split(text)[1]]


def numeric_values(text: str) -> list[str]:
    """The value keys of numeric_tokens (what the numbers guard compares)."""
    return [key for _, key in _split(text)[1]]


def _only_in(first: list[tuple[str, str]], second: Counter[str]) -> tuple[str, ...]:
    """Tokens of `first` whose value is not matched in the multiset `second`, in order,
    as written, capped."""
    left = Counter(second)
    out: list[str] = []
    for written, key in first:
        if left[key] > 0:
            left[key] -= 1
        elif len(out) < MAX_SHOWN:
            out.append(written)
    return tuple(out)


def _title(title: str) -> str:
    return normalize_nfc_v1(title).casefold()


def guards_check(text_a: str, text_b: str, title_a: str = "", title_b: str = "") -> Guards:
    ta, tb = _title(title_a), _title(title_b)
    title_differs = bool(ta) and bool(tb) and ta != tb
    if text_a == text_b:
        # One text (exact copies are most pairs of a crawl): no number nor ID can differ,
        # and scanning it twice would only confirm that.
        return Guards(numbers_differ=False, ids_differ=False, title_differs=title_differs)
    return _guards(text_a, text_b, title_differs)


def _guards(text_a: str, text_b: str, title_differs: bool) -> Guards:
    """The number and ID guards of two texts scanned."""
    ids_a, numbers_a = _split(text_a)
    ids_b, numbers_b = _split(text_b)
    count_a = Counter(key for _, key in numbers_a)
    count_b = Counter(key for _, key in numbers_b)
    set_a = {t.casefold() for t in ids_a}
    set_b = {t.casefold() for t in ids_b}
    return Guards(
        numbers_differ=count_a != count_b,
        ids_differ=set_a != set_b,
        title_differs=title_differs,
        numbers_a=_only_in(numbers_a, count_b),
        numbers_b=_only_in(numbers_b, count_a),
        ids_a=_unique_capped(t for t in ids_a if t.casefold() not in set_b),
        ids_b=_unique_capped(t for t in ids_b if t.casefold() not in set_a),
    )


def _unique_capped(tokens: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    seen: set[str] = set()
    for token in tokens:
        if token.casefold() not in seen and len(out) < MAX_SHOWN:
            seen.add(token.casefold())
            out.append(token)
    return tuple(out)


@dataclass(frozen=True)
class Similarity:
    ratio: float  # rapidfuzz fuzz.ratio of the bounded texts, 0..100
    token_set_ratio: float  # rapidfuzz fuzz.token_set_ratio, 0..100
    length_ratio: float  # shorter / longer, in characters of the whole texts, 0..1
    containment: float  # share of the shorter text's word 3-shingles in the longer, 0..1


EMPTY = Similarity(0.0, 0.0, 0.0, 0.0)


def excerpt(text: str, max_chars: int) -> str:
    """At most max_chars characters: the text, or its head and tail halves."""
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return text[:half] + " " + text[len(text) - (max_chars - half) :]


def _shingles(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def similarity(a: str, b: str, *, max_chars: int = 20_000) -> Similarity:
    """Similarity of two (normalized) texts, bounded: O(max_chars) work per text."""
    if max_chars < 2:
        raise ValueError("max_chars must be at least 2")
    ea, eb = excerpt(a, max_chars), excerpt(b, max_chars)
    if is_blank(ea) or is_blank(eb):
        return EMPTY
    if a == b:
        # One text (exact copies are most pairs of a crawl): every score is at its top,
        # as the computation below would find in O(max_chars²) work.
        # (Whether it has a word at all: ``tokens_words(ea)`` is empty exactly when the
        # search finds none, and building the list is most of the cost.)
        return Similarity(100.0, 100.0, 1.0, 1.0 if WORD_RE.search(ea.casefold()) else 0.0)
    return _similarity(a, b, ea, eb)


def _similarity(a: str, b: str, ea: str, eb: str) -> Similarity:
    """The scores of two non-blank texts and their excerpts."""
    length_ratio = min(len(a), len(b)) / max(len(a), len(b))
    short, long = (ea, eb) if len(a) <= len(b) else (eb, ea)
    short_words = tokens_words(short)
    # Word 3-shingles; a shorter text of one or two words uses shingles of that size.
    size = min(3, len(short_words))
    if size:
        short_shingles = _shingles(short_words, size)
        long_shingles = _shingles(tokens_words(long), size)
        containment = len(short_shingles & long_shingles) / len(short_shingles)
    else:
        containment = 0.0
    return Similarity(
        ratio=float(fuzz.ratio(ea, eb)),
        token_set_ratio=float(fuzz.token_set_ratio(ea, eb)),
        length_ratio=length_ratio,
        containment=containment,
    )
