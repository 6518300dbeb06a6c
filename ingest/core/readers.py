"""Streaming crawl readers: WARC (gzipped or plain) and JSON Lines.

Guarantees:
- A file is never read into memory whole; one record body at a time (bounded by
  ``max_body_bytes``).
- Every record becomes exactly one item: a ``RawRecord``, a ``RecordError`` (bad input,
  with a machine ``kind`` and a human message) or a ``Skipped`` (a record that is not a
  page, e.g. a WARC request or revisit). Readers never raise on bad input.
- A damaged WARC (truncated or corrupt gzip member, unparseable record header) ends
  with one ``truncated``/``corrupt`` error at the last known offset; items yielded
  before it are complete and valid. warcio silently shortens a truncated member, so
  completeness is checked here against the WARC ``Content-Length`` and the file size.
- A bad JSONL line is an error for that line only; the file goes on.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import BufferedReader
from warcio.limitreader import LimitReader

DOC_TYPES = frozenset({"article", "product", "short", "listing", "other"})

# Far above any sane page cap: only protects memory from a multi-GB record.
MAX_BODY_BYTES = 64 * 1024 * 1024

_READ_CHUNK = 64 * 1024
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})
_BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", "PDF"),
    (b"\x89PNG", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF8", "GIF"),
    (b"PK\x03\x04", "ZIP"),
    (b"RIFF", "RIFF"),
    (b"\x1f\x8b", "gzip"),
)
# UTF-16/32 text legitimately contains NUL bytes; its BOM says so.
_UNICODE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_STATUS_RE = re.compile(r"\d{3}")
# Content-Encodings warcio can undo (br only when the brotli package is installed).
_DECODERS = frozenset(BufferedReader.get_supported_decompressors())


@dataclass(frozen=True)
class RawRecord:
    url: str
    body: bytes  # HTTP payload (chunked / Content-Encoding already decoded)
    http_status: int | None
    headers: dict[str, str]  # HTTP response headers, names lowercased
    fetched_at: datetime | None  # aware, UTC
    offset: int  # WARC: byte offset in the (compressed) file; JSONL: 1-based line number
    final_url: str | None = None
    doc_type: str | None = None
    forced_charset: str | None = None  # JSONL: the html came as a JSON string → utf-8


@dataclass(frozen=True)
class RecordError:
    kind: str
    offset: int
    message: str
    url: str = ""


@dataclass(frozen=True)
class Skipped:
    reason: str
    offset: int
    url: str = ""


Item = RawRecord | RecordError | Skipped


class _CountingReader:
    """Counts bytes taken from the underlying stream; its ``tell`` is that count, so
    warcio's offsets are relative to where reading started (seekable or not)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.consumed = 0
        self.at_eof = False

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self.consumed += len(data)
        if not data and size != 0:
            self.at_eof = True
        return data

    def tell(self) -> int:
        return self.consumed

    def close(self) -> None:
        # The caller owns the stream; warcio closing it would surprise them.
        pass


def parse_datetime(value: str) -> datetime:
    """ISO 8601 → aware UTC datetime; a naive value is taken as UTC. Raises ValueError."""
    text = value.strip()
    if not text:
        raise ValueError("empty date")
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _drain(stream: Any) -> None:
    if stream is None:
        return
    while stream.read(_READ_CHUNK):
        pass


def _read_capped(stream: Any, cap: int) -> tuple[bytes, bool]:
    """Read at most ``cap`` bytes; the flag says whether more was left."""
    read = stream.read
    chunks: list[bytes] = []
    total = 0
    while total <= cap:
        chunk = read(min(_READ_CHUNK, cap + 1 - total))
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        total += len(chunk)
    data = b"".join(chunks)
    return data[:cap], True


def _http_headers_dict(pairs: list[tuple[str, str]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in pairs:
        key = name.strip().lower()
        if key in headers:
            headers[key] = f"{headers[key]}, {value}"
        else:
            headers[key] = value
    return headers


def read_warc(stream: BinaryIO, *, max_body_bytes: int = MAX_BODY_BYTES) -> Iterator[Item]:
    """Yield one item per WARC record; see the module docstring for the guarantees."""
    source = _CountingReader(stream)
    try:
        iterator = ArchiveIterator(source)
    except Exception as exc:  # warcio may probe the stream eagerly
        yield RecordError("corrupt", 0, f"cannot open as WARC: {_short(exc)}")
        return
    records = iter(iterator)
    while True:
        # warcio's offsets go wrong (even negative) in a non-chunked gzip file.
        last_offset = max(iterator.offset, 0)
        try:
            record = next(records)
        except StopIteration:
            break
        except Exception as exc:
            if "non-chunked gzip" in str(exc):
                yield RecordError(
                    "corrupt",
                    last_offset,
                    "file is a single gzip stream, not one gzip member per record; "
                    "recompress it (warcio recompress IN OUT) and ingest it again",
                )
                return
            kind = "truncated" if source.at_eof else "corrupt"
            yield RecordError(
                kind,
                last_offset,
                f"WARC stream unreadable after offset {last_offset} "
                f"({type(exc).__name__}: {_short(exc)}); the rest of the file is skipped",
            )
            return
        items, can_go_on = _warc_item(record, iterator, source, max_body_bytes)
        yield from items
        if not can_go_on:
            return
    # warcio treats a record header cut off by end of file as a clean end: bytes left
    # after the last complete record mean the file was cut.
    end = iterator.offset
    if source.consumed > end:
        yield RecordError(
            "truncated",
            end,
            f"{source.consumed - end} bytes after offset {end} are not a complete WARC "
            "record (file truncated or corrupt)",
        )


def _warc_item(
    record: Any, iterator: ArchiveIterator, source: _CountingReader, max_body_bytes: int
) -> tuple[list[Item], bool]:
    """One record → its item (plus an error if the file ends inside the record's gzip
    member). The flag is False when the file cannot go on.

    The record's block is always consumed here, then checked against its WARC
    Content-Length, so ``iterator.offset`` is the end of this record afterwards.
    """
    offset = max(iterator.offset, 0)
    url = ""
    raw = None
    try:
        rec_headers = record.rec_headers
        url = rec_headers.get_header("WARC-Target-URI") or rec_headers.get_header("uri") or ""
        raw = record.raw_stream
        rec_type = (record.rec_type or "").lower()
        item = _warc_classify(record, rec_type, url, offset, max_body_bytes)
    except Exception as exc:
        item = RecordError("bad_record", offset, f"{type(exc).__name__}: {_short(exc)}", url)
    try:
        _drain(raw)
        iterator.read_to_end()
    except Exception as exc:
        kind = "truncated" if source.at_eof else "corrupt"
        return [RecordError(kind, offset, f"record unreadable: {_short(exc)}", url)], False
    truncated = _incomplete(raw)
    if truncated is not None:
        return [RecordError("truncated", offset, truncated, url)], False
    if not isinstance(raw, LimitReader):
        # WARC requires Content-Length; without it the header block itself is broken,
        # most often because the file ends inside it.
        if source.at_eof:
            message = "record header is cut off by the end of the file"
            return [RecordError("truncated", offset, message, url)], False
        message = "WARC record header has no valid Content-Length"
        return [RecordError("bad_record", offset, message, url)], True
    decompressor = getattr(iterator.reader, "decompressor", None)
    if (
        decompressor is not None
        and not getattr(decompressor, "eof", True)
        and iterator.next_line is None
    ):
        # The record is whole but its gzip member never ended: the file was cut
        # (or the member is corrupt) and any records after it are lost.
        kind = "truncated" if source.at_eof else "corrupt"
        message = f"gzip member of the record at offset {offset} has no end; file is cut"
        return [item, RecordError(kind, offset, message, url)], False
    return [item], True


def _warc_classify(record: Any, rec_type: str, url: str, offset: int, max_body_bytes: int) -> Item:
    if not rec_type:
        return RecordError("bad_record", offset, "WARC record has no WARC-Type", url)
    if rec_type != "response":
        return Skipped(rec_type, offset, url)
    if not url.lower().startswith(("http://", "https://")):
        return Skipped("non_http", offset, url)

    http_headers = record.http_headers
    # An ARC header's content-type is the HTTP one; a WARC block must say application/http.
    block_type = ""
    if record.format != "arc":
        block_type = (record.rec_headers.get_header("Content-Type") or "").strip().lower()
    protocol = (http_headers.protocol if http_headers is not None else "") or ""
    if (
        http_headers is None
        or (block_type and not block_type.startswith("application/http"))
        or not protocol.upper().startswith("HTTP/")
    ):
        shown = block_type or "missing"
        return RecordError(
            "no_http_headers",
            offset,
            f"response record has no HTTP headers (WARC Content-Type {shown})",
            url,
        )
    encoding = (http_headers.get_header("Content-Encoding") or "").strip().lower()
    if encoding not in ("", "identity") and encoding not in _DECODERS:
        return RecordError(
            "bad_record", offset, f"Content-Encoding {encoding!r} cannot be decoded", url
        )
    body, too_big = _read_capped(record.content_stream(), max_body_bytes)
    if too_big:
        return RecordError(
            "too_large", offset, f"body is over {max_body_bytes} bytes, the reader's limit", url
        )
    status_text = (http_headers.get_statuscode() or "").strip()
    return RawRecord(
        url=url,
        body=body,
        http_status=int(status_text) if _STATUS_RE.fullmatch(status_text) else None,
        headers=_http_headers_dict(list(http_headers.headers)),
        fetched_at=_record_date(record.rec_headers),
        offset=offset,
    )


def _incomplete(raw: object) -> str | None:
    """A message when the record's block ended before its WARC Content-Length."""
    if isinstance(raw, LimitReader) and raw.limit > 0:
        declared = raw._orig_limit
        return (
            f"record is truncated: WARC Content-Length is {declared} bytes, "
            f"only {declared - raw.limit} present (file cut or corrupt gzip member)"
        )
    return None


def _record_date(rec_headers: Any) -> datetime | None:
    """WARC-Date (ISO 8601), or an ARC archive-date (14 digits); None if unparseable."""
    try:
        value = rec_headers.get_header("WARC-Date")
        if value:
            return parse_datetime(value)
        value = rec_headers.get_header("archive-date") or ""
        if len(value) >= 14 and value[:14].isdigit():
            return datetime.strptime(value[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        pass
    return None


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_jsonl(stream: BinaryIO, *, max_line_bytes: int = MAX_BODY_BYTES) -> Iterator[Item]:
    """Yield one item per non-blank line; offsets are 1-based line numbers."""
    line_no = 0
    while True:
        line = stream.readline(max_line_bytes + 1)
        if not line:
            return
        line_no += 1
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            size = len(line)
            while True:  # skip the rest of the over-long line
                rest = stream.readline(_READ_CHUNK)
                size += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield RecordError(
                "too_large",
                line_no,
                f"line is {size} bytes, the reader's limit is {max_line_bytes}",
            )
            continue
        if line_no == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield RecordError("bad_json", line_no, f"line is not valid UTF-8 (byte {exc.start})")
            continue
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:
            yield RecordError("bad_json", line_no, f"line is not JSON: {_short(exc)}")
            continue
        yield record_from_json(obj, line_no)


def record_from_json(obj: object, offset: int) -> RawRecord | RecordError:
    """Validate one JSON document (JSONL line or API body) into a RawRecord."""
    if not isinstance(obj, dict):
        return RecordError("bad_json", offset, f"expected a JSON object, got {_json_type(obj)}")
    url_value = obj.get("url")
    url = url_value if isinstance(url_value, str) else ""

    def bad(field: str, why: str) -> RecordError:
        return RecordError("bad_field", offset, f"field {field!r} {why}", url)

    for field in ("url", "html"):
        if field not in obj or obj[field] is None:
            return RecordError("missing_field", offset, f"missing required field {field!r}", url)
        if not isinstance(obj[field], str):
            return bad(field, f"must be a string, got {_json_type(obj[field])}")
    if not url.strip():
        return bad("url", "must not be empty")
    url = _absolute(url)

    status = obj.get("status", 200)
    if status is None:
        status = 200
    if isinstance(status, bool) or not isinstance(status, int):
        return bad("status", f"must be an integer, got {_json_type(status)}")
    if not 100 <= status <= 599:
        return bad("status", f"must be an HTTP status 100-599, got {status}")

    fetched_at: datetime | None = None
    raw_date = obj.get("fetched_at")
    if raw_date is not None:
        if not isinstance(raw_date, str):
            return bad("fetched_at", f"must be an ISO 8601 string, got {_json_type(raw_date)}")
        try:
            fetched_at = parse_datetime(raw_date)
        except ValueError:
            return bad("fetched_at", f"is not an ISO 8601 date-time: {raw_date[:60]!r}")

    headers: dict[str, str] = {}
    raw_headers = obj.get("headers")
    if raw_headers is not None:
        if not isinstance(raw_headers, dict):
            return bad("headers", f"must be an object, got {_json_type(raw_headers)}")
        for name, value in raw_headers.items():
            if not isinstance(value, str):
                return bad("headers", f"value of {name!r} must be a string")
            headers[name.strip().lower()] = value

    final_url = obj.get("final_url")
    if final_url is not None and not isinstance(final_url, str):
        return bad("final_url", f"must be a string, got {_json_type(final_url)}")

    doc_type = obj.get("doc_type")
    if doc_type is not None and doc_type not in DOC_TYPES:
        return bad("doc_type", f"must be one of {', '.join(sorted(DOC_TYPES))}, got {doc_type!r}")

    # A lone surrogate (legal in JSON, not in UTF-8) becomes "?" rather than failing.
    body = obj["html"].encode("utf-8", errors="replace")
    return RawRecord(
        url=url,
        body=body,
        http_status=status,
        headers=headers,
        fetched_at=fetched_at,
        offset=offset,
        final_url=_absolute(final_url) if final_url else None,
        doc_type=doc_type,
        forced_charset="utf-8",
    )


def _absolute(url: str) -> str:
    """A protocol-relative URL (``//host/path``, as some crawl exports write it) as https."""
    stripped = url.strip()
    return "https:" + stripped if stripped.startswith("//") else url


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def screen(record: RawRecord, *, max_bytes: int) -> RecordError | None:
    """Reject bodies that cannot be a page: empty, over the cap, or not HTML/text."""
    body = record.body
    size = len(body)
    if not body.strip():
        return RecordError("empty_body", record.offset, f"body is empty ({size} bytes)", record.url)
    if size > max_bytes:
        return RecordError(
            "too_large", record.offset, f"body is {size} bytes, cap is {max_bytes}", record.url
        )
    content_type = record.headers.get("content-type", "")
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type and media_type not in _HTML_TYPES:
        return RecordError(
            "non_html",
            record.offset,
            f"Content-Type is {media_type!r}, not HTML ({size} bytes)",
            record.url,
        )
    for magic, name in _BINARY_MAGIC:
        if body.startswith(magic):
            return RecordError(
                "non_html", record.offset, f"body is {name} data ({size} bytes)", record.url
            )
    if not body.startswith(_UNICODE_BOMS) and b"\x00" in body[:1024]:
        return RecordError(
            "non_html",
            record.offset,
            f"body has NUL bytes in its first 1 KiB: binary data ({size} bytes)",
            record.url,
        )
    return None
