"""Bytes → text for crawled HTML. Guarantee: ``decode_html`` never raises and always
returns text; when it had to guess, ``warning`` says so.

Order of evidence: a forced charset (JSONL html arrived as a JSON string), a byte order
mark (unambiguous, and browsers let it win over everything else), the HTTP Content-Type
charset, then ``<meta charset>`` / ``<meta http-equiv>`` in the first 4 KiB, then
detection (valid UTF-8 first, then charset-normalizer), then UTF-8 with replacement.

A declared charset is decoded strictly. If the bytes are invalid in it, the charset is
detected instead and ``warning`` names both. Labels are mapped as the WHATWG Encoding
standard does where it changes the result (``iso-8859-1`` and ``us-ascii`` are
windows-1252, ``gb2312``/``gbk`` are gb18030, …); labels Python does not know, or that
are not charsets (utf-7, base64, …), are ignored.
"""

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes


@dataclass(frozen=True)
class Decoded:
    text: str
    declared: str | None  # from the HTTP header, else <meta>; a Python codec name
    used: str  # codec actually used
    warning: str | None


_META_WINDOW = 4096
_META_CHARSET_RE = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([a-z0-9_:.+-]+)""", re.I)
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
        return Decoded(text, None, "utf-8", f"decoding failed ({exc!r}); utf-8 with replacement")


def _decode(body: bytes, content_type: str | None, forced: str | None) -> Decoded:
    declared = charset_codec(header_charset(content_type)) or charset_codec(meta_charset(body))

    forced_codec = charset_codec(forced)
    if forced_codec:
        text = _strict(body, forced_codec)
        if text is not None:
            return Decoded(text, forced_codec, forced_codec, None)
        return _detected(body, forced_codec, forced_codec)

    for bom, codec in _BOMS:
        if body.startswith(bom):
            text = _strict(body, codec)
            if text is not None:
                used = "utf-8" if codec == "utf-8-sig" else codec
                warning = None
                if declared and declared != used:
                    warning = f"byte order mark says {used!r}; declared {declared!r} ignored"
                return Decoded(text, declared, used, warning)
            break

    if declared:
        text = _strict(body, declared)
        if text is not None:
            return Decoded(text, declared, declared, None)
        text = _strict_cut_tail(body, declared)
        if text is not None:
            warning = f"body ends inside a {declared!r} character; last bytes replaced"
            return Decoded(text, declared, declared, warning)
        return _detected(body, declared, declared)

    return _detected(body, None, None)


def _strict(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError, ValueError):
        return None


def _strict_cut_tail(body: bytes, codec: str) -> str | None:
    """A body cut inside its last multi-byte character is still in that charset."""
    for cut in (1, 2, 3):
        if len(body) > cut:
            text = _strict(body[:-cut], codec)
            if text is not None:
                return text + "\ufffd"
    return None


def _detected(body: bytes, declared: str | None, failed: str | None) -> Decoded:
    used, text = _detect(body, exclude=failed)

    def note(how: str) -> str | None:
        if failed is None:
            return None
        return f"bytes invalid in declared charset {failed!r}; decoded as {used!r} {how}"

    if text is not None:
        return Decoded(text, declared, used, note("by detection"))
    if failed is not None:
        # Nothing fits better: the declaration is most likely right about most bytes.
        text = body.decode(failed, errors="replace")
        warning = f"bytes invalid in declared charset {failed!r}; replaced with U+FFFD"
        return Decoded(text, declared, failed, warning)
    text = body.decode("utf-8", errors="replace")
    warning = "charset neither declared nor detected; decoded as 'utf-8' with U+FFFD"
    return Decoded(text, declared, "utf-8", warning)


def _detect(body: bytes, *, exclude: str | None) -> tuple[str, str | None]:
    """(codec, text) by detection, or ("utf-8", None) when nothing decodes cleanly."""
    if exclude != "utf-8":
        text = _strict(body, "utf-8")
        if text is not None:
            return "utf-8", text
    best = from_bytes(body).best()
    if best is None or not best.encoding:
        return "utf-8", None
    # The WHATWG mapping first (latin-1 → cp1252), then the detector's own codec, since
    # Python's cp1252 leaves five bytes undefined that latin-1 accepts.
    candidates = (charset_codec(best.encoding), _codec_name(best.encoding))
    for codec in candidates:
        if codec and codec != exclude:
            text = _strict(body, codec)
            if text is not None:
                return codec, text
    return "utf-8", None


def _codec_name(label: str) -> str | None:
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None
