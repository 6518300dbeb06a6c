"""The desk's own archive of raw bytes: WARC files, one gzip member per record, written
once by one process and never rewritten (rule 1: nothing crawled is destroyed).

- A record is a WARC/1.1 ``resource`` record whose block is the body exactly as stored
  (its SHA-256 is the document's ``raw_sha256``): the HTTP status and headers live in the
  document's row, and JSONL or API input has no HTTP header block to keep.
- Each record is its own gzip member, so (offset, length) in the file is one complete
  ``.warc.gz`` on its own, and the whole file is a valid ``.warc.gz`` for other tools.
- One writer, one file: a file is created exclusively (``O_EXCL``) under a name holding the
  host, the process id, the time and a random part, and only the process that created it
  ever writes it. A file is sealed at ``max_bytes``: closed, made read-only, its size and
  SHA-256 recorded; it is never opened for writing again.
- A record is pointed to only after its bytes are flushed and fsynced (``append`` returns
  the pointers then). A record half-written when a process is killed stays in the file,
  after the last pointed-to record, and nothing points to it.
- Reading a record verifies the payload's SHA-256: a missing file, a short or unreadable
  record and a changed byte are each a named error, never wrong bytes.
"""

import base64
import hashlib
import io
import os
import re
import secrets
import socket
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from warcio.warcwriter import WARCWriter

SUFFIX = ".warc.gz"
# zlib level of each record's gzip member. Level 1 against warcio's own 9: on 200 real
# pages of the extraction benchmark (179 KB mean) 23.6% of the bytes in 1.9 CPU-ms a
# page, against 19.8% in 6.2 ms (level 6: 19.9%, 4.3 ms); archive bytes cost less than
# the cores extraction needs (docs/archive.md).
GZIP_LEVEL = 1
_READ_CHUNK = 1024 * 1024


class ArchiveError(Exception):
    """A body's archive record could not be read back as stored. ``path`` is the
    archive file (relative to the archive directory when the caller knows it)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class ArchiveFileMissing(ArchiveError):
    pass


class ArchiveRecordCorrupt(ArchiveError):
    """The bytes at (offset, length) are not one whole WARC record."""


class ArchiveDigestMismatch(ArchiveError):
    pass


@dataclass(frozen=True)
class Entry:
    """One body to archive: the bytes and what the record says of them."""

    uri: str
    payload: bytes
    sha256: str  # hex SHA-256 of payload, as the document stores it
    fetched_at: datetime | None = None
    content_type: str = ""


@dataclass(frozen=True)
class Pointer:
    path: str  # relative to the archive directory
    offset: int
    length: int


@dataclass(frozen=True)
class Sealed:
    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Appended:
    """What one `ArchiveWriter.append` did: the pointers (in the entries' order), the
    files it created and the files it sealed on the way."""

    pointers: list[Pointer]
    opened: list[str] = field(default_factory=list)
    sealed: list[Sealed] = field(default_factory=list)


# --- one record --------------------------------------------------------------------------


def _warc_digest(sha256_hex: str) -> str:
    return "sha256:" + base64.b32encode(bytes.fromhex(sha256_hex)).decode("ascii")


def _warc_date(when: datetime | None) -> str:
    when = (when or datetime.now(UTC)).astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_CONTROL = re.compile(r"[\x00-\x20\x7f]")


def _header_safe(value: str, *, percent: bool) -> str:
    """A header value on one line: control characters (a newline would end the header)
    and, in a URI, spaces percent-encoded; elsewhere made spaces."""
    if percent:
        return _CONTROL.sub(lambda m: f"%{ord(m.group()):02X}", value)
    return " ".join(_CONTROL.sub(" ", value).split())


def record_bytes(entry: Entry) -> bytes:
    """The entry as one gzip member holding one WARC ``resource`` record."""
    digest = _warc_digest(entry.sha256)
    headers = {
        "WARC-Date": _warc_date(entry.fetched_at),
        "WARC-Block-Digest": digest,
        "WARC-Payload-Digest": digest,
    }
    plain = io.BytesIO()
    writer = WARCWriter(plain, gzip=False, warc_version="1.1")
    record = writer.create_warc_record(
        _header_safe(entry.uri, percent=True) or "urn:dedup-desk:no-url",
        "resource",
        payload=io.BytesIO(entry.payload),
        length=len(entry.payload),
        warc_content_type=_header_safe(entry.content_type, percent=False)
        or "application/octet-stream",
        warc_headers_dict=headers,
    )
    writer.write_record(record)
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return packer.compress(plain.getvalue()) + packer.flush()


def record_write(out: BinaryIO, entry: Entry) -> tuple[int, int]:
    """Write the entry at the end of ``out``; its (offset, length). Not yet durable: the
    caller flushes and fsyncs before anything points to it."""
    data = record_bytes(entry)
    offset = out.seek(0, io.SEEK_END)
    out.write(data)
    return offset, len(data)


def record_parse(data: bytes, *, path: str, sha256: str) -> bytes:
    """The payload of the one record ``data`` holds (a gzip member), verified. Parsed
    here rather than by warcio's reader, which reads a member in small blocks: 0.70
    against 0.82 CPU-ms a page on 200 real pages (179 KB mean; inflating alone 0.47).
    The files stay what warcio and other WARC tools read (the tests read them so)."""
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        plain = inflater.decompress(data)
        if not inflater.eof or inflater.unused_data:
            raise ValueError("not one whole gzip member")
        head, sep, block = plain.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        if not sep or not lines[0].startswith(b"WARC/"):
            raise ValueError("not a WARC record")
        fields = dict(line.partition(b":")[::2] for line in lines[1:])
        length = int(fields[b"Content-Length"])
        if len(block) != length + 4 or block[length:] != b"\r\n\r\n":
            raise ValueError("the block's length differs from Content-Length")
    except (KeyError, ValueError, zlib.error) as exc:
        raise ArchiveRecordCorrupt(
            path, f"archive file {path}: the record is unreadable ({exc})"
        ) from exc
    payload = block[:length]
    if hashlib.sha256(payload).hexdigest() != sha256:
        raise ArchiveDigestMismatch(
            path, f"archive file {path}: the record's digest does not match (file changed)"
        )
    return payload


def record_read(root: Path, pointer: Pointer, *, sha256: str) -> bytes:
    """The payload at ``pointer`` under ``root``, verified against ``sha256``."""
    try:
        with open(root / pointer.path, "rb") as f:
            f.seek(pointer.offset)
            data = f.read(pointer.length)
    except FileNotFoundError as exc:
        raise ArchiveFileMissing(pointer.path, f"archive file {pointer.path} is missing") from exc
    except OSError as exc:
        raise ArchiveRecordCorrupt(
            pointer.path, f"archive file {pointer.path} cannot be read: {exc.strerror}"
        ) from exc
    if len(data) != pointer.length:
        raise ArchiveRecordCorrupt(
            pointer.path,
            f"archive file {pointer.path} is shorter than recorded (truncated or replaced)",
        )
    return record_parse(data, path=pointer.path, sha256=sha256)


def file_digest(path: Path) -> tuple[int, str]:
    """(size, hex SHA-256) of a whole file."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(_READ_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


# --- writers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class WriterId:
    """A process, told apart from a later one with the same pid by its start time (clock
    ticks since boot, from /proc; 0 where there is no /proc)."""

    host: str
    pid: int
    started: int

    @staticmethod
    def current() -> "WriterId":
        pid = os.getpid()
        return WriterId(host=socket.gethostname(), pid=pid, started=_process_started(pid))

    def alive(self) -> bool:
        """Whether this process still runs. Only a process of this host can be asked:
        another host's writer counts as alive (never seal another machine's file)."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # it exists, under another user
        started = _process_started(self.pid)
        return started == self.started or not started or not self.started


def _process_started(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    # Field 22 (starttime), counted after the command name's closing parenthesis.
    return int(stat.rpartition(")")[2].split()[19])


def file_name(writer: WriterId, now: datetime | None = None) -> str:
    """A new file's path relative to the archive directory: one folder a month (to move
    or back up whole), the time, host, pid and a random part (no two processes, even on
    hosts of the same name, ever choose the same name; creation is exclusive anyway)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    host = "".join(c if c.isalnum() or c in "-_" else "_" for c in writer.host)[:64] or "host"
    return (
        f"{now:%Y-%m}/desk-{now:%Y%m%dT%H%M%S}-{host}-{writer.pid}-{secrets.token_hex(4)}{SUFFIX}"
    )


def file_seal(root: Path, path: str) -> Sealed:
    """Seal a file nobody writes any more (a writer killed with it open): read-only, its
    size and digest as they are (a record half-written at the kill stays, unpointed)."""
    full = root / path
    full.chmod(0o444)
    size, sha = file_digest(full)
    return Sealed(path=path, size=size, sha256=sha)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ArchiveWriter:
    """This process's open archive file under ``root``, rotated at ``max_bytes``.

    Not shared across ``fork``: a writer used in another process than the one that made
    it forgets its file (the parent keeps writing it) and opens its own."""

    def __init__(self, root: Path, max_bytes: int, writer: WriterId | None = None) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.writer = writer or WriterId.current()
        self.path: str | None = None
        self._file: BinaryIO | None = None
        self._digest = hashlib.sha256()
        self._size = 0

    def append(self, entries: Sequence[Entry]) -> Appended:
        """Write the entries, then flush and fsync: the pointers returned are durable."""
        if self.writer.pid != os.getpid():
            self._file = None  # inherited across fork: the parent's file, not ours
            self.path = None
            self.writer = WriterId.current()
        result = Appended(pointers=[])
        for entry in entries:
            if self._file is not None and self._size >= self.max_bytes:
                result.sealed.append(self._seal())
            if self._file is None:
                result.opened.append(self._open())
            assert self._file is not None and self.path is not None
            data = record_bytes(entry)
            self._file.write(data)
            self._digest.update(data)
            result.pointers.append(Pointer(self.path, self._size, len(data)))
            self._size += len(data)
        if self._file is not None and entries:
            self._file.flush()
            os.fsync(self._file.fileno())
        return result

    def seal(self) -> Sealed | None:
        """Seal the open file now (a command at its end); None when none is open."""
        if self._file is None or self.writer.pid != os.getpid():
            return None
        return self._seal()

    def close_unsealed(self) -> None:
        """Stop writing without sealing (the file stays open for a sweep to seal)."""
        if self._file is not None and self.writer.pid == os.getpid():
            self._file.close()
        self._file = None
        self.path = None

    def _open(self) -> str:
        path = file_name(self.writer)
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        self._file = os.fdopen(fd, "wb")
        _fsync_dir(full.parent)  # the name survives a crash with the records
        self.path = path
        self._digest = hashlib.sha256()
        self._size = 0
        return path

    def _seal(self) -> Sealed:
        assert self._file is not None and self.path is not None
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        (self.root / self.path).chmod(0o444)
        sealed = Sealed(path=self.path, size=self._size, sha256=self._digest.hexdigest())
        self._file = None
        self.path = None
        return sealed
