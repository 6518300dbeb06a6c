"""The desk's own archive files: every record reads back verified, files rotate and are
sealed once, a changed or missing file is a named error."""

import gzip
import hashlib
import io
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from ingest.core import warc_archive as wa


def _entry(payload: bytes, uri: str = "https://example.com/a") -> wa.Entry:
    return wa.Entry(
        uri=uri,
        payload=payload,
        sha256=hashlib.sha256(payload).hexdigest(),
        fetched_at=datetime(2026, 5, 1, 12, 0, tzinfo=UTC),
        content_type="text/html; charset=utf-8",
    )


def test_a_record_reads_back_from_its_pointer(tmp_path: Path) -> None:
    writer = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    entry = _entry(b"<html><p>One page.</p></html>")
    appended = writer.append([entry])
    [pointer] = appended.pointers
    assert appended.opened == [pointer.path]
    assert wa.record_read(tmp_path, pointer, sha256=entry.sha256) == entry.payload


def test_records_of_a_multi_record_file_sit_at_their_offsets(tmp_path: Path) -> None:
    writer = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    entries = [
        _entry(f"<p>page {i}</p>".encode() * (i + 1), f"https://e.com/{i}") for i in range(5)
    ]
    pointers = writer.append(entries[:2]).pointers + writer.append(entries[2:]).pointers
    assert len({p.path for p in pointers}) == 1
    assert pointers[0].offset == 0
    for before, after in zip(pointers, pointers[1:], strict=False):
        assert after.offset == before.offset + before.length
    data = (tmp_path / pointers[0].path).read_bytes()
    assert len(data) == pointers[-1].offset + pointers[-1].length
    for entry, pointer in zip(entries, pointers, strict=True):
        # Each (offset, length) is one whole gzip member: a .warc.gz of its own.
        member = data[pointer.offset : pointer.offset + pointer.length]
        assert entry.payload in gzip.decompress(member)
        assert wa.record_read(tmp_path, pointer, sha256=entry.sha256) == entry.payload


def test_the_whole_file_is_a_warc_other_tools_read(tmp_path: Path) -> None:
    writer = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    entries = [_entry(b"first"), _entry(b"second", "https://example.com/b")]
    pointers = writer.append(entries).pointers
    with open(tmp_path / pointers[0].path, "rb") as f:
        records = list(
            (r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
            for r in ArchiveIterator(f)
        )
    assert records == [
        ("resource", "https://example.com/a", b"first"),
        ("resource", "https://example.com/b", b"second"),
    ]


def test_a_changed_byte_is_detected(tmp_path: Path) -> None:
    writer = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    entry = _entry(b"<p>" + b"stable text " * 200 + b"</p>")
    [pointer] = writer.append([entry]).pointers
    path = tmp_path / pointer.path
    # The same record with one payload byte changed, recompressed: a whole valid gzip
    # member and WARC record, only the digest check can tell.
    changed = gzip.decompress(path.read_bytes()).replace(b"stable text", b"stable tExt", 1)
    path.chmod(0o644)
    path.write_bytes(gzip.compress(changed))
    tampered = wa.Pointer(pointer.path, 0, path.stat().st_size)
    with pytest.raises(wa.ArchiveDigestMismatch, match="digest does not match"):
        wa.record_read(tmp_path, tampered, sha256=entry.sha256)


def test_a_flipped_byte_of_the_compressed_record_is_an_error_not_wrong_bytes(
    tmp_path: Path,
) -> None:
    writer = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    entry = _entry(b"<p>" + b"some words " * 300 + b"</p>")
    [pointer] = writer.append([entry]).pointers
    path = tmp_path / pointer.path
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[pointer.length // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(wa.ArchiveError):
        wa.record_read(tmp_path, pointer, sha256=entry.sha256)


def test_a_missing_or_short_file_is_a_named_error(tmp_path: Path) -> None:
    writer = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    entry = _entry(b"page")
    [pointer] = writer.append([entry]).pointers
    writer.seal()
    path = tmp_path / pointer.path
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(wa.ArchiveRecordCorrupt, match="shorter than recorded"):
        wa.record_read(tmp_path, pointer, sha256=entry.sha256)
    path.unlink()
    with pytest.raises(wa.ArchiveFileMissing, match=f"archive file {pointer.path} is missing"):
        wa.record_read(tmp_path, pointer, sha256=entry.sha256)


def test_a_file_is_sealed_at_the_cap_and_never_written_again(tmp_path: Path) -> None:
    entries = [_entry(os.urandom(200), f"https://e.com/{i}") for i in range(3)]
    one = len(wa.record_bytes(entries[0]))
    writer = wa.ArchiveWriter(tmp_path, max_bytes=one + one // 2)
    first = writer.append(entries[:2])
    second = writer.append(entries[2:])
    # The second record took the file over the cap: it was sealed before the third.
    assert first.pointers[0].path == first.pointers[1].path
    assert first.sealed == []
    assert [s.path for s in second.sealed] == [first.pointers[0].path]
    sealed = second.sealed[0]
    assert (sealed.size, sealed.sha256) == wa.file_digest(tmp_path / sealed.path)
    assert not (tmp_path / sealed.path).stat().st_mode & stat.S_IWUSR
    assert second.opened == [second.pointers[0].path]
    assert second.pointers[0].path != sealed.path
    for entry, pointer in zip(entries, first.pointers + second.pointers, strict=True):
        assert wa.record_read(tmp_path, pointer, sha256=entry.sha256) == entry.payload


def test_every_writer_has_its_own_file(tmp_path: Path) -> None:
    a = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    b = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    pa = a.append([_entry(b"a")]).pointers[0]
    pb = b.append([_entry(b"b")]).pointers[0]
    assert pa.path != pb.path
    name = Path(pa.path).name
    assert name.endswith(wa.SUFFIX) and str(os.getpid()) in name


def test_a_file_left_open_is_sealed_as_it_is_with_a_half_written_record(tmp_path: Path) -> None:
    writer = wa.ArchiveWriter(tmp_path, max_bytes=1 << 20)
    entry = _entry(b"kept")
    [pointer] = writer.append([entry]).pointers
    # A record cut short by a kill: bytes after the last pointed-to record.
    with open(tmp_path / pointer.path, "ab") as f:
        f.write(wa.record_bytes(_entry(b"lost" * 100))[:20])
    writer.close_unsealed()
    sealed = wa.file_seal(tmp_path, pointer.path)
    assert sealed.size == pointer.length + 20
    assert wa.record_read(tmp_path, pointer, sha256=entry.sha256) == b"kept"


def test_a_dead_process_is_told_from_a_live_one() -> None:
    me = wa.WriterId.current()
    assert me.alive()
    assert not wa.WriterId(me.host, 2**22 + 12345, 1).alive()
    # Same pid, another start: a later process reusing the pid.
    if me.started:
        assert not wa.WriterId(me.host, me.pid, me.started + 1).alive()
    # Another host's writer is never judged from here.
    assert wa.WriterId("another-host.invalid", 2**22 + 12345, 1).alive()


def test_a_blank_line_in_the_url_or_content_type_does_not_end_the_header() -> None:
    entry = wa.Entry(
        uri="https://example.com/a\r\n\r\nb c",
        payload=b"body",
        sha256=hashlib.sha256(b"body").hexdigest(),
        content_type="text/html\r\n\r\nX-Evil: 1",
    )
    data = wa.record_bytes(entry)
    assert wa.record_parse(data, path="p", sha256=entry.sha256) == b"body"
    [record] = ArchiveIterator(io.BytesIO(data))
    assert record.rec_headers.get_header("WARC-Target-URI") == (
        "https://example.com/a%0D%0A%0D%0Ab%20c"
    )
    assert record.rec_headers.get_header("Content-Type") == "text/html X-Evil: 1"


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    payload=st.binary(max_size=50_000),
    uri=st.text(max_size=80),
    content_type=st.text(max_size=40),
)
def test_any_payload_round_trips(
    tmp_path: Path, payload: bytes, uri: str, content_type: str
) -> None:
    # Any URL and content type too: a newline in one must not break the record.
    entry = wa.Entry(
        uri=uri,
        payload=payload,
        sha256=hashlib.sha256(payload).hexdigest(),
        content_type=content_type,
    )
    out = io.BytesIO(b"x" * 7)
    offset, length = wa.record_write(out, entry)
    assert offset == 7 and len(out.getvalue()) == 7 + length
    record = out.getvalue()[offset : offset + length]
    assert wa.record_parse(record, path="p", sha256=entry.sha256) == payload
