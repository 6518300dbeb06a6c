"""Bytes → text for crawled HTML. Guarantee: ``decode_html`` never raises and always
returns text; when it had to guess or replace bytes, ``warning`` says so and
``chosen_by`` says which evidence won.

Order of evidence: a forced charset (JSONL html arrived as a JSON string), a byte order
mark (unambiguous, and browsers let it win over everything else), the HTTP Content-Type
charset, ``<meta charset>`` / ``<meta http-equiv>`` in the first 4 KiB, then charset
hints in odd places (a ``<meta>`` further down, an XML declaration, a ``charset=`` or
``encoding=`` attribute on any tag), then detection.

A page that is valid UTF-8 (with enough non-ASCII bytes to tell) is UTF-8 whatever it
declares. Otherwise a declared charset wins when it decodes all but a small share
(``SMALL_SHARE``) of the page's non-ASCII bytes: the bad bytes are replaced with U+FFFD and counted
(``bad_bytes``), and ``warning`` says how many. A declaration that fails broadly gives
way to the next one, then to detection:

1. UTF-8, under the same small-share rule (random single-byte text is almost never
   valid UTF-8);
2. the multi-byte charsets (GB18030, Shift_JIS, EUC-KR, Big5) when one decodes all but
   ``MULTIBYTE_GUESS_SHARE`` of the non-ASCII bytes, charset-normalizer choosing among
   several that fit: a single-byte guess never turns valid multi-byte text into a
   Cyrillic or Latin reading;
3. charset-normalizer's single-byte guess when it reads the page in a non-Latin script
   (Cyrillic, Greek, Hebrew, Arabic, Thai …);
4. otherwise windows-1252, as a browser does for Western pages, before the detector's
   rarer Latin guesses (cp1257, iso8859-10, mac-latin2 …), which differ from it only in
   which accented letter a byte is.

Labels are mapped as the WHATWG Encoding standard does where it changes the result
(``iso-8859-1`` and ``us-ascii`` are windows-1252, ``gb2312``/``gbk`` are gb18030, …);
labels Python does not know, or that are not charsets (utf-7, base64, …), are ignored.
"""

import codecs
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from charset_normalizer import from_bytes

# Bad bytes a declared (or detected) charset may have, as a share of the page's
# non-ASCII bytes: a few corrupt bytes in a long page, not a page in another charset.
SMALL_SHARE = 0.05
# A multi-byte guess must fit more tightly: single-byte text happens to form valid
# two-byte pairs in GB18030 or EUC-KR more often than it forms valid UTF-8.
MULTIBYTE_GUESS_SHARE = 0.01
# Non-ASCII bytes that make a page's validity as UTF-8 evidence enough to overrule its
# declaration.
_UTF8_EVIDENCE = 8


@dataclass(frozen=True)
class Decoded:
    text: str
    declared: str | None  # from the HTTP header, else <meta>; a Python codec name
    used: str  # codec actually used
    warning: str | None
    bad_bytes: int = 0  # bytes invalid in ``used``, replaced with U+FFFD
    # forced | bom | header | meta | hint | detected | browser default | fallback
    chosen_by: str = field(default="", compare=False)


_META_WINDOW = 4096
_HINT_WINDOW = 1 << 20
_META_CHARSET_RE = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([a-z0-9_:.+-]+)""", re.I)
# Charset names in odd places: an XML declaration, a charset= or encoding= attribute of
# any tag (a crawl export's wrapper element, a <meta> past the first 4 KiB).
_HINT_RE = re.compile(
    rb"""<[?a-z][^<>]{0,300}?\b(?:charset|encoding)\s*=\s*["']?\s*([a-z][a-z0-9_:.+-]{1,39})""",
    re.I,
)
_SURROGATE_RE = re.compile("[\udc80-\udcff]")
_NON_ASCII_RE = re.compile("[^\x00-\x7f]")
_TOUCHING_LETTER_RE = re.compile("(?<=[A-Za-z])[^\x00-\x7f]|[^\x00-\x7f](?=[A-Za-z])")
_ASCII = bytes(range(128))
_MULTIBYTE = ("gb18030", "cp932", "cp949", "big5hkscs")
_CJK = frozenset(_MULTIBYTE) | {"euc_jp", "shift_jis", "cp950", "big5", "euc_kr"}
_MULTIBYTE_FAMILY = frozenset(
    {
        "utf-8",
        "gb18030",
        "gbk",
        "gb2312",
        "cp932",
        "shift_jis",
        "euc_jp",
        "cp949",
        "euc_kr",
        "big5",
        "big5hkscs",
        "cp950",
        "iso2022_jp",
        "utf-16",
        "utf-32",
    }
)
_HEADER_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?\s*([a-z0-9_:.+-]+)""", re.I)

# WHATWG label → encoding, where Python's codec for the same label differs.
_WHATWG: dict[str, str] = {
    **dict.fromkeys(
        (
            "gb2312",
            "gbk",
            "x-gbk",
            "gb_2312",
            "gb_2312-80",
            "chinese",
            "csgb2312",
            "csiso58gb231280",
            "iso-ir-58",
            "cp936",
            "ms936",
            "windows-936",
            "gb18030",
        ),
        "gb18030",
    ),
    **dict.fromkeys(
        (
            "iso-8859-1",
            "iso8859-1",
            "iso_8859-1",
            "iso88591",
            "iso-ir-100",
            "latin1",
            "latin-1",
            "l1",
            "cp819",
            "ibm819",
            "csisolatin1",
            "us-ascii",
            "ascii",
            "ansi_x3.4-1968",
            "iso646-us",
            "windows-1252",
            "x-cp1252",
            "cp1252",
        ),
        "cp1252",
    ),
    **dict.fromkeys(("windows-1258", "x-cp1258", "cp1258"), "cp1258"),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "latin5", "l5", "windows-1254"), "cp1254"),
    **dict.fromkeys(("iso-8859-11", "iso8859-11", "tis-620", "windows-874"), "cp874"),
    **dict.fromkeys(
        ("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "windows-31j"), "cp932"
    ),
    **dict.fromkeys(
        ("euc-kr", "ks_c_5601-1987", "ks_c_5601-1989", "korean", "windows-949"), "cp949"
    ),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "x-x-big5", "csbig5"), "big5hkscs"),
    **dict.fromkeys(
        ("utf8", "utf-8", "unicode-1-1-utf-8", "unicode11utf8", "x-unicode20utf8"), "utf-8"
    ),
}
# Text codecs Python knows that are not web charsets (or are an XSS risk, like UTF-7).
_NOT_CHARSETS = frozenset(
    {
        "utf-7",
        "idna",
        "punycode",
        "unicode-escape",
        "raw-unicode-escape",
        "undefined",
        "mbcs",
        "oem",
        "palmos",
    }
)
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def charset_codec(label: str | None) -> str | None:
    """A charset label → a Python codec name, or None when unknown or not a charset."""
    if not label:
        return None
    key = label.strip().strip("\"'").strip().lower()
    if not key or len(key) > 40:
        return None
    mapped = _WHATWG.get(key) or _WHATWG.get(key.replace("_", "-"))
    if mapped:
        return mapped
    try:
        info = codecs.lookup(key)
    except (LookupError, ValueError):
        return None
    name = info.name
    if not getattr(info, "_is_text_encoding", True) or name in _NOT_CHARSETS:
        return None
    return name


def header_charset(content_type: str | None) -> str | None:
    """The raw charset label of a Content-Type value, if any."""
    if not content_type:
        return None
    match = _HEADER_CHARSET_RE.search(content_type)
    return match.group(1) if match else None


def meta_charset(body: bytes) -> str | None:
    """The raw charset label of the first ``<meta … charset=…>`` in the first 4 KiB."""
    match = _META_CHARSET_RE.search(body[:_META_WINDOW])
    return match.group(1).decode("ascii", "replace") if match else None


def decode_html(body: bytes, *, content_type: str | None, forced: str | None = None) -> Decoded:
    """Decode an HTML payload; never raises (see the module docstring)."""
    try:
        return _decode(bytes(body), content_type, forced)
    except Exception as exc:  # a codec bug must not lose the page
        text = bytes(body).decode("utf-8", errors="replace")
        return Decoded(
            text,
            None,
            "utf-8",
            f"decoding failed ({exc!r}); utf-8 with replacement",
            text.count("\ufffd"),
            "fallback",
        )


def charset_hints(body: bytes) -> list[str]:
    """Codecs named in odd places of the page (first 1 MiB), in order, without repeats."""
    out: list[str] = []
    for match in _HINT_RE.finditer(body[:_HINT_WINDOW]):
        codec = charset_codec(match.group(1).decode("ascii", "replace"))
        if codec and codec not in out:
            out.append(codec)
            if len(out) >= 4:
                break
    return out


def _hints_add(candidates: list[tuple[str, str]], body: bytes) -> None:
    for codec in charset_hints(body):
        if codec not in (c for c, _ in candidates):
            candidates.append((codec, "hint"))


def _decode(body: bytes, content_type: str | None, forced: str | None) -> Decoded:
    from_header = charset_codec(header_charset(content_type))
    from_meta = charset_codec(meta_charset(body))
    declared = from_header or from_meta
    non_ascii = len(body.translate(None, _ASCII))

    forced_codec = charset_codec(forced)
    if forced_codec:
        found = _fits(body, forced_codec, non_ascii, SMALL_SHARE)
        if found is not None:
            return _declared_result(found, forced_codec, forced_codec, "forced")
        return _detected(body, forced_codec, [forced_codec], non_ascii)

    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            text = _strict(body, bom_codec)
            if text is not None:
                used = "utf-8" if bom_codec == "utf-8-sig" else bom_codec
                warning: str | None = None
                if declared and declared != used:
                    warning = f"byte order mark says {used!r}; declared {declared!r} ignored"
                return Decoded(text, declared, used, warning, 0, "bom")
            break

    candidates: list[tuple[str, str]] = []
    for codec, source in ((from_header, "header"), (from_meta, "meta")):
        if codec and codec not in (c for c, _ in candidates):
            candidates.append((codec, source))
    # Charsets named in odd places come after the header's and the <meta>'s, and are
    # looked for only when those are missing or fail: the scan of the page is a
    # measurable share of decoding, and nearly every page fits its declaration.
    hints_todo = bool(non_ascii)
    if hints_todo and not candidates:
        _hints_add(candidates, body)
        hints_todo = False
    if (
        candidates
        and candidates[0][0] != "utf-8"
        and non_ascii >= _UTF8_EVIDENCE
        and (text := _strict(body, "utf-8")) is not None
    ):
        # Text in another charset is practically never valid UTF-8 by accident; a page
        # saved as UTF-8 under an old declaration is common.
        warning = f"page declares {candidates[0][0]!r} but is valid UTF-8; decoded as UTF-8"
        return Decoded(text, declared, "utf-8", warning, 0, "detected")
    failed: list[str] = []
    at = 0
    while at < len(candidates) or hints_todo:
        if at == len(candidates):
            _hints_add(candidates, body)
            hints_todo = False
            continue
        codec, source = candidates[at]
        at += 1
        found = _fits(body, codec, non_ascii, SMALL_SHARE)
        if found is not None:
            result = _declared_result(found, declared, codec, source)
            if failed:
                note = (
                    f"bytes invalid in declared charset {failed[0]!r}; decoded as {codec!r} "
                    f"named in the page ({source})"
                )
                warning = f"{note}; {result.warning}" if result.warning else note
                return Decoded(result.text, declared, codec, warning, result.bad_bytes, source)
            return result
        failed.append(codec)
    return _detected(body, declared, failed, non_ascii)


def _declared_result(
    found: tuple[str, int], declared: str | None, codec: str, source: str
) -> Decoded:
    text, bad = found
    warning = None
    if bad:
        warning = f"{bad} bytes invalid in {source} charset {codec!r}; replaced with U+FFFD"
    return Decoded(text, declared, codec, warning, bad, source)


def _strict(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError, ValueError):
        return None


def _counting(body: bytes, codec: str) -> tuple[str, int] | None:
    """(text, bad bytes) with every invalid byte replaced by U+FFFD; None if no codec."""
    try:
        return body.decode(codec), 0
    except UnicodeDecodeError:
        pass
    except (LookupError, ValueError):
        return None
    try:
        text = body.decode(codec, errors="surrogateescape")
    except UnicodeDecodeError:  # an invalid byte below 0x80 (UTF-16/32, some CJK codecs)
        text = body.decode(codec, errors="replace")
        return text, max(1, text.count("\ufffd"))
    except (LookupError, ValueError):
        return None
    bad = len(_SURROGATE_RE.findall(text))
    return _SURROGATE_RE.sub("\ufffd", text), bad


def _fits(body: bytes, codec: str, non_ascii: int, share: float) -> tuple[str, int] | None:
    """(text, bad bytes) when ``codec`` decodes all but ``share`` of the non-ASCII bytes."""
    found = _counting(body, codec)
    if found is None:
        return None
    text, bad = found
    if bad == 0:
        return found
    if bad > share * non_ascii and not (codec == "utf-8" and _utf8_outweighs(text, bad)):
        return None
    if codec in _CJK and not _cjk_plausible(found[0]):
        return None  # Latin text that happens to pair up in a CJK charset
    return found


def _utf8_outweighs(text: str, bad: int) -> bool:
    """On a page with few non-ASCII characters, a share of bad bytes says little: UTF-8
    is still right when its valid multi-byte characters clearly outnumber the bad bytes
    (text in another charset almost never forms valid UTF-8 sequences at all)."""
    valid = len(_NON_ASCII_RE.findall(text)) - text.count("\ufffd")
    return valid >= 2 * bad


def _detected(body: bytes, declared: str | None, failed: list[str], non_ascii: int) -> Decoded:
    tried = set(failed)

    def done(codec: str, found: tuple[str, int], how: str, chosen_by: str) -> Decoded:
        text, bad = found
        parts = []
        if failed:
            parts.append(
                f"bytes invalid in declared charset {failed[0]!r}; decoded as {codec!r} {how}"
            )
        if bad:
            parts.append(f"{bad} bytes invalid in {codec!r}; replaced with U+FFFD")
        return Decoded(text, declared, codec, "; ".join(parts) or None, bad, chosen_by)

    if "utf-8" not in tried:
        found = _fits(body, "utf-8", non_ascii, SMALL_SHARE)
        if found is not None:
            return done("utf-8", found, "by detection", "detected")
    guess = _guess(body)
    if guess in _MULTIBYTE_FAMILY and guess not in tried:
        found = _fits(body, guess, non_ascii, SMALL_SHARE)
        if found is not None:
            return done(guess, found, "by detection", "detected")
    fitting: list[tuple[int, int, str, tuple[str, int]]] = []
    for rank, codec in enumerate(_MULTIBYTE):
        if codec in tried or codec == guess:
            continue
        found = _fits(body, codec, non_ascii, MULTIBYTE_GUESS_SHARE)
        if found is not None and (found[1] or _cjk_plausible(found[0])):
            fitting.append((found[1], rank, codec, found))
    if fitting:
        fitting.sort()
        codec, found = fitting[0][2], fitting[0][3]
        if len(fitting) > 1:
            # Several fit: let the detector choose on the bytes without the bad ones.
            cleaned = _SURROGATE_RE.sub("", found[0].replace("\ufffd", "")).encode(codec, "ignore")
            preferred = _guess(cleaned)
            for _bad, _rank, other, other_found in fitting:
                if other == preferred:
                    codec, found = other, other_found
                    break
        return done(codec, found, "by multi-byte detection", "detected")
    if guess and guess not in tried and guess not in _MULTIBYTE_FAMILY:
        found = _counting(body, guess)
        if found is not None and found[1] == 0 and not _latin_reading(found[0]):
            return done(guess, found, "by detection", "detected")
    text, bad = _windows_1252(body)
    how = "(windows-1252, as a browser reads Western pages)"
    if guess and guess != "cp1252":
        how += f"; the detector guessed {guess!r}"
    return done("cp1252", (text, bad), how, "browser default")


def _guess(body: bytes) -> str | None:
    """charset-normalizer's best guess as a codec name, or None."""
    best = from_bytes(body).best()
    if best is None or not best.encoding:
        return None
    return charset_codec(best.encoding) or _codec_name(best.encoding)


def _windows_1252(body: bytes) -> tuple[str, int]:
    """windows-1252 as WHATWG defines it: the five bytes Python's cp1252 leaves
    undefined are the C1 controls of the same value. Never fails."""
    text = body.decode("cp1252", errors="surrogateescape")
    if _SURROGATE_RE.search(text):
        text = _SURROGATE_RE.sub(lambda m: chr(ord(m.group()) - 0xDC00), text)
    return text, 0


def _cjk_plausible(text: str) -> bool:
    """Whether a multi-byte reading looks like CJK text rather than Latin text read in
    pairs: there, nearly every non-ASCII character touches an ASCII letter ("cr鑝e"),
    while real CJK text has runs of CJK characters and few English words among them."""
    sample = text[:200_000]
    total = len(_NON_ASCII_RE.findall(sample))
    if not total:
        return False
    touching = len(_TOUCHING_LETTER_RE.findall(sample))
    return touching <= 0.3 * total


def _latin_reading(text: str) -> bool:
    """Whether the non-ASCII letters of ``text`` are mostly Latin ones."""
    counts = Counter(_NON_ASCII_RE.findall(text[:200_000]))
    latin = other = 0
    for char, n in counts.items():
        if not char.isalpha():
            continue
        if unicodedata.name(char, "").startswith("LATIN"):
            latin += n
        else:
            other += n
    return latin >= other


def _codec_name(label: str) -> str | None:
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None
