"""Streaming crawl readers: WARC (gzipped or plain, WARC/0.17 to 1.1), ARC and JSON Lines.

Guarantees:
- A file is never read into memory whole; one record at a time (its block bounded by
  ``max_body_bytes`` plus room for HTTP headers).
- Every record becomes exactly one item: a ``RawRecord``, a ``RecordError`` (bad input,
  with a machine ``kind`` and a human message) or a ``Skipped`` (a record that is not a
  page, e.g. a WARC request or revisit). Readers never raise on bad input.
- Records are framed here and parsed with warcio's header parsers and payload
  decoders (chunked, Content-Encoding). A gzip file may hold one member per record
  (the norm), one member for the whole file (ClueWeb09) or anything between.
- A damaged region — a corrupt or junk gzip member, bytes between members, garbage
  between plain records — is one ``corrupt`` error naming its offsets; reading resumes
  at the next gzip member (seekable input) or the next ``WARC/`` or ARC record line.
  The end of the file inside a record is one ``truncated`` error.
- Record offsets are file offsets: of the record's gzip member when it starts one,
  otherwise of the record in the (decompressed) stream.
- Pre-standard WARC/0.x records (ClueWeb09) end at the next version line whatever
  their Content-Length says; ARC files need no file header; a response record whose
  block is not an HTTP message takes its HTTP headers from the WARC header (the
  Wayback-style "folded" shape).
- A WARC-Date or ARC date that cannot be used is a ``bad_date`` warning on the record
  (the ingest time is used instead).
- A bad JSONL line is an error for that line only; the file goes on.
- ``record_sanitise`` is the storage boundary: every value that PostgreSQL or a page
  could not hold (NUL, lone surrogates, over-long hosts, dates outside
  ``FETCHED_AT_RANGE``) is refused or cleaned there, with a recorded reason.
"""

import dataclasses
import io
import json
import re
import zlib
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, BinaryIO, cast
from urllib.parse import urlsplit

from isal import isal_zlib
from warcio.bufferedreaders import BufferedReader
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser

DOC_TYPES = frozenset({"article", "product", "short", "listing", "forum", "other"})

# Far above any sane page cap: only protects memory from a multi-GB record.
MAX_BODY_BYTES = 64 * 1024 * 1024
# Fetch times outside this range are refused (JSONL, API) or replaced by the ingest
# time with a warning (WARC, ARC): the web is younger, and far dates break pages.
FETCHED_AT_RANGE = (datetime(1990, 1, 1, tzinfo=UTC), datetime(2200, 1, 1, tzinfo=UTC))
MAX_HOST_CHARS = 255
# A snapshot's URL is part of a unique btree index, whose entries PostgreSQL caps at
# 2,704 bytes (with the fetch time and the SHA-256 beside it).
MAX_URL_BYTES = 2500
_READ_CHUNK = 64 * 1024
# Gzip members are inflated by ISA-L (python-isal: zlib's API, the same output): on the
# real pages of the ingest benchmark it reads a WARC in half zlib's CPU time, time the
# ingest command would take from the workers' cores.
_inflater = isal_zlib.decompressobj
# (isal's stubs type its error class as an instance.)
_INFLATE_ERRORS = (zlib.error, cast(type[Exception], isal_zlib.error))
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
class RecordError:
    kind: str
    offset: int
    message: str
    url: str = ""


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
    # Problems that did not stop the record (e.g. an unusable date): recorded with it.
    warnings: tuple[RecordError, ...] = ()


@dataclass(frozen=True)
class Skipped:
    reason: str
    offset: int
    url: str = ""


Item = RawRecord | RecordError | Skipped


def parse_datetime(value: str) -> datetime:
    """ISO 8601 → aware UTC datetime; a naive value is taken as UTC. Raises ValueError
    (also for a valid date that has no UTC equivalent, e.g. year 1 with an offset)."""
    text = value.strip()
    if not text:
        raise ValueError("empty date")
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError("date is out of range in UTC") from None


def fetched_at_problem(value: datetime) -> str | None:
    """Why a fetch time cannot be stored, or None."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        value = value.astimezone(UTC)
    except OverflowError:
        return "has no UTC equivalent (out of range)"
    low, high = FETCHED_AT_RANGE
    if not low <= value < high:
        return f"is outside {low.year}–{high.year - 1}"
    return None


def text_problem(value: str) -> str | None:
    """Why a string cannot be stored as text (PostgreSQL refuses NUL, UTF-8 has no lone
    surrogates), or None."""
    if "\x00" in value:
        return f"contains a NUL character at position {value.index(chr(0))}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains a lone surrogate U+{ord(value[exc.start]):04X} at position {exc.start}"
    return None


def url_problem(url: str, *, snapshot: bool = False) -> str | None:
    """Why a URL cannot be stored, or None; ``snapshot``: as the URL that identifies a
    snapshot (indexed, so bounded in bytes)."""
    problem = text_problem(url)
    if problem is not None:
        return problem
    size = len(url.encode())
    if snapshot and size > MAX_URL_BYTES:
        return f"is {size} bytes long; the limit is {MAX_URL_BYTES}"
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return None  # stored under the "unknown" site, as before
    if len(host) > MAX_HOST_CHARS:
        return f"has a host of {len(host)} characters; the limit is {MAX_HOST_CHARS}"
    return None


def fetchable_url_problem(url: str) -> str | None:
    """Why no crawler could have fetched this URL (no http/https scheme, no host, a
    broken IPv6 literal, a port outside 1–65535), or None."""
    if not url.lower().startswith(("http://", "https://")):
        return "must be an http:// or https:// URL"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535", ...
        return f"is not a URL a crawler could fetch: {exc}"
    if not parts.hostname:
        return "has no host"
    if port == 0:
        return "has port 0"
    return None


def clean_text(value: str) -> str:
    """The string with NUL and lone surrogates replaced by U+FFFD."""
    if text_problem(value) is None:
        return value
    return "".join("\ufffd" if c == "\x00" or "\ud800" <= c <= "\udfff" else c for c in value)


def record_sanitise(record: RawRecord) -> RawRecord | RecordError:
    """The storage boundary for every record, whatever its source.

    A URL or final URL that cannot be stored refuses the record (``bad_url``), as does
    a fetch time outside ``FETCHED_AT_RANGE`` (``bad_field``); header names and values
    with NUL or lone surrogates are cleaned and the record keeps a ``bad_header``
    warning.
    """
    for field, value in (("url", record.url), ("final_url", record.final_url)):
        problem = url_problem(value, snapshot=field == "url") if value else None
        if problem is not None:
            return RecordError(
                "bad_url", record.offset, f"{field} {problem}", clean_text(record.url)
            )
    if record.fetched_at is not None:
        problem = fetched_at_problem(record.fetched_at)
        if problem is not None:
            return RecordError(
                "bad_field", record.offset, f"field 'fetched_at' {problem}", record.url
            )
    bad = [
        name
        for name, value in record.headers.items()
        if text_problem(name) is not None or text_problem(value) is not None
    ]
    if not bad:
        return record
    headers = {clean_text(name): clean_text(value) for name, value in record.headers.items()}
    shown = ", ".join(repr(clean_text(name)) for name in bad[:5])
    warning = RecordError(
        "bad_header",
        record.offset,
        f"header {shown} had NUL or lone-surrogate characters; stored with U+FFFD instead",
        record.url,
    )
    return dataclasses.replace(record, headers=headers, warnings=(*record.warnings, warning))


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


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- WARC / ARC framing -------------------------------------------------------------

_GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN_BLOCK = 1024 * 1024
_MAX_LINE = 64 * 1024
_MAX_HEADER = 256 * 1024
# Room for the HTTP status line and headers on top of the payload cap.
_HEADER_ALLOWANCE = 256 * 1024
_WARC_LINE = re.compile(rb"WARC/(\d+)\.(\d+)\r?\n")
_BLANK_LINE = re.compile(rb"^[ \t\r]*\n", re.MULTILINE)
_VERSION_INSIDE = re.compile(rb"\n(?=WARC/\d+\.\d+\r?\n)")
# A record start inside a block: a version line and the record's first header line.
_RECORD_INSIDE = re.compile(rb"\n(?=WARC/\d+\.\d+\r?\n[A-Za-z][A-Za-z0-9-]*:)")
_VERSION_AT_END = re.compile(rb"WARC/\d+\.\d+\r?\n\Z")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ARC_DATE = re.compile(r"\d{14}")
_FOLDED_STATUS = ("status", "http-status", "http-status-code")
_HTTP_PARSER = StatusAndHeadersParser(["HTTP/"], verify=False)
_WARC_PARSER = StatusAndHeadersParser(["WARC/"], verify=False)


class _Damaged(Exception):
    """The input cannot be read at file ``offset`` (a gzip member or stray bytes);
    ``kind`` is ``truncated`` (the file ends there) or ``corrupt``."""

    def __init__(self, kind: str, offset: int, why: str) -> None:
        super().__init__(why)
        self.kind = kind
        self.offset = offset
        self.why = why


class _Input:
    """A crawl file as one logical byte stream: plain bytes, or its gzip members
    decompressed one after the other.

    The *logical position* counts the bytes handed out (decompressed); for a plain file
    it is the file offset. ``offset_of`` maps the logical position of a record's first
    byte to the offset the record is known by (see the module docstring).
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._raw = stream
        self._origin = 0
        self._seekable = False
        try:
            if stream.seekable():
                self._origin = stream.tell()
                self._seekable = True
        except (AttributeError, OSError, ValueError):
            pass
        self._raw_pos = 0  # file offset of the next byte taken from the stream
        self._buf = bytearray()
        self._i = 0  # bytes of _buf already handed out
        self._buf_pos = 0  # logical position of _buf[_i]
        self._pending = b""  # compressed bytes not yet decompressed
        self._dec: Any = None  # decompressor of the member being read
        self._member_at = 0
        self._members: dict[int, int] = {}  # logical start of a member → its file offset
        head = self._read_raw(2)
        self.gzip = head == b"\x1f\x8b"
        if self.gzip:
            self._pending = head
        else:
            self._buf += head

    @property
    def pos(self) -> int:
        return self._buf_pos

    @property
    def can_skip(self) -> bool:
        return self.gzip and self._seekable

    def offset_of(self, logical: int) -> int:
        return self._members.get(logical, logical)

    def file_offset(self) -> int:
        return self._raw_pos - len(self._pending)

    def _read_raw(self, size: int) -> bytes:
        data = self._raw.read(size)
        self._raw_pos += len(data)
        return data

    def _fill(self) -> bool:
        """Append more logical bytes to the buffer; False at the clean end of the file."""
        if not self.gzip:
            data = self._read_raw(_READ_CHUNK)
            self._buf += data
            return bool(data)
        while True:
            if self._dec is None:
                if len(self._pending) < 3:
                    self._pending += self._read_raw(_READ_CHUNK)
                if not self._pending:
                    return False
                at = self.file_offset()
                if not self._pending.startswith(_GZIP_MAGIC):
                    raise _Damaged("corrupt", at, "bytes that are not a gzip member")
                self._dec = _inflater(31)
                self._member_at = at
                self._members[self._buf_pos + self._available()] = at
                if len(self._members) > 256:
                    self._members = {k: v for k, v in self._members.items() if k >= self._buf_pos}
            if not self._pending:
                self._pending = self._read_raw(_READ_CHUNK)
                if not self._pending:
                    raise _Damaged(
                        "truncated",
                        self._member_at,
                        f"file truncated: it ends inside the gzip member at offset "
                        f"{self._member_at}",
                    )
            try:
                out = self._dec.decompress(self._pending, _READ_CHUNK * 4)
            except _INFLATE_ERRORS as exc:
                raise _Damaged("corrupt", self._member_at, f"corrupt gzip data ({exc})") from None
            if self._dec.eof:
                self._pending = self._dec.unused_data
                self._dec = None
            else:
                self._pending = self._dec.unconsumed_tail
            if out:
                self._buf += out
                return True

    def _available(self) -> int:
        return len(self._buf) - self._i

    def read(self, size: int) -> bytes:
        while self._available() < size and self._fill():
            pass
        i = self._i
        data = bytes(self._buf[i : i + size])
        self._i = i + len(data)
        self._buf_pos += len(data)
        if self._i > _READ_CHUNK and self._i * 2 > len(self._buf):
            # Drop what was handed out, now and then rather than on every read.
            del self._buf[: self._i]
            self._i = 0
        return data

    def readline(self, limit: int = _MAX_LINE) -> bytes:
        scanned = self._i
        while True:
            end = self._buf.find(b"\n", scanned, self._i + limit)
            if end != -1:
                return self.read(end + 1 - self._i)
            if self._available() >= limit:
                return self.read(limit)
            scanned = len(self._buf)
            if not self._fill():
                return self.read(self._available())

    def read_header(self, limit: int) -> tuple[bytes, str]:
        """The lines up to and including the next blank one, read at a line start:
        (bytes, ``ok``), or (what is left, ``cut``) at the end, or (b"", ``too_long``)."""
        while True:
            found = _BLANK_LINE.search(self._buf, self._i, self._i + limit)
            if found is not None:
                return self.read(found.end() - self._i), "ok"
            if self._available() >= limit:
                return b"", "too_long"
            if not self._fill():
                return self.read(self._available()), "cut"

    def unread(self, data: bytes) -> None:
        size = len(data)
        if size <= self._i and self._buf[self._i - size : self._i] == data:
            self._i -= size
        else:
            self._buf[self._i : self._i] = data
        self._buf_pos -= size

    def skip_to_member(self, start: int) -> int | None:
        """Go to the first gzip member at or after file offset ``start`` that
        decompresses into the start of a record: its offset, or None (then at the end)."""
        self._buf.clear()
        self._i = 0
        self._pending = b""
        self._dec = None
        pos = start
        while True:
            self._raw.seek(self._origin + pos)
            block = self._raw.read(_SCAN_BLOCK)
            found = block.find(_GZIP_MAGIC)
            while found != -1:
                if self._member_starts_record(pos + found):
                    self._raw.seek(self._origin + pos + found)
                    self._raw_pos = pos + found
                    return pos + found
                found = block.find(_GZIP_MAGIC, found + 1)
            if len(block) < _SCAN_BLOCK:
                break
            pos += len(block) - 2
        self._raw.seek(0, io.SEEK_END)
        self._raw_pos = self._raw.tell() - self._origin
        return None

    def _member_starts_record(self, at: int) -> bool:
        self._raw.seek(self._origin + at)
        head = self._raw.read(_READ_CHUNK)
        try:
            out = _inflater(31).decompress(head, 4096)
        except _INFLATE_ERRORS:
            return False
        line = out.lstrip(b"\r\n").split(b"\n", 1)[0] + b"\n"
        return _record_start(line) is not None


@dataclass(frozen=True)
class _ArcHeader:
    url: str
    date: str
    content_type: str
    length: int


def _arc_header(line: bytes) -> _ArcHeader | None:
    """An ARC record line: ``URL IP DATE CONTENT-TYPE LENGTH`` (v1), or the v2 line
    with result code, checksum, location, offset and file name before the length.
    Real files have URLs with spaces and content types with parameters, so the
    14-digit date anchors the parse."""
    text = line.rstrip(b"\r\n").decode("utf-8", errors="replace")
    tokens = text.split(" ")
    if len(tokens) < 4 or not tokens[-1].isdigit() or not _SCHEME.match(tokens[0]):
        return None
    for d in range(2, len(tokens) - 1):
        if _ARC_DATE.fullmatch(tokens[d]):
            rest = tokens[d + 1 : -1]
            content_type = rest[0] if len(rest) == 6 else " ".join(rest)
            return _ArcHeader(" ".join(tokens[: d - 1]), tokens[d], content_type, int(tokens[-1]))
    return None


def _record_start(line: bytes) -> str | None:
    """``warc``, ``arc`` or None: does this line open a record?"""
    if _WARC_LINE.fullmatch(line):
        return "warc"
    if line.endswith(b"\n") and _arc_header(line) is not None:
        return "arc"
    return None


@dataclass
class _Frame:
    """One record's bytes as framed in the file."""

    kind: str  # warc | arc
    offset: int
    header: bytes  # WARC: version line + header lines; ARC: the record line
    declared: int  # WARC Content-Length / ARC length
    block: bytes = b""
    too_large: bool = False
    truncated: bool = False
    lenient: bool = False  # WARC/0.x: the next version line ends the record
    overrun: bool = False  # its Content-Length ran into the next record
    headers: StatusAndHeaders | None = None  # WARC: the parsed record header


class _Framer:
    """Splits the logical stream into record frames; reports and skips damage."""

    def __init__(self, source: _Input, block_cap: int) -> None:
        self.src = source
        self.block_cap = block_cap

    def frames(self) -> Iterator[_Frame | RecordError]:
        src = self.src
        while True:
            try:
                line, start = self._next_nonblank()
                if not line:
                    return
                kind = _record_start(line)
                if kind is None:
                    go_on = yield from self._skip_garbage(start, line)
                    if not go_on:
                        return
                    continue
                frame = self._frame(kind, line, src.offset_of(start))
            except _Damaged as exc:
                if not (yield from self._recover(exc)):
                    return
                continue
            if isinstance(frame, RecordError):
                yield frame
                if frame.kind == "truncated":
                    return
                continue
            # What follows the block is looked at before the record is handed out: a
            # pre-standard record may run on. A damaged member after a complete record
            # is reported after it.
            damage = None
            try:
                self._check_end(frame)
            except _Damaged as exc:
                damage = exc
            yield frame
            if frame.truncated:
                return
            if damage is not None and not (yield from self._recover(damage)):
                return

    def _next_nonblank(self) -> tuple[bytes, int]:
        src = self.src
        while True:
            start = src.pos
            line = src.readline()
            if not line or line.strip():
                return line, start

    def _recover(self, damage: _Damaged) -> Generator[RecordError, None, bool]:
        """Report a damaged gzip member (or bytes between members) and go to the next
        member that starts a record. Returns whether reading goes on."""
        src = self.src
        resumed = src.skip_to_member(damage.offset + 1) if src.can_skip else None
        if damage.kind == "truncated" and resumed is None:
            yield RecordError("truncated", damage.offset, damage.why)
            return False
        if resumed is None:
            if src.can_skip:
                where = f"bytes {damage.offset}–{src.file_offset()} (to the end of the file)"
            else:
                where = f"from offset {damage.offset} (the input cannot seek to skip it)"
            yield RecordError(
                "corrupt", damage.offset, f"damaged region {where}: {damage.why}; nothing after it"
            )
            return False
        why = "a gzip member that never ends" if damage.kind == "truncated" else damage.why
        yield RecordError(
            "corrupt",
            damage.offset,
            f"damaged region bytes {damage.offset}–{resumed} ({resumed - damage.offset} "
            f"bytes): {why}; reading resumed at the next gzip member",
        )
        return True

    def _skip_garbage(self, start: int, first: bytes) -> Generator[RecordError, None, bool]:
        """Bytes that do not open a record: skip to the next line that does. Returns
        whether reading goes on."""
        src = self.src
        offset = src.offset_of(start)
        what = f"not a WARC or ARC record (starts {first[:40]!r})"
        src.unread(first)
        while True:
            at = src.pos
            try:
                line = src.readline()
            except _Damaged as exc:
                yield RecordError(
                    "corrupt",
                    offset,
                    f"damaged region from offset {offset}: {what}, up to the damaged gzip "
                    f"data at offset {exc.offset}",
                )
                if exc.offset == offset:
                    # Same place: one report is enough; still try to go on.
                    resumed = src.skip_to_member(exc.offset + 1) if src.can_skip else None
                    return resumed is not None
                return (yield from self._recover(exc))
            if not line:
                yield RecordError(
                    "corrupt",
                    offset,
                    f"damaged region from offset {offset} to the end: {what}; no record after it",
                )
                return False
            glued = _VERSION_AT_END.search(line)
            if glued is not None and glued.start() > 0:
                # A record line right after garbage with no line break between them.
                src.unread(line[glued.start() :])
                at = src.pos
                line = line[glued.start() :]
                src.readline()
            if _record_start(line) is not None:
                src.unread(line)
                yield RecordError(
                    "corrupt",
                    offset,
                    f"damaged region from offset {offset} to offset {src.offset_of(at)}: "
                    f"{what}; reading resumed at the next record",
                )
                return True

    def _frame(self, kind: str, first: bytes, offset: int) -> _Frame | RecordError:
        src = self.src
        if kind == "arc":
            arc = _arc_header(first)
            assert arc is not None
            return self._block(_Frame(kind, offset, first, arc.length))
        rest, state = src.read_header(_MAX_HEADER)
        if state == "cut":
            return RecordError(
                "truncated", offset, "file truncated: a record header is cut off by its end"
            )
        if state == "too_long":
            return RecordError(
                "bad_record", offset, f"WARC record header is over {_MAX_HEADER} bytes"
            )
        header = first + rest
        try:
            headers = _WARC_PARSER.parse(io.BytesIO(header))
        except Exception as exc:
            return RecordError("bad_record", offset, f"WARC header unreadable: {_short(exc)}")
        match = _WARC_LINE.fullmatch(first)
        lenient = match is not None and match.group(1) == b"0"
        length = (headers.get_header("Content-Length") or "").strip()
        if not length.isdigit():
            if not lenient:
                # The block cannot be found; what follows is skipped as damage.
                return RecordError(
                    "bad_record", offset, "WARC record header has no valid Content-Length"
                )
            length = "0"
        frame = _Frame(kind, offset, header, int(length), lenient=lenient, headers=headers)
        return self._block(frame)

    def _block(self, frame: _Frame) -> _Frame:
        src = self.src
        if frame.declared > self.block_cap:
            frame.too_large = True
            left = frame.declared
            while left:
                got = len(src.read(min(left, _SCAN_BLOCK)))
                if not got:
                    frame.truncated = True
                    break
                left -= got
            return frame
        frame.block = src.read(frame.declared)
        if frame.lenient:
            # Pre-standard files (ClueWeb09) carry Content-Lengths that do not match
            # their blocks: the record ends where the next one begins (a version line
            # the declared length cuts in two included).
            frame.block += src.readline()
            cut = _VERSION_INSIDE.search(frame.block)
            if cut is not None:
                src.unread(frame.block[cut.start() + 1 :])
                frame.block = frame.block[: cut.start() + 1]
        elif len(frame.block) < frame.declared:
            frame.truncated = True
        return frame

    def _check_end(self, frame: _Frame) -> None:
        """After a block come blank lines, then a record line or the end. A lenient
        record takes in whatever comes before the next record line."""
        if frame.truncated or frame.too_large:
            return
        src = self.src
        blanks = b""
        while True:
            line = src.readline()
            if not line:
                break
            if not line.strip():
                blanks += line
                continue
            if _record_start(line) is not None:
                src.unread(line)
                break
            if not frame.lenient:
                src.unread(line)
                self._cut_overrun(frame)
                break
            frame.block += blanks + line
            blanks = b""
            if len(frame.block) > self.block_cap:
                frame.too_large = True
                break
        if frame.lenient:
            frame.block = frame.block.rstrip(b"\r\n")

    def _cut_overrun(self, frame: _Frame) -> None:
        """No record line after the block: if the block holds the start of the next
        record, its Content-Length overstated it — the record ends there. (Otherwise
        what follows is damage, reported by the caller.)"""
        cut = _RECORD_INSIDE.search(frame.block)
        if cut is None:
            return
        self.src.unread(frame.block[cut.start() + 1 :])
        frame.block = frame.block[: cut.start() + 1].rstrip(b"\r\n")
        frame.overrun = True


def read_warc(stream: BinaryIO, *, max_body_bytes: int = MAX_BODY_BYTES) -> Iterator[Item]:
    """Yield one item per WARC or ARC record, and one error per damaged region; see
    the module docstring for the guarantees."""
    framer = _Framer(_Input(stream), max_body_bytes + _HEADER_ALLOWANCE)
    for frame in framer.frames():
        if isinstance(frame, RecordError):
            yield frame
        else:
            try:
                yield _frame_item(frame, max_body_bytes)
            except Exception as exc:  # a parser bug must cost one record, not the file
                yield RecordError(
                    "bad_record", frame.offset, f"{type(exc).__name__}: {_short(exc)}"
                )


def _frame_item(frame: _Frame, max_body_bytes: int) -> Item:
    offset = frame.offset
    if frame.kind == "arc":
        arc = _arc_header(frame.header)
        assert arc is not None
        url = arc.url.replace(" ", "%20")
        if url.startswith("filedesc://"):
            return Skipped("arc_header", offset, url)
        limit = f"ARC length is {frame.declared} bytes"
        rec_type, block_type, folded = "response", arc.content_type, []
        fetched_at, warning = _arc_date(arc.date)
    else:
        headers = frame.headers
        assert headers is not None
        url = (headers.get_header("WARC-Target-URI") or "").strip()
        if url.startswith("<") and url.endswith(">"):
            url = url[1:-1]
        url = url.replace(" ", "%20")
        limit = f"WARC Content-Length is {frame.declared} bytes"
        rec_type = (headers.get_header("WARC-Type") or "").strip().lower()
        block_type = (headers.get_header("Content-Type") or "").strip()
        folded = [
            (name, value)
            for name, value in headers.headers
            if not name.lower().startswith("warc-")
            and name.lower() not in ("content-length", "content-type")
        ]
        fetched_at, warning = _warc_date(headers.get_header("WARC-Date"))
    cut_short = None
    if frame.truncated and frame.kind == "arc" and _complete_http(frame.block):
        # An ARC length that overstates the last record (as warcio reads it): the page
        # in the bytes is whole, so it is kept, with the length's fault on the record.
        cut_short = RecordError(
            "bad_length",
            offset,
            f"{limit}, but the file ends after {len(frame.block)}: the HTTP response in "
            "them is complete, kept",
            url,
        )
    elif frame.truncated:
        return RecordError(
            "truncated",
            offset,
            f"record is truncated: {limit}, only {len(frame.block)} present (file cut)",
            url,
        )
    if not rec_type:
        return RecordError("bad_record", offset, "WARC record has no WARC-Type", url)
    if rec_type != "response":
        return Skipped(rec_type, offset, url)
    if not url.lower().startswith(("http://", "https://")):
        return Skipped("non_http", offset, url)
    if frame.too_large:
        return RecordError(
            "too_large", offset, f"record block is over the reader's limit ({limit})", url
        )
    item = _response(url, frame.block, block_type, folded, offset, max_body_bytes)
    if isinstance(item, RawRecord):
        warnings = [] if warning is None else [RecordError("bad_date", offset, warning, url)]
        if frame.overrun:
            message = (
                f"{limit}, but the next record starts inside it after {len(frame.block)} "
                "bytes: the record was cut there"
            )
            warnings.append(RecordError("bad_length", offset, message, url))
        if cut_short is not None:
            warnings.append(cut_short)
        item = dataclasses.replace(item, fetched_at=fetched_at, warnings=tuple(warnings))
    return item


_HTTP_END_OF_HEAD = re.compile(rb"\r?\n\r?\n")
_CONTENT_LENGTH = re.compile(rb"^content-length:[ \t]*([0-9]{1,18})[ \t]*\r?$", re.I | re.M)
_HTML_END = re.compile(rb"</html\s*>\s*$", re.I)


def _complete_http(block: bytes) -> bool:
    """Does this (cut) block hold a whole HTTP response: a status line and headers, and
    a body as long as its Content-Length says or, without one, an HTML page that ends?"""
    if not block.startswith(b"HTTP/"):
        return False
    head_end = _HTTP_END_OF_HEAD.search(block)
    if head_end is None:
        return False
    head, body = block[: head_end.start()], block[head_end.end() :]
    declared = _CONTENT_LENGTH.search(head)
    if declared is not None:
        return len(body) >= int(declared.group(1))
    return _HTML_END.search(body) is not None


def _response(
    url: str,
    block: bytes,
    block_type: str,
    folded: list[tuple[str, str]],
    offset: int,
    max_body_bytes: int,
) -> RawRecord | RecordError:
    data = block.lstrip(b"\r\n")
    if data[:5].upper() == b"HTTP/":
        stream = io.BytesIO(data)
        try:
            http = _HTTP_PARSER.parse(stream)
        except Exception as exc:
            return RecordError("bad_record", offset, f"HTTP headers unreadable: {_short(exc)}", url)
        status_text = (http.get_statuscode() or "").strip()
    elif block_type.lower().startswith("application/http"):
        return RecordError(
            "no_http_headers",
            offset,
            f"the record says its block is {block_type!r} but the block does not start "
            f"with an HTTP status line (it starts {data[:24]!r})",
            url,
        )
    elif not block_type:
        return RecordError(
            "no_http_headers",
            offset,
            "response record has no HTTP headers and no Content-Type: nothing says what "
            "its block is",
            url,
        )
    else:
        # Wayback style: the HTTP headers were folded into the record header and the
        # block is the payload itself.
        stream = io.BytesIO(block)
        http = StatusAndHeaders("", [("Content-Type", block_type), *folded], protocol="")
        status_text = next(
            (v.strip()[:3] for k, v in folded if k.strip().lower() in _FOLDED_STATUS), ""
        )
    encoding = (http.get_header("Content-Encoding") or "").strip().lower()
    if encoding not in ("", "identity") and encoding not in _DECODERS:
        return RecordError(
            "bad_record", offset, f"Content-Encoding {encoding!r} cannot be decoded", url
        )
    record = ArcWarcRecord("warc", "response", None, stream, http, None, len(block))
    try:
        body, too_big = _read_capped(record.content_stream(), max_body_bytes)
    except Exception as exc:
        return RecordError("bad_record", offset, f"payload cannot be decoded: {_short(exc)}", url)
    if too_big:
        return RecordError(
            "too_large", offset, f"body is over {max_body_bytes} bytes, the reader's limit", url
        )
    return RawRecord(
        url=url,
        body=body,
        http_status=int(status_text) if _STATUS_RE.fullmatch(status_text) else None,
        headers=_http_headers_dict(list(http.headers)),
        fetched_at=None,
        offset=offset,
    )


def _warc_date(value: str | None) -> tuple[datetime | None, str | None]:
    """WARC-Date → (date, None), or (None, why the ingest time is used instead)."""
    if not value:
        return None, "the record has no WARC-Date; the ingest time was used as its fetch time"
    try:
        parsed = parse_datetime(value)
    except ValueError:
        return None, (
            f"WARC-Date {value[:60]!r} is not a valid date; the ingest time was used as "
            "its fetch time"
        )
    problem = fetched_at_problem(parsed)
    if problem is not None:
        return None, f"WARC-Date {value[:60]!r} {problem}; the ingest time was used"
    return parsed, None


def _arc_date(value: str) -> tuple[datetime | None, str | None]:
    try:
        parsed = datetime.strptime(value[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None, (
            f"ARC date {value[:20]!r} is not a valid date; the ingest time was used as "
            "its fetch time"
        )
    problem = fetched_at_problem(parsed)
    if problem is not None:
        return None, f"ARC date {value[:20]!r} {problem}; the ingest time was used"
    return parsed, None


def read_jsonl(stream: BinaryIO, *, max_line_bytes: int = MAX_BODY_BYTES) -> Iterator[Item]:
    """Yield one item per non-blank line; offsets are 1-based line numbers."""
    line_no = 0
    while True:
        try:
            line = stream.readline(max_line_bytes + 1)
        except (EOFError, OSError, zlib.error) as exc:
            # A compressed file that is cut or corrupt: the lines before it are kept.
            kind = "truncated" if isinstance(exc, EOFError) else "corrupt"
            yield RecordError(
                kind, line_no + 1, f"the file cannot be read after line {line_no}: {_short(exc)}"
            )
            return
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
        except ValueError as exc:
            if "out of range" in str(exc):
                return bad("fetched_at", f"has no UTC equivalent: {raw_date[:60]!r}")
            return bad("fetched_at", f"is not an ISO 8601 date-time: {raw_date[:60]!r}")
        problem = fetched_at_problem(fetched_at)
        if problem is not None:
            return bad("fetched_at", f"{problem}: {raw_date[:60]!r}")

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
    if doc_type is not None and (not isinstance(doc_type, str) or doc_type not in DOC_TYPES):
        return bad("doc_type", f"must be one of {', '.join(sorted(DOC_TYPES))}, got {doc_type!r}")

    # A lone surrogate (legal in JSON, not in UTF-8) becomes "?" rather than failing,
    # and the record says so.
    warnings: tuple[RecordError, ...] = ()
    try:
        body = obj["html"].encode("utf-8")
    except UnicodeEncodeError:
        body = obj["html"].encode("utf-8", errors="replace")
        message = f"field 'html' {text_problem(obj['html'])}; stored with '?' in its place"
        warnings = (RecordError("bad_html", offset, message, url),)
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
        warnings=warnings,
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
