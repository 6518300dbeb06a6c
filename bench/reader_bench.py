"""WARC reader: how many records each reader gets from the broken-archive corpus, and
reading speed on a clean gzipped WARC against warcio's own iterator (and FastWARC when
it is installed, e.g. in a scratch venv: it is not a dependency).

    .venv/bin/python bench/reader_bench.py [--pages 3000] [--repeat 5]

Run from the repository root. No database needed.
"""

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warcio.archiveiterator import ArchiveIterator  # noqa: E402

from ingest.core.readers import RawRecord, read_warc  # noqa: E402
from tests import broken_archives  # noqa: E402

try:
    from fastwarc.warc import ArchiveIterator as FastIterator  # type: ignore[import-not-found]
    from fastwarc.warc import WarcRecordType  # type: ignore[import-not-found]
except ImportError:
    FastIterator = None


def ours(data: bytes) -> int:
    return sum(isinstance(item, RawRecord) for item in read_warc(io.BytesIO(data)))


def warcio_plain(data: bytes, **options: bool) -> int:
    """Responses with HTTP headers that warcio's iterator yields before it stops."""
    count = 0
    try:
        for record in ArchiveIterator(io.BytesIO(data), **options):
            protocol = (record.http_headers.protocol if record.http_headers else "") or ""
            if record.rec_type == "response" and protocol.upper().startswith("HTTP/"):
                record.content_stream().read()
                count += 1
    except Exception:
        pass
    return count


def fastwarc(data: bytes) -> int:
    count = 0
    try:
        for record in FastIterator(
            io.BytesIO(data), record_types=WarcRecordType.response, strict_mode=False
        ):
            if record.http_headers is not None:
                record.reader.read()
                count += 1
    except Exception:
        pass
    return count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    readers: dict[str, Callable[[bytes], int]] = {
        "ours": ours,
        "warcio": warcio_plain,
        "warcio arc2warc+ensure_http_headers": lambda d: warcio_plain(
            d, arc2warc=True, ensure_http_headers=True
        ),
    }
    if FastIterator is not None:
        readers["fastwarc (strict_mode=False)"] = fastwarc

    print("good records read from the broken-archive corpus (expected in brackets):")
    for archive in broken_archives.corpus():
        if "jsonl" in archive.name or archive.name.startswith("bad-"):
            continue  # JSONL, and records refused at the storage boundary, not the reader
        counts = ", ".join(f"{name} {read(archive.data)}" for name, read in readers.items())
        print(f"  {archive.name} [{len(archive.good_urls)}]: {counts}")

    clean = b"".join(
        broken_archives.warc_record(f"https://bench.example.com/{i}", broken_archives.page(i))
        for i in range(args.pages)
    )
    print(
        f"\nclean gzipped WARC, {args.pages} pages, {len(clean) / 1e6:.1f} MB, median of "
        f"{args.repeat} runs:"
    )
    times: dict[str, list[float]] = {name: [] for name in readers}
    got: dict[str, int] = {}
    for _ in range(args.repeat):  # interleaved, so load changes hit every reader alike
        for name, read in readers.items():
            start = time.perf_counter()
            got[name] = read(clean)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["ours"])
    for name in readers:
        median = statistics.median(times[name])
        print(
            f"  {name}: {median * 1000:.0f} ms, {got[name] / median:,.0f} records/s "
            f"({median / base:.2f}× ours)"
        )


if __name__ == "__main__":
    main()
