"""A broken-archive corpus, generated: small files of every damaged or old shape the
readers meet in real crawls, each with the URLs of its good records and the offsets of
its damaged regions. No Django here: the core tests use it too."""

import gzip
import io
import json
from dataclasses import dataclass, field

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

WARC_DATE = "2024-05-06T07:08:09Z"
_WORDS = [
    "harbour",
    "lantern",
    "copper",
    "willow",
    "meadow",
    "quarry",
    "falcon",
    "ember",
    "orchard",
    "glacier",
    "tundra",
    "saffron",
    "beacon",
    "cobalt",
    "juniper",
    "marble",
    "thistle",
    "canyon",
    "prairie",
    "harvest",
]


@dataclass
class Archive:
    name: str  # file name: its suffix tells the ingest command the format
    data: bytes
    good_urls: list[str]
    damaged_offsets: list[int] = field(default_factory=list)  # one `corrupt` error each
    bad_offsets: dict[int, str] = field(default_factory=dict)  # offset → error kind


def page(i: int) -> bytes:
    """A distinct article-like page, long enough for extraction to keep its text."""
    words = [_WORDS[(i * 7 + n * 3 + n // 5) % len(_WORDS)] for n in range(160)]
    paragraphs = "".join(
        f"<p>{' '.join(words[k : k + 40]).capitalize()} number {i}.</p>" for k in range(0, 160, 40)
    )
    return (
        f"<html><head><title>Page {i}</title></head><body><article><h1>Page {i}</h1>"
        f"{paragraphs}</article></body></html>"
    ).encode()


def warc_record(url: str, body: bytes, *, compress: bool = True) -> bytes:
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=compress)
    http = StatusAndHeaders(
        "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
    )
    writer.write_record(
        writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            http_headers=http,
            warc_headers_dict={"WARC-Date": WARC_DATE},
        )
    )
    return out.getvalue()


def junk_gzip_members(host: str = "gz.example.com", count: int = 20) -> Archive:
    """A multi-member .warc.gz with, after record 5, a gzip member of junk text and,
    after record 12, a member whose deflate data is corrupt; every other member is a
    good record."""
    parts: list[bytes] = []
    urls: list[str] = []
    damaged: list[int] = []
    offset = 0
    for i in range(count):
        if i == 5:
            junk = gzip.compress(b"this is not a WARC record\r\n" * 50)
            damaged.append(offset)
            parts.append(junk)
            offset += len(junk)
        if i == 12:
            good = gzip.compress(b"WARC/1.0\r\n" + b"x" * 4000)
            corrupt = good[:10] + bytes(b ^ 0x5A for b in good[10:-8]) + good[-8:]
            damaged.append(offset)
            parts.append(corrupt)
            offset += len(corrupt)
        url = f"https://{host}/{i}"
        record = warc_record(url, page(i))
        urls.append(url)
        parts.append(record)
        offset += len(record)
    return Archive("junk-members.warc.gz", b"".join(parts), urls, damaged)


def garbage_between_plain_records(host: str = "plain.example.com", count: int = 6) -> Archive:
    """A plain .warc whose records 2 and 4 are preceded by garbage bytes."""
    parts: list[bytes] = []
    urls: list[str] = []
    damaged: list[int] = []
    offset = 0
    for i in range(count):
        if i in (2, 4):
            garbage = b"\x00\x01garbage between records\r\nHTTP/1.1 200 OK\r\n<html>\r\n" * 3
            damaged.append(offset)
            parts.append(garbage)
            offset += len(garbage)
        url = f"https://{host}/{i}"
        record = warc_record(url, page(100 + i), compress=False)
        urls.append(url)
        parts.append(record)
        offset += len(record)
    return Archive("garbage.warc", b"".join(parts), urls, damaged)


def headerless_arc(
    host: str = "arc.example.com", count: int = 5, *, compress: bool = True
) -> Archive:
    """A 2008–2010 Common Crawl style .arc.gz: no filedesc header, one gzip member per
    record, v1 record lines (one with a URL containing a space, one with a content type
    carrying a parameter), and Content-Encoding / Transfer-Encoding headers kept although
    the stored payload is already decoded."""
    parts: list[bytes] = []
    urls: list[str] = []
    for i in range(count):
        url = f"http://{host}/{i}" + (" copy" if i == 1 else "")
        content_type = "text/html; charset=utf-8" if i == 2 else "text/html"
        http = (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding:gzip\r\n"
            b"Transfer-Encoding:chunked\r\nx-commoncrawl-DetectedCharset:UTF-8\r\n\r\n"
            + page(200 + i)
        )
        line = f"{url} 10.0.0.{i} 2009091712{i:02d}00 {content_type} {len(http)}\n".encode()
        record = line + http + b"\n"
        parts.append(gzip.compress(record) if compress else record)
        urls.append(url.replace(" ", "%20"))
    name = "crawl-002.arc.gz" if compress else "crawl-001.arc"
    return Archive(name, b"".join(parts), urls)


def clueweb09(host: str = "clueweb.example.com", count: int = 5) -> Archive:
    """A ClueWeb09 style file: WARC/0.18, LF line ends, one gzip stream for the whole
    file, a warcinfo record first, Content-Lengths that overstate the block (CRs were
    stripped after they were counted) and an impossible WARC-Date on record 3."""
    out = io.BytesIO()
    info = b"software: Nutch 1.0-dev\ncollection: clueweb09\n"
    out.write(
        b"WARC/0.18\nWARC-Type: warcinfo\nWARC-Date: 2009-03-65T08:43:19-0800\n"
        b"Content-Type: application/warc-fields\nContent-Length: %d\n\n"
        % len(info)
        + info
        + b"\n\n"
    )
    urls: list[str] = []
    bad: dict[int, str] = {}
    for i in range(count):
        url = f"http://{host}/{i}"
        http = b"HTTP/1.1 200 OK\nContent-Type: text/html\nServer: Apache\n\n" + page(300 + i)
        date = "2009-03-65T08:43:19-0800" if i == 3 else "2009-01-13T19:32:41-0800"
        header = (
            "WARC/0.18\nWARC-Type: response\n"
            f"WARC-Target-URI: {url}\nWARC-Date: {date}\n"
            "WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-%012d>\n"
            "Content-Type: application/http;msgtype=response\n"
            "WARC-TREC-ID: clueweb09-en0000-00-%05d\n"
            "Content-Length: %d\n\n"
        ) % (i, i, len(http) + 4)  # four CRs counted, then stripped
        if i == 3:
            # Records inside one gzip member go by their decompressed offset.
            bad[out.tell()] = "bad_date"
        out.write(header.encode() + http + b"\n\n")
        urls.append(url)
    return Archive("clueweb09-00.warc.gz", gzip.compress(out.getvalue()), urls, bad_offsets=bad)


def wayback_folded(host: str = "wayback.example.com", count: int = 4) -> Archive:
    """Wayback-style response records: the HTTP headers folded into the WARC header
    and the block is the page itself."""
    parts: list[bytes] = []
    urls: list[str] = []
    for i in range(count):
        url = f"http://{host}/{i}"
        body = page(400 + i)
        header = (
            "WARC/1.0\r\nWARC-Type: response\r\n"
            f"WARC-Target-URI: {url}\r\nWARC-Date: 2008-06-0{i + 1}T10:00:00Z\r\n"
            "Content-Type: text/html; charset=utf-8\r\n"
            "Last-Modified: Tue, 01 Jan 2008 00:00:00 GMT\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        parts.append(gzip.compress(header.encode() + body + b"\r\n\r\n"))
        urls.append(url)
    return Archive("wayback.warc.gz", b"".join(parts), urls)


def jsonl_gz(host: str = "jsonl.example.com", count: int = 5) -> Archive:
    lines = [
        json.dumps({"url": f"https://{host}/{i}", "html": page(500 + i).decode()})
        for i in range(count)
    ]
    data = gzip.compress(("\n".join(lines) + "\n").encode())
    return Archive("pages.jsonl.gz", data, [f"https://{host}/{i}" for i in range(count)])


def bad_jsonl_records(host: str = "bad.example.com") -> Archive:
    """One good line between each kind of line that used to abort the whole file at the
    database: offsets are line numbers."""
    bad: list[tuple[dict[str, object], str]] = [
        ({"url": f"https://{host}/nul\u0000"}, "bad_url"),
        ({"url": f"https://{host}/x", "final_url": f"https://{host}/\u0000"}, "bad_url"),
        ({"url": "https://" + "h" * 300 + ".example.com/"}, "bad_url"),
        ({"url": f"https://{host}/\ud800"}, "bad_url"),
        ({"url": f"https://{host}/" + "x" * 3000}, "bad_url"),
        ({"url": f"https://{host}/dt", "doc_type": ["article"]}, "bad_field"),
        ({"url": f"https://{host}/y1", "fetched_at": "0001-01-01T00:00:00+05:00"}, "bad_field"),
        ({"url": f"https://{host}/old", "fetched_at": "1700-01-01T00:00:00Z"}, "bad_field"),
    ]
    lines: list[str] = []
    urls: list[str] = []
    errors: dict[int, str] = {}
    for n, (fields, kind) in enumerate(bad):
        good_url = f"https://{host}/good-{n}"
        lines.append(json.dumps({"url": good_url, "html": page(600 + n).decode()}))
        urls.append(good_url)
        lines.append(json.dumps({"html": page(700 + n).decode(), **fields}))
        errors[len(lines)] = kind
    # Header values with NUL or a lone surrogate are cleaned, and the record is stored.
    for n, value in enumerate(["a\u0000b", "\udcff"]):
        url = f"https://{host}/header-{n}"
        lines.append(
            json.dumps({"url": url, "html": page(800 + n).decode(), "headers": {"x-bad": value}})
        )
        urls.append(url)
        errors[len(lines)] = "bad_header"
    # A lone surrogate in the html becomes "?", and the record is stored with a warning.
    url = f"https://{host}/html-surrogate"
    lines.append(json.dumps({"url": url, "html": page(850).decode() + "\udc80"}))
    urls.append(url)
    errors[len(lines)] = "bad_html"
    data = ("\n".join(lines) + "\n").encode()
    return Archive("bad-records.jsonl", data, urls, bad_offsets=errors)


def bad_warc_records(host: str = "badwarc.example.com") -> Archive:
    """Plain WARC records the database used to refuse, between good ones: a NUL in the
    target URI, a host over 255 characters, a NUL in an HTTP header value (stored,
    cleaned, with a warning) and a WARC-Date that is not a date (stored, with a
    warning)."""

    def record(url: bytes, header: bytes, date: bytes, body: bytes) -> bytes:
        http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + header + b"\r\n" + body
        return (
            b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: " + url + b"\r\n"
            b"WARC-Date: " + date + b"\r\nContent-Type: application/http; msgtype=response\r\n"
            b"Content-Length: %d\r\n\r\n" % len(http) + http + b"\r\n\r\n"
        )

    good_date = WARC_DATE.encode()
    cases = [
        (f"https://{host}/nul\x00".encode(), b"", good_date, "bad_url"),
        (b"https://" + b"h" * 300 + b".example.com/", b"", good_date, "bad_url"),
        (f"https://{host}/header".encode(), b"X-Bad: a\x00b\r\n", good_date, "bad_header"),
        (f"https://{host}/date".encode(), b"", b"2009-13-45T99:00:00Z", "bad_date"),
    ]
    parts: list[bytes] = []
    urls: list[str] = []
    bad: dict[int, str] = {}
    offset = 0
    for n, (url, header, date, kind) in enumerate(cases):
        good_url = f"https://{host}/good-{n}"
        good = record(good_url.encode(), b"", good_date, page(900 + n))
        urls.append(good_url)
        parts.append(good)
        offset += len(good)
        if kind in ("bad_header", "bad_date"):
            urls.append(url.decode())
        bad[offset] = kind
        bad_record = record(url, header, date, page(950 + n))
        parts.append(bad_record)
        offset += len(bad_record)
    return Archive("bad-records.warc", b"".join(parts), urls, bad_offsets=bad)


def corpus() -> list[Archive]:
    return [
        junk_gzip_members(),
        garbage_between_plain_records(),
        headerless_arc(),
        headerless_arc("arc-plain.example.com", compress=False),
        clueweb09(),
        wayback_folded(),
        jsonl_gz(),
        bad_jsonl_records(),
        bad_warc_records(),
    ]
