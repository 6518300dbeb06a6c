"""Crawl readers: WARC and JSONL records in, one item per record out, never a raise."""

import io
import json
from datetime import UTC, datetime

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from ingest.core.readers import (
    Item,
    RawRecord,
    RecordError,
    Skipped,
    read_jsonl,
    read_warc,
    record_from_json,
    record_sanitise,
    screen,
    text_problem,
)
from tests import broken_archives

WARC_DATE = "2024-05-06T07:08:09Z"


def _page(i: int) -> bytes:
    words = " ".join(f"word{i}x{n}" for n in range(300))  # incompressible-ish
    return f"<html><body><h1>Page {i}</h1><p>{words}</p></body></html>".encode()


def _response(
    writer: WARCWriter,
    url: str,
    body: bytes,
    *,
    status: str = "200 OK",
    headers: list[tuple[str, str]] | None = None,
) -> None:
    http_headers = StatusAndHeaders(
        status, headers or [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
    )
    record = writer.create_warc_record(
        url,
        "response",
        payload=io.BytesIO(body),
        http_headers=http_headers,
        warc_headers_dict={"WARC-Date": WARC_DATE},
    )
    writer.write_record(record)


def _warc(gzip: bool, count: int = 3) -> bytes:
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=gzip)
    for i in range(count):
        _response(writer, f"https://example.com/{i}", _page(i))
    return buffer.getvalue()


def _kinds(items: list[Item]) -> list[str]:
    return [item.kind if isinstance(item, RecordError) else type(item).__name__ for item in items]


def _raw(item: Item) -> RawRecord:
    assert isinstance(item, RawRecord), item
    return item


def _error(item: Item) -> RecordError:
    assert isinstance(item, RecordError), item
    return item


@pytest.mark.parametrize("gzip", [True, False])
def test_warc_responses_become_raw_records(gzip: bool) -> None:
    items = list(read_warc(io.BytesIO(_warc(gzip))))

    assert _kinds(items) == ["RawRecord"] * 3
    first = _raw(items[0])
    assert first.url == "https://example.com/0"
    assert first.body == _page(0)
    assert first.http_status == 200
    assert first.headers["content-type"] == "text/html; charset=utf-8"
    assert first.fetched_at == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    assert first.offset == 0
    assert 0 < items[1].offset < items[2].offset


def test_warc_offsets_point_at_each_gzip_member() -> None:
    data = _warc(True)
    items = list(read_warc(io.BytesIO(data)))

    for item in items:
        alone = list(read_warc(io.BytesIO(data[item.offset :])))
        assert alone[0].url == item.url


def test_truncated_gzip_warc_keeps_earlier_records_then_one_error() -> None:
    data = _warc(True)
    last = list(read_warc(io.BytesIO(data)))[-1].offset
    cut = data[: last + (len(data) - last) // 2]

    items = list(read_warc(io.BytesIO(cut)))

    assert _kinds(items) == ["RawRecord", "RawRecord", "truncated"]
    assert items[2].offset == last
    assert "truncated" in _error(items[2]).message


def test_truncated_plain_warc_keeps_earlier_records_then_one_error() -> None:
    data = _warc(False)
    last = list(read_warc(io.BytesIO(data)))[-1].offset

    items = list(read_warc(io.BytesIO(data[: last + 200])))

    assert _kinds(items) == ["RawRecord", "RawRecord", "truncated"]
    assert items[2].offset == last


@pytest.mark.parametrize("gzip", [True, False])
def test_cut_anywhere_never_raises_and_never_passes_silently(gzip: bool) -> None:
    data = _warc(gzip)
    for cut in range(1, len(data), 97):
        items = list(read_warc(io.BytesIO(data[:cut])))
        assert isinstance(items[-1], RecordError)
        assert items[-1].kind in {"truncated", "corrupt"}
        assert all(isinstance(item, RawRecord) for item in items[:-1])


def test_gzip_member_cut_in_its_trailer_reports_truncation() -> None:
    data = _warc(True)

    items = list(read_warc(io.BytesIO(data[:-3])))

    assert _kinds(items) == ["RawRecord", "RawRecord", "RawRecord", "truncated"]


def test_garbage_after_records_is_corrupt() -> None:
    data = _warc(False, count=1) + b"this is not a warc record\r\n\r\n"

    items = list(read_warc(io.BytesIO(data)))

    assert _kinds(items) == ["RawRecord", "corrupt"]


def test_not_a_warc_at_all_is_one_error() -> None:
    items = list(read_warc(io.BytesIO(b"<html><body>hello</body></html>\n")))

    assert _kinds(items) == ["corrupt"]
    assert items[0].offset == 0


def test_revisit_request_and_warcinfo_records_are_skipped() -> None:
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    writer.write_record(writer.create_warcinfo_record("crawl.warc.gz", {"software": "test"}))
    request_headers = StatusAndHeaders(
        "GET /a HTTP/1.1", [("Host", "example.com")], is_http_request=True
    )
    writer.write_record(
        writer.create_warc_record("https://example.com/a", "request", http_headers=request_headers)
    )
    _response(writer, "https://example.com/a", _page(1))
    writer.write_record(
        writer.create_revisit_record(
            "https://example.com/a",
            digest="sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            refers_to_uri="https://example.com/a",
            refers_to_date=WARC_DATE,
        )
    )

    items = list(read_warc(io.BytesIO(buffer.getvalue())))

    assert [getattr(item, "reason", type(item).__name__) for item in items] == [
        "warcinfo",
        "request",
        "RawRecord",
        "revisit",
    ]
    assert items[1].url == "https://example.com/a"


def _raw_warc(headers: list[str], block: bytes, version: str = "WARC/1.0") -> bytes:
    lines = [version, *headers, f"Content-Length: {len(block)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + block + b"\r\n\r\n"


def test_wayback_record_with_http_headers_folded_into_the_warc_header_is_read() -> None:
    html = b"<html><body><p>no http envelope</p></body></html>"
    folded = _raw_warc(
        [
            "WARC-Type: response",
            "WARC-Target-URI: https://example.com/raw",
            f"WARC-Date: {WARC_DATE}",
            "Content-Type: text/html; charset=iso-8859-1",
            "Last-Modified: Tue, 01 Jan 2008 00:00:00 GMT",
        ],
        html,
    )

    items = list(read_warc(io.BytesIO(folded + _warc(False, count=1))))

    assert _kinds(items) == ["RawRecord", "RawRecord"]
    record = _raw(items[0])
    assert record.url == "https://example.com/raw"
    assert record.body == html
    assert record.headers["content-type"] == "text/html; charset=iso-8859-1"
    assert record.headers["last-modified"] == "Tue, 01 Jan 2008 00:00:00 GMT"
    assert record.http_status is None
    assert record.fetched_at == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_a_block_said_to_be_http_without_a_status_line_is_an_error_that_says_why() -> None:
    block = b"<html><body><p>no http envelope</p></body></html>"
    raw = _raw_warc(
        [
            "WARC-Type: response",
            "WARC-Target-URI: https://example.com/raw",
            "Content-Type: application/http; msgtype=response",
        ],
        block,
    )

    items = list(read_warc(io.BytesIO(raw + _warc(False, count=1))))

    assert _kinds(items) == ["no_http_headers", "RawRecord"]
    assert items[0].url == "https://example.com/raw"
    assert "does not start with an HTTP status line" in _error(items[0]).message


def test_non_http_response_is_skipped() -> None:
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=False)
    record = writer.create_warc_record(
        "dns:example.com", "response", payload=io.BytesIO(b"example.com. 300 IN A 1.2.3.4")
    )
    writer.write_record(record)

    items = list(read_warc(io.BytesIO(buffer.getvalue())))

    assert [(type(item).__name__, getattr(item, "reason", "")) for item in items] == [
        ("Skipped", "non_http")
    ]


def test_chunked_and_gzip_encoded_payload_is_decoded() -> None:
    import gzip as gz

    html = _page(7)
    packed = gz.compress(html)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(packed), packed)
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    headers = [
        ("Content-Type", "text/html"),
        ("Content-Encoding", "gzip"),
        ("Transfer-Encoding", "chunked"),
    ]
    _response(writer, "https://example.com/z", chunked, headers=headers)

    (item,) = read_warc(io.BytesIO(buffer.getvalue()))

    assert _raw(item).body == html


def test_body_over_reader_limit_is_too_large() -> None:
    items = list(read_warc(io.BytesIO(_warc(True, count=2)), max_body_bytes=100))

    assert _kinds(items) == ["too_large", "too_large"]


def _jsonl(*lines: object) -> io.BytesIO:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    return io.BytesIO(text.encode("utf-8"))


def test_jsonl_lines_become_raw_records() -> None:
    stream = _jsonl(
        {
            "url": "https://example.com/a",
            "html": "<p>xin chào</p>",
            "status": 404,
            "fetched_at": "2024-05-06T09:08:09+02:00",
            "headers": {"Content-Type": "text/html"},
            "final_url": "https://example.com/a/",
            "doc_type": "article",
        },
        "",
        {"url": "https://example.com/b", "html": "<p>b</p>", "fetched_at": "2024-05-06T07:08:09"},
    )

    first, second = (_raw(item) for item in read_jsonl(stream))

    assert first == RawRecord(
        url="https://example.com/a",
        body="<p>xin chào</p>".encode(),
        http_status=404,
        headers={"content-type": "text/html"},
        fetched_at=datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
        offset=1,
        final_url="https://example.com/a/",
        doc_type="article",
        forced_charset="utf-8",
    )
    assert second.offset == 3
    assert second.http_status == 200
    assert second.fetched_at == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_bad_jsonl_lines_are_errors_and_the_file_goes_on() -> None:
    good = {"url": "https://example.com/ok", "html": "<p>ok</p>"}
    stream = io.BytesIO(
        b"{not json\n"
        + json.dumps({"html": "<p>x</p>"}).encode()
        + b"\n"
        + json.dumps({"url": "https://e.com/", "html": 5}).encode()
        + b"\n\xff\xfe\n"
        + json.dumps(good).encode()
        + b"\n"
    )

    items = list(read_jsonl(stream))

    assert _kinds(items) == ["bad_json", "missing_field", "bad_field", "bad_json", "RawRecord"]
    assert [item.offset for item in items] == [1, 2, 3, 4, 5]
    assert "'url'" in _error(items[1]).message
    assert "'html'" in _error(items[2]).message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", "200"),
        ("status", True),
        ("status", 1000),
        ("fetched_at", "yesterday"),
        ("fetched_at", 12),
        ("headers", ["a"]),
        ("headers", {"a": 1}),
        ("final_url", 3),
        ("doc_type", "novel"),
        ("url", ""),
    ],
)
def test_record_from_json_names_the_bad_field(field: str, value: object) -> None:
    obj = {"url": "https://example.com/", "html": "<p>x</p>", field: value}

    result = record_from_json(obj, 9)

    assert isinstance(result, RecordError)
    assert result.kind == "bad_field"
    assert result.offset == 9
    assert repr(field) in result.message


def test_record_from_json_rejects_non_objects() -> None:
    result = record_from_json(["url", "html"], 1)

    assert isinstance(result, RecordError)
    assert result.kind == "bad_json"


def test_jsonl_over_long_line_is_skipped_and_next_line_read() -> None:
    long_line = json.dumps({"url": "https://e.com/big", "html": "x" * 5000})
    stream = _jsonl(long_line, {"url": "https://e.com/small", "html": "<p>s</p>"})

    items = list(read_jsonl(stream, max_line_bytes=1000))

    assert _kinds(items) == ["too_large", "RawRecord"]
    assert items[1].offset == 2


def _record(body: bytes, content_type: str | None = "text/html") -> RawRecord:
    headers = {"content-type": content_type} if content_type else {}
    return RawRecord("https://e.com/", body, 200, headers, None, 1)


def test_screen_accepts_html() -> None:
    assert screen(_record(b"<html><p>hi</p></html>"), max_bytes=1000) is None
    assert screen(_record("<p>hi</p>".encode("utf-16"), None), max_bytes=1000) is None


@pytest.mark.parametrize("body", [b"", b"  \r\n\t "])
def test_screen_empty_body(body: bytes) -> None:
    error = screen(_record(body), max_bytes=1000)

    assert error is not None
    assert error.kind == "empty_body"


def test_screen_too_large_says_how_big() -> None:
    error = screen(_record(b"x" * 6_291_456), max_bytes=5_242_880)

    assert error is not None
    assert error.kind == "too_large"
    assert error.message == "body is 6291456 bytes, cap is 5242880"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<p>looks like html</p>", "application/pdf"),
        (b"%PDF-1.7 ...", "text/html"),
        (b"\x89PNG\r\n\x1a\n....", None),
        (b"\xff\xd8\xff\xe0....", None),
        (b"GIF89a....", None),
        (b"PK\x03\x04....", None),
        (b"RIFF....WEBP", None),
        (b"<html>\x00\x01\x02</html>", None),
    ],
)
def test_screen_non_html(body: bytes, content_type: str | None) -> None:
    error = screen(_record(body, content_type), max_bytes=1000)

    assert error is not None
    assert error.kind == "non_html"


@pytest.mark.parametrize("content_type", ["application/xhtml+xml", "text/plain", "TEXT/HTML; x=y"])
def test_screen_html_like_content_types(content_type: str) -> None:
    assert screen(_record(b"<p>hi</p>", content_type), max_bytes=1000) is None


def test_skipped_and_error_carry_offsets() -> None:
    assert Skipped("revisit", 10).offset == 10
    assert RecordError("bad_json", 2, "m").url == ""


def test_arc_file_is_read_too() -> None:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + _page(3)
    version = b"1 0 test\nURL IP-address Archive-date Content-type Archive-length\n"
    desc = b"filedesc://crawl.arc 0.0.0.0 20240506070809 text/plain %d\n" % len(version)
    line = b"http://example.com/arc 1.2.3.4 20240506070809 text/html %d\n" % len(http)
    data = desc + version + b"\n" + line + http + b"\n"

    items = list(read_warc(io.BytesIO(data)))

    assert [type(item).__name__ for item in items] == ["Skipped", "RawRecord"]
    record = _raw(items[1])
    assert record.url == "http://example.com/arc"
    assert record.body == _page(3)
    assert record.fetched_at == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_undecodable_content_encoding_is_an_error() -> None:
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=False)
    headers = [("Content-Type", "text/html"), ("Content-Encoding", "zstd")]
    _response(writer, "https://example.com/z", b"\x28\xb5\x2f\xfd....", headers=headers)

    (item,) = read_warc(io.BytesIO(buffer.getvalue()))

    assert _error(item).kind == "bad_record"
    assert "zstd" in _error(item).message


def test_jsonl_protocol_relative_url_becomes_https() -> None:
    stream = _jsonl(
        {"url": "//news.example.com/2008/story.html", "html": "<p>a</p>"},
        {"url": "https://example.com/b", "html": "<p>b</p>", "final_url": "//example.com/b2"},
    )

    first, second = (_raw(item) for item in read_jsonl(stream))

    assert first.url == "https://news.example.com/2008/story.html"
    assert first.offset == 1
    assert second.final_url == "https://example.com/b2"


# --- damaged regions, old and odd archive shapes ----------------------------------


class _Unseekable(io.RawIOBase):
    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def read(self, size: int = -1) -> bytes:
        return self._data.read(size)


def _corrupt_errors(items: list[Item]) -> list[int]:
    return [item.offset for item in items if isinstance(item, RecordError)]


def test_junk_and_corrupt_gzip_members_are_skipped_and_every_good_member_read() -> None:
    archive = broken_archives.junk_gzip_members()

    items = list(read_warc(io.BytesIO(archive.data)))

    assert [item.url for item in items if isinstance(item, RawRecord)] == archive.good_urls
    assert _corrupt_errors(items) == archive.damaged_offsets
    assert {_error(item).kind for item in items if isinstance(item, RecordError)} == {"corrupt"}
    assert "damaged region" in _error(items[5]).message


def test_records_after_a_junk_member_keep_their_member_offsets() -> None:
    archive = broken_archives.junk_gzip_members()
    items = list(read_warc(io.BytesIO(archive.data)))

    for item in items:
        if isinstance(item, RawRecord):
            alone = list(read_warc(io.BytesIO(archive.data[item.offset :])))
            assert alone[0].url == item.url


def test_an_unseekable_stream_stops_at_a_damaged_member_with_one_error() -> None:
    archive = broken_archives.junk_gzip_members()
    cut = archive.data[: archive.damaged_offsets[1] + 30]

    items = list(read_warc(_Unseekable(cut)))  # type: ignore[arg-type]

    assert sum(isinstance(item, RawRecord) for item in items) == 12
    assert _kinds(items)[-1] == "corrupt"


def test_garbage_between_plain_records_is_one_damaged_region_each() -> None:
    archive = broken_archives.garbage_between_plain_records()

    items = list(read_warc(io.BytesIO(archive.data)))

    assert [item.url for item in items if isinstance(item, RawRecord)] == archive.good_urls
    assert _corrupt_errors(items) == archive.damaged_offsets
    first = _error(next(item for item in items if isinstance(item, RecordError)))
    assert f"from offset {archive.damaged_offsets[0]} to offset" in first.message


@given(junk=st.binary(min_size=1, max_size=300).filter(lambda b: b"WARC/" not in b))
@settings(max_examples=60, deadline=None)
def test_any_bytes_between_plain_records_lose_no_record(junk: bytes) -> None:
    first = broken_archives.warc_record("https://e.com/1", _page(1), compress=False)
    second = broken_archives.warc_record("https://e.com/2", _page(2), compress=False)

    items = list(read_warc(io.BytesIO(first + junk + second)))

    assert [item.url for item in items if isinstance(item, RawRecord)] == [
        "https://e.com/1",
        "https://e.com/2",
    ]
    errors = [item for item in items if not isinstance(item, RawRecord)]
    assert len(errors) <= 1
    assert all(_error(item).kind == "corrupt" for item in errors)


@given(junk=st.binary(min_size=1, max_size=300))
@example(junk=b"\x1f\x8b\x08")  # a gzip header that swallows the next member
@settings(max_examples=60, deadline=None)
def test_any_bytes_between_gzip_members_lose_no_record(junk: bytes) -> None:
    first = broken_archives.warc_record("https://e.com/1", _page(1))
    second = broken_archives.warc_record("https://e.com/2", _page(2))

    items = list(read_warc(io.BytesIO(first + junk + second)))

    assert [item.url for item in items if isinstance(item, RawRecord)] == [
        "https://e.com/1",
        "https://e.com/2",
    ]
    assert _corrupt_errors(items) == [len(first)]


def test_headerless_common_crawl_arc_is_read() -> None:
    archive = broken_archives.headerless_arc()

    items = list(read_warc(io.BytesIO(archive.data)))

    assert [_raw(item).url for item in items] == archive.good_urls
    first = _raw(items[0])
    assert first.body == broken_archives.page(200)
    assert first.fetched_at == datetime(2009, 9, 17, 12, 0, tzinfo=UTC)
    assert first.http_status == 200
    assert _raw(items[1]).url == "http://arc.example.com/1%20copy"


def test_arc_v2_record_line_is_read() -> None:
    http = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + _page(5)
    line = b"http://e.com/v2 1.2.3.4 20080102030405 text/html 200 abc123 - 0 x.arc %d\n"
    items = list(read_warc(io.BytesIO(line % len(http) + http + b"\n")))

    assert _raw(items[0]).url == "http://e.com/v2"
    assert _raw(items[0]).body == _page(5)


def test_clueweb09_whole_file_gzip_with_wrong_lengths_is_read() -> None:
    archive = broken_archives.clueweb09()

    items = list(read_warc(io.BytesIO(archive.data)))

    assert [getattr(item, "reason", None) for item in items[:1]] == ["warcinfo"]
    records = [_raw(item) for item in items[1:]]
    assert [r.url for r in records] == archive.good_urls
    assert [r.body for r in records] == [broken_archives.page(300 + i) for i in range(5)]
    assert len({r.offset for r in records}) == 5
    assert records[0].fetched_at == datetime(2009, 1, 14, 3, 32, 41, tzinfo=UTC)


def test_an_unparseable_warc_date_is_a_warning_saying_the_ingest_time_is_used() -> None:
    records = [item for item in read_warc(io.BytesIO(broken_archives.clueweb09().data))]
    bad = _raw(records[4])

    assert bad.fetched_at is None
    (warning,) = bad.warnings
    assert warning.kind == "bad_date"
    assert "2009-03-65" in warning.message
    assert "ingest time" in warning.message


def test_a_missing_warc_date_is_a_warning_too() -> None:
    raw = _raw_warc(
        ["WARC-Type: response", "WARC-Target-URI: https://e.com/", "Content-Type: text/html"],
        b"<p>hi</p>",
    )

    (item,) = read_warc(io.BytesIO(raw))

    assert [w.kind for w in _raw(item).warnings] == ["bad_date"]


def test_a_version_line_glued_to_garbage_still_starts_the_next_record() -> None:
    second = broken_archives.warc_record("https://e.com/2", _page(2), compress=False)
    data = _warc(False, count=1) + b"junk without a line break" + second

    items = list(read_warc(io.BytesIO(data)))

    assert _kinds(items) == ["RawRecord", "corrupt", "RawRecord"]


def test_jsonl_gzip_cut_short_keeps_the_lines_before() -> None:
    import gzip as gz

    archive = broken_archives.jsonl_gz()
    cut = archive.data[: len(archive.data) - 40]

    items = list(read_jsonl(gz.GzipFile(fileobj=io.BytesIO(cut))))  # type: ignore[arg-type]

    assert _kinds(items)[-1] in {"truncated", "corrupt"}
    assert all(isinstance(item, RawRecord) for item in items[:-1])


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"doc_type": ["article"]}, "doc_type"),
        ({"doc_type": {"a": 1}}, "doc_type"),
        ({"fetched_at": "0001-01-01T00:00:00+05:00"}, "fetched_at"),
        ({"fetched_at": "1800-01-01T00:00:00Z"}, "fetched_at"),
        ({"fetched_at": "9999-12-31T23:59:59Z"}, "fetched_at"),
    ],
)
def test_record_from_json_refuses_values_that_used_to_crash_the_ingest(
    fields: dict[str, object], field: str
) -> None:
    result = record_from_json({"url": "https://e.com/", "html": "<p>x</p>", **fields}, 4)

    assert isinstance(result, RecordError)
    assert (result.kind, result.offset) == ("bad_field", 4)
    assert repr(field) in result.message


@pytest.mark.parametrize(
    ("url", "final_url"),
    [
        ("https://e.com/\x00", None),
        ("https://e.com/", "https://e.com/\x00"),
        ("https://" + "h" * 256 + "/", None),
        ("https://e.com/", "https://" + "h" * 256 + "/"),
        ("https://e.com/\ud800", None),
        ("https://e.com/" + "é" * 1300, None),
    ],
)
def test_record_sanitise_refuses_urls_that_cannot_be_stored(
    url: str, final_url: str | None
) -> None:
    record = RawRecord(url, b"<p>x</p>", 200, {}, None, 7, final_url=final_url)

    result = record_sanitise(record)

    assert isinstance(result, RecordError)
    assert (result.kind, result.offset) == ("bad_url", 7)
    assert text_problem(result.url) is None


def test_record_sanitise_cleans_headers_and_keeps_a_warning() -> None:
    record = RawRecord(
        "https://e.com/", b"<p>x</p>", 200, {"x-a": "a\x00b", "x\udcff": "v"}, None, 3
    )

    result = record_sanitise(record)

    assert isinstance(result, RawRecord)
    assert result.headers == {"x-a": "a\ufffdb", "x\ufffd": "v"}
    assert [w.kind for w in result.warnings] == ["bad_header"]
    assert all(text_problem(w.message) is None for w in result.warnings)


def test_record_sanitise_passes_a_good_record_unchanged() -> None:
    record = RawRecord("https://e.com/ü", b"<p>x</p>", 200, {"a": "b"}, datetime.now(UTC), 1)

    assert record_sanitise(record) is record


def test_record_sanitise_refuses_a_fetch_time_out_of_range() -> None:
    record = RawRecord("https://e.com/", b"x", 200, {}, datetime(1, 1, 1, tzinfo=UTC), 2)

    result = record_sanitise(record)

    assert isinstance(result, RecordError)
    assert result.kind == "bad_field"


def test_a_content_length_running_into_the_next_record_is_cut_there_with_a_warning() -> None:
    body = _page(1)
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    header = (
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://e.com/long\r\n"
        f"WARC-Date: {WARC_DATE}\r\nContent-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(http) + 300}\r\n\r\n"
    ).encode()
    data = header + http + b"\r\n\r\n" + _warc(False, count=2)

    items = list(read_warc(io.BytesIO(data)))

    assert _kinds(items) == ["RawRecord"] * 3
    first = _raw(items[0])
    assert first.body == body
    assert [w.kind for w in first.warnings] == ["bad_length"]
    assert [item.url for item in items[1:]] == ["https://example.com/0", "https://example.com/1"]


def _arc_with_long_last_record(*, body: bytes, overstated: int) -> bytes:
    good = broken_archives.headerless_arc(count=2, compress=False).data
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    line = (
        f"http://arc.example.com/last 10.0.0.9 20090917120000 text/html {len(http) + overstated}\n"
    )
    return good + line.encode() + http + b"\n"


def test_an_arc_length_past_the_end_of_the_file_keeps_a_complete_page_with_a_warning() -> None:
    body = broken_archives.page(900)
    items = list(read_warc(io.BytesIO(_arc_with_long_last_record(body=body, overstated=500))))

    assert _kinds(items) == ["RawRecord"] * 3
    last = _raw(items[-1])
    assert last.url == "http://arc.example.com/last"
    assert last.body.rstrip() == body
    assert [w.kind for w in last.warnings] == ["bad_length"]
    assert "file ends" in last.warnings[0].message


def test_an_arc_record_cut_inside_its_page_is_still_truncated() -> None:
    body = broken_archives.page(901)[:-40]  # the page's end is missing
    items = list(read_warc(io.BytesIO(_arc_with_long_last_record(body=body, overstated=500))))

    assert _kinds(items) == ["RawRecord", "RawRecord", "truncated"]
