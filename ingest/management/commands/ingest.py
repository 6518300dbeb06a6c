import gzip
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, cast

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dedup_site.task_policy import TRANSIENT_DB_ERRORS
from ingest import body_store, bulk, services
from ingest.core.readers import Item, read_jsonl, read_warc


class CountingReader:
    """Wraps a binary file to tell how far reading has got (for the progress bar). It
    can seek, so the WARC reader can skip a damaged gzip member."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw

    @property
    def count(self) -> int:
        return self.raw.tell()

    def read(self, size: int = -1) -> bytes:
        return self.raw.read(size)

    def readline(self, size: int = -1) -> bytes:
        return self.raw.readline(size)

    def seekable(self) -> bool:
        return self.raw.seekable()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line


def guess_format(path: Path) -> str:
    name = path.name.lower()
    if name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz")):
        return "warc"
    if name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")):
        return "jsonl"
    raise CommandError(f"{path}: cannot tell the format from the name; pass --format")


def jsonl_stream(stream: CountingReader) -> BinaryIO:
    """The JSONL text as bytes: gzip (by its magic bytes, whatever the name) is
    decompressed as it is read."""
    head = stream.read(2)
    stream.seek(0)
    if head == b"\x1f\x8b":
        return cast(BinaryIO, gzip.GzipFile(fileobj=stream, mode="rb"))
    return cast(BinaryIO, stream)


def records(stream: CountingReader, fmt: str) -> Iterator[Item]:
    """The file's records, read by its format (warc or jsonl)."""
    if fmt == "warc":
        return read_warc(cast(BinaryIO, stream))
    return read_jsonl(jsonl_stream(stream))


def exit_code(summary: services.IngestSummary) -> int:
    """1 when the file was cut short or damaged (its good records are stored), else 0."""
    return 1 if summary.errors.get("truncated") or summary.errors.get("corrupt") else 0


class Command(BaseCommand):
    help = "Ingest crawl files (WARC or JSONL), streaming; extraction runs on the workers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--format", choices=["warc", "jsonl"], default=None)
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument(
            "--bulk",
            action="store_true",
            help="load a large archive in this process tree: large chunks, extraction and "
            "fingerprints in --jobs worker processes, candidates searched in large batches; "
            "no Celery task per chunk (docs/ingest.md)",
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=os.cpu_count() or 1,
            help="--bulk: worker processes for extraction and fingerprints (default: the "
            "core count; 1 runs them in this process)",
        )
        parser.add_argument(
            "--chunk", type=int, default=1000, help="--bulk: records stored per transaction"
        )
        parser.add_argument(
            "--search-batch",
            type=int,
            default=2000,
            help="--bulk: documents searched for candidates (and grouped) at a time",
        )

    def handle(self, *args: object, **options: object) -> None:
        paths: list[Path] = options["paths"]  # type: ignore[assignment]
        for path in paths:
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
        show = not options["no_progress"] and sys.stderr.isatty()
        failed = 0
        try:
            for path in paths:
                fmt = str(options["format"] or guess_format(path))
                try:
                    if options["bulk"]:
                        failed += self._bulk_one(path, fmt, show_progress=show, options=options)
                    else:
                        failed += self._ingest_one(path, fmt, show_progress=show)
                except TRANSIENT_DB_ERRORS as exc:
                    first = (str(exc).splitlines() or [""])[0]
                    raise CommandError(
                        f"{path}: the database is unavailable ({type(exc).__name__}: {first}); "
                        f"gave up after {settings.INGEST_DB_RETRY_SECONDS}s of retries. The "
                        "chunks stored before stay stored and the batch is marked failed: run "
                        "the command again when the database is back (what is stored is not "
                        "stored twice)"
                    ) from None
        finally:
            self._archive_seal()
        if failed:
            raise CommandError(
                f"{failed} file(s) are damaged (cut short or with unreadable regions); "
                "every readable record was stored and the batch errors say where"
            )

    def _archive_seal(self) -> None:
        """Seal the archive file this run wrote (no later run writes it); when the
        database cannot record the seal now, the next writer of this host or
        `manage.py archive_seal` does."""
        try:
            body_store.archive_seal_own()
        except TRANSIENT_DB_ERRORS as exc:
            self.stderr.write(f"the archive file was not sealed ({type(exc).__name__})")

    def _ingest_one(self, path: Path, fmt: str, *, show_progress: bool) -> int:
        total = path.stat().st_size
        started = time.monotonic()
        with path.open("rb") as raw:
            stream = CountingReader(raw)
            items = records(stream, fmt)

            def progress(summary: services.IngestSummary) -> None:
                if not show_progress:
                    return
                done = stream.count / total if total else 1.0
                bar = "#" * int(done * 30)
                sys.stderr.write(
                    f"\r{path.name}: [{bar:<30}] {done:6.1%} read {summary.read} "
                    f"stored {summary.stored}"
                )
                sys.stderr.flush()

            summary = services.batch_ingest(
                source=str(path),
                fmt=fmt,
                items=items,
                bytes_total=total,
                bytes_read=lambda: stream.count,
                progress=progress,
            )
        if show_progress:
            sys.stderr.write("\n")
        elapsed = time.monotonic() - started
        self.stdout.write(self._summary_text(path, summary, elapsed))
        return exit_code(summary)

    def _bulk_one(
        self, path: Path, fmt: str, *, show_progress: bool, options: dict[str, object]
    ) -> int:
        total = path.stat().st_size
        started = time.monotonic()
        cpu_before = os.times()
        with path.open("rb") as raw:
            stream = CountingReader(raw)
            items = records(stream, fmt)
            last_line = 0.0

            def progress(summary: bulk.BulkSummary) -> None:
                nonlocal last_line
                now = time.monotonic()
                if not show_progress or now - last_line < 1.0:
                    return
                last_line = now
                s = summary.ingest
                done = stream.count / total if total else 1.0
                elapsed = max(now - started, 1e-9)
                sys.stderr.write(
                    f"\r{path.name}: {done:6.1%} read {s.read if s else 0} stored "
                    f"{s.stored if s else 0} processed {summary.processed} searched "
                    f"{summary.searched} ({summary.processed / elapsed:.0f} pages/s)   "
                )
                sys.stderr.flush()

            summary = bulk.bulk_ingest(
                source=str(path),
                fmt=fmt,
                items=items,
                jobs=int(cast(int, options["jobs"])),
                chunk_size=max(1, int(cast(int, options["chunk"]))),
                search_batch=max(1, int(cast(int, options["search_batch"]))),
                bytes_total=total,
                bytes_read=lambda: stream.count,
                progress=progress,
            )
        if show_progress:
            sys.stderr.write("\n")
        elapsed = time.monotonic() - started
        cpu_after = os.times()
        # The parent and its (joined) worker processes; the database server's CPU is not
        # in it (bench/ingest_bench.py --bulk counts that too).
        parent = sum(getattr(cpu_after, f) - getattr(cpu_before, f) for f in ("user", "system"))
        children = sum(
            getattr(cpu_after, f) - getattr(cpu_before, f)
            for f in ("children_user", "children_system")
        )
        cpu = parent + children
        assert summary.ingest is not None
        s = summary.ingest
        lines = [self._summary_text(path, s, elapsed)]
        pages = summary.processed
        rate = pages / elapsed if elapsed else 0.0
        lines.append(
            f"  bulk: processed {pages}, searched {summary.searched} in "
            f"{summary.searches} batches, {summary.pairs_created} new pairs"
            + (f", resumed {summary.resumed} of a stopped run" if summary.resumed else "")
            + (f", unreadable bodies {summary.unreadable}" if summary.unreadable else "")
        )
        lines.append(
            f"  throughput: {rate:.1f} pages/s, {cpu:.1f} CPU-s "
            f"({1e3 * cpu / pages if pages else 0.0:.1f} CPU-ms per page: this process and "
            f"its {options['jobs']} workers), load average {os.getloadavg()[0]:.2f}"
        )
        lines.append(
            f"  CPU: this process {parent:.1f}s (of which writing extractions and "
            f"fingerprints {summary.write_cpu_s:.1f}s, {summary.write_s:.1f}s wall; searching "
            f"{summary.search_cpu_s:.1f}s, {summary.search_s:.1f}s wall), workers "
            f"{children:.1f}s (of which timed on pages {summary.worker_cpu_s:.1f}s)"
        )
        self.stdout.write("\n".join(lines))
        return exit_code(s)

    @staticmethod
    def _summary_text(path: Path, s: services.IngestSummary, elapsed: float) -> str:
        lines = [
            f"{path}: batch {s.batch_id} in {elapsed:.1f}s",
            f"  read {s.read}, stored {s.stored}, already stored {s.already_stored}, "
            f"exact duplicates {s.exact_duplicates}",
        ]
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(s.skipped.items())) or "none"
        errors = ", ".join(f"{k} {v}" for k, v in sorted(s.errors.items())) or "none"
        warnings = ", ".join(f"{k} {v}" for k, v in sorted(s.warnings.items())) or "none"
        lines.append(f"  skipped: {skipped}")
        lines.append(f"  errors: {errors}")
        lines.append(f"  stored with warnings: {warnings}")
        return "\n".join(lines)
