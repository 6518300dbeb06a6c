"""decode_html: declared charsets first, detection when they lie, never a raise."""

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.encoding import Decoded, charset_codec, decode_html

ZH_TEXT = "这是一个用国标编码的中文网页。今天北京天气晴朗，气温二十度，适合出门散步。"
VI_TEXT = "Tiếng Việt có dấu"
FR_TEXT = (
    "Le café du matin est très agréable. Nous étions à la façade de l'hôtel, où la crème "
    "brûlée était délicieuse. Les élèves ont reçu leurs résultats après les fêtes de Noël. "
    "Ça coûte cher, mais c'est la vérité : l'été dernier était très chaud."
)


def _cp1258(text: str) -> bytes:
    """Encode as Windows-1258 does: base letter (with its circumflex, breve or horn
    precomposed where the code page has it) followed by a combining tone mark."""
    out = bytearray()
    for char in unicodedata.normalize("NFC", text):
        try:
            out += char.encode("cp1258")
            continue
        except UnicodeEncodeError:
            pass
        decomposed = unicodedata.normalize("NFD", char)
        base, marks = decomposed[0], list(decomposed[1:])
        for i, mark in enumerate(marks):
            composed = unicodedata.normalize("NFC", base + mark)
            rest = "".join(marks[:i] + marks[i + 1 :])
            try:
                out += (composed + rest).encode("cp1258")
                break
            except UnicodeEncodeError:
                continue
        else:
            out += (base + "".join(marks)).encode("cp1258")
    return bytes(out)


def test_gbk_page_declared_in_http_header() -> None:
    html = f"<html><head><title>天气</title></head><body><p>{ZH_TEXT}</p></body></html>"

    decoded = decode_html(html.encode("gbk"), content_type="text/html; charset=GBK")

    assert decoded == Decoded(html, "gb18030", "gb18030", None)


def test_gbk_page_declared_only_in_meta_as_gb2312() -> None:
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
        f"</head><body><p>{ZH_TEXT}</p></body></html>"
    )

    decoded = decode_html(html.encode("gbk"), content_type="text/html")

    assert decoded.text == html
    assert decoded.declared == "gb18030"
    assert decoded.warning is None


def test_windows_1258_vietnamese_declared_in_meta() -> None:
    html = f'<html><head><meta charset="windows-1258"></head><body><p>{VI_TEXT}</p></body></html>'

    decoded = decode_html(_cp1258(html), content_type=None)

    assert decoded.used == "cp1258"
    assert unicodedata.normalize("NFC", decoded.text) == html


def test_undeclared_utf8() -> None:
    html = f"<html><body><p>{VI_TEXT} — {ZH_TEXT} — naïve café</p></body></html>"

    decoded = decode_html(html.encode("utf-8"), content_type="text/html")

    assert decoded == Decoded(html, None, "utf-8", None)


def test_bytes_invalid_in_declared_charset_are_detected_with_a_warning() -> None:
    html = f"<html><head><title>Café</title></head><body><p>{FR_TEXT}</p></body></html>"

    decoded = decode_html(html.encode("latin-1"), content_type="text/html; charset=utf-8")

    assert decoded.declared == "utf-8"
    assert decoded.used == "cp1252"
    assert decoded.text == html
    assert decoded.warning == (
        "bytes invalid in declared charset 'utf-8'; decoded as 'cp1252' "
        "(windows-1252, as a browser reads Western pages)"
    )
    assert decoded.chosen_by == "browser default"


def test_header_wins_over_meta() -> None:
    html = f'<meta charset="utf-8"><p>{ZH_TEXT}</p>'

    decoded = decode_html(html.encode("gb18030"), content_type="text/html; charset=gb18030")

    assert decoded.text == html
    assert decoded.declared == "gb18030"


def test_unknown_header_label_falls_through_to_meta() -> None:
    html = f'<meta charset="gbk"><p>{ZH_TEXT}</p>'

    decoded = decode_html(html.encode("gbk"), content_type="text/html; charset=x-nonsense")

    assert decoded.text == html
    assert decoded.declared == "gb18030"


def test_forced_charset_wins() -> None:
    html = f'<meta charset="windows-1252"><p>{VI_TEXT}</p>'

    decoded = decode_html(html.encode("utf-8"), content_type=None, forced="utf-8")

    assert decoded.text == html
    assert decoded.used == "utf-8"


def test_byte_order_mark_wins_over_a_wrong_declaration() -> None:
    html = f"<p>{VI_TEXT}</p>"
    body = "\ufeff".encode("utf-16-le") + html.encode("utf-16-le")

    decoded = decode_html(body, content_type="text/html; charset=iso-8859-1")

    assert decoded.text == html
    assert decoded.used == "utf-16"
    assert decoded.warning is not None


def test_body_cut_inside_last_character_keeps_the_declared_charset() -> None:
    body = f"<p>{ZH_TEXT}</p>{ZH_TEXT}".encode()[:-1]

    decoded = decode_html(body, content_type="text/html; charset=utf-8")

    assert decoded.used == "utf-8"
    assert decoded.text.endswith("\ufffd")
    assert decoded.warning is not None


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("ISO-8859-1", "cp1252"),
        ("latin1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("x-gbk", "gb18030"),
        ("windows-1258", "cp1258"),
        ('"UTF-8"', "utf-8"),
        ("koi8-r", "koi8-r"),
        ("utf-7", None),
        ("base64", None),
        ("rot13", None),
        ("unicode_escape", None),
        ("nonsense", None),
        ("", None),
    ],
)
def test_charset_labels(label: str, codec: str | None) -> None:
    assert charset_codec(label) == codec


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2048), st.one_of(st.none(), st.text(max_size=80)))
def test_never_raises(body: bytes, content_type: str | None) -> None:
    decoded = decode_html(body, content_type=content_type)

    assert isinstance(decoded.text, str)
    assert decoded.used


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=512), st.sampled_from(["utf-8", "gbk", "cp1258", "shift_jis", "x"]))
def test_never_raises_with_declared_charsets(body: bytes, charset: str) -> None:
    meta = f'<meta charset="{charset}">'.encode()

    decoded = decode_html(meta + body, content_type=f"text/html; charset={charset}")

    assert isinstance(decoded.text, str)


# --- declared charsets with a few bad bytes, lying headers, odd-place hints -------------

EN_FILLER = "".join(
    f"<p>Paragraph {i} of the wire story about the harbour, the council and the budget.</p>\n"
    for i in range(60)
)


def test_utf8_page_with_three_bad_bytes_deep_inside_keeps_utf8() -> None:
    title = "Zürich’s café “Grünau” reopens — naïve résumé"
    head = f'<html><head><meta charset="utf-8"><title>{title}</title></head><body>'
    body = (head + f"<p>{FR_TEXT}</p>" + EN_FILLER).encode()
    body += b"<p>broken \xe9 byte, \x96 another and \xff a third</p>"
    body += (EN_FILLER + f"<p>{FR_TEXT}</p></body></html>").encode()

    decoded = decode_html(body, content_type="text/html; charset=UTF-8")

    assert decoded.used == "utf-8"
    assert decoded.bad_bytes == 3
    assert f"<title>{title}</title>" in decoded.text
    assert decoded.text.count("\ufffd") == 3
    assert FR_TEXT in decoded.text
    assert decoded.warning is not None and "3 bytes invalid" in decoded.warning


def test_gb2312_declared_page_with_a_bad_byte_decodes_as_gb18030() -> None:
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
        f"<title>天气预报</title></head><body>{EN_FILLER}<p>{ZH_TEXT * 4}</p>"
    )
    body = html.encode("gb18030") + b"\xff\x20" + f"<p>{ZH_TEXT}</p></body></html>".encode("gbk")

    decoded = decode_html(body, content_type="text/html")

    assert decoded.used == "gb18030"
    assert decoded.bad_bytes == 1
    assert "<title>天气预报</title>" in decoded.text
    assert decoded.text.count(ZH_TEXT) == 5


def test_undeclared_gb2312_page_with_one_bad_byte_is_not_read_as_single_byte() -> None:
    html = f"<html><head><title>北京新闻</title></head><body>{EN_FILLER}<p>{ZH_TEXT * 3}</p>"
    body = html.encode("gb2312") + b"\x81\x20" + f"<p>{ZH_TEXT}</p></body></html>".encode("gb2312")

    decoded = decode_html(body, content_type="text/html")

    assert decoded.used == "gb18030"
    assert decoded.bad_bytes == 1
    assert "<title>北京新闻</title>" in decoded.text
    assert decoded.text.count(ZH_TEXT) == 4


@pytest.mark.parametrize(
    ("codec", "text"),
    [
        ("shift_jis", "日本語のニュース記事です。東京は今日も晴れでした。" * 6),
        ("euc-kr", "한국어 뉴스 기사입니다. 서울은 오늘도 맑았습니다. " * 6),
        ("utf-8", "Новости дня: в Москве сегодня солнечно и тепло. " * 6),
    ],
)
def test_multibyte_text_with_a_bad_byte_is_never_read_as_single_byte(codec: str, text: str) -> None:
    page = f"<p>{text}</p>{EN_FILLER}"
    body = page.encode(codec) + b"\x81 " + page.encode(codec)

    decoded = decode_html(body, content_type=None)

    assert decoded.text.count(text) == 2
    assert decoded.bad_bytes == 1


@pytest.mark.parametrize(
    "wrapper",
    [
        '<text encoding="gb2312">',
        '<?xml version="1.0" encoding="GB2312"?><text>',
        '<text><document charset="gbk">',
    ],
)
def test_charset_named_only_in_an_odd_place_is_tried(wrapper: str) -> None:
    comments = "<!-- " + "x" * 1200 + " -->\n"
    head = f"{wrapper}{comments}<html><body>{EN_FILLER}<p>{ZH_TEXT}</p>"
    body = head.encode("gbk") + b"\x81 " + b"</body></html></text>"

    decoded = decode_html(body, content_type="text/html")

    assert decoded.used == "gb18030"
    assert ZH_TEXT in decoded.text
    assert decoded.chosen_by == "hint"


def test_meta_charset_after_4_kib_of_comments_is_still_used() -> None:
    comments = "<!-- " + "y" * 5000 + " -->"
    html = f'<html><head>{comments}<meta charset="gb2312"></head><body><p>{ZH_TEXT}</p>'
    body = html.encode("gbk") + b"\xa1" + b"</body></html>"

    decoded = decode_html(body, content_type=None)

    assert decoded.used == "gb18030"
    assert ZH_TEXT in decoded.text


def test_lying_utf8_header_on_windows_1252_bytes_reads_as_windows_1252() -> None:
    html = (
        "<html><head><title>Menu</title></head><body><p>Tonight: crème brûlée, "
        "and a soufflé.</p>" + EN_FILLER + "</body></html>"
    )

    decoded = decode_html(html.encode("cp1252"), content_type="text/html; charset=utf-8")

    assert decoded.used == "cp1252"
    assert "crème brûlée" in decoded.text
    assert decoded.warning is not None and "'utf-8'" in decoded.warning


def test_lying_header_gives_way_to_the_meta_charset() -> None:
    html = (
        '<html><head><meta charset="windows-1250"></head><body><p>Příliš žluťoučký kůň '
        "úpěl ďábelské ódy.</p>" + EN_FILLER + "</body></html>"
    )

    decoded = decode_html(html.encode("cp1250"), content_type="text/html; charset=utf-8")

    assert decoded.used == "cp1250"
    assert decoded.chosen_by == "meta"
    assert "Příliš žluťoučký kůň" in decoded.text


def test_page_declaring_gb2312_but_saved_as_utf8_is_utf8() -> None:
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
        f"<title>北京新闻</title></head><body>{EN_FILLER}<p>{ZH_TEXT * 3}</p></body></html>"
    )

    decoded = decode_html(html.encode("utf-8"), content_type="text/html")

    assert decoded.used == "utf-8"
    assert decoded.text == html
    assert decoded.warning is not None and "valid UTF-8" in decoded.warning


def test_utf8_page_with_few_accents_and_bad_bytes_stays_utf8() -> None:
    title = "Zürich’s café “Grünau” — naïve résumé"
    html = f"<html><head><title>{title}</title></head><body>{EN_FILLER}</body></html>"
    cut = len(html) // 2
    body = html[:cut].encode() + b"\xe9\x96\xff" + html[cut:].encode()

    decoded = decode_html(body, content_type="text/html; charset=utf-8")

    assert decoded.used == "utf-8"
    assert decoded.bad_bytes == 3
    assert f"<title>{title}</title>" in decoded.text


def test_odd_places_are_read_only_when_the_declared_charsets_fail(monkeypatch) -> None:
    """Scanning a page for charsets named in odd places costs a share of decoding:
    a page that fits its declaration is never scanned, one that does not still is."""
    from ingest.core import encoding

    scanned: list[int] = []
    real = encoding.charset_hints

    def counted(body: bytes) -> list[str]:
        scanned.append(len(body))
        return real(body)

    monkeypatch.setattr(encoding, "charset_hints", counted)
    fits = f'<text encoding="gb2312"><html><body><p>{FR_TEXT}</p></body></html></text>'
    decoded = decode_html(fits.encode("utf-8"), content_type="text/html; charset=utf-8")
    assert (decoded.used, decoded.chosen_by, scanned) == ("utf-8", "header", [])

    lying = f'<text encoding="gb2312"><html><body>{EN_FILLER}<p>{ZH_TEXT}</p></body></html>'
    decoded = decode_html(lying.encode("gbk"), content_type="text/html; charset=utf-8")
    assert len(scanned) == 1
    assert (decoded.used, decoded.chosen_by) == ("gb18030", "hint")
    assert ZH_TEXT in decoded.text
    assert decoded.warning is not None and "declared charset 'utf-8'" in decoded.warning
