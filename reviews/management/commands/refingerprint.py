"""Compute a fingerprint method for every document, in this process, with a progress
bar. Resumes the method's unfinished run from its cursor (Ctrl-C is safe: the chunks
done so far are committed)."""

import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.models import RefingerprintRun
from reviews.operations import method_upgrades


class Command(BaseCommand):
    help = "Compute a method's fingerprints for every document (resumable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--method", required=True, help="method key (ingest/core/methods.py)")
        parser.add_argument(
            "--candidates",
            action="store_true",
            help="search candidates for the method instead (what a switch starts)",
        )
        parser.add_argument("--chunk", type=int, default=None, help="documents per chunk")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: object, **options: object) -> None:
        kind = RefingerprintRun.Kind.CANDIDATES if options["candidates"] else "fingerprints"
        try:
            run = method_upgrades.run_start(
                key=str(options["method"]), kind=kind, actor="cli", enqueue=False
            )
        except method_upgrades.UpgradeError as e:
            raise CommandError(str(e)) from None
        if run.done:
            self.stdout.write(f"resuming run {run.pk} after document {run.last_document_id}")
        show = not options["no_progress"] and sys.stderr.isatty()
        chunk = options["chunk"]
        while run.status == RefingerprintRun.Status.RUNNING:
            run = method_upgrades.run_step(run_id=run.pk, chunk=int(chunk) if chunk else None)  # type: ignore[call-overload]
            if show:
                bar = "#" * int(run.percent * 0.3)
                sys.stderr.write(
                    f"\r{run.method.key} {run.kind}: [{bar:<30}] {run.percent:5.1f}% "
                    f"{run.done}/{run.total}"
                )
                sys.stderr.flush()
        if show:
            sys.stderr.write("\n")
        coverage = method_upgrades.coverage(method=run.method)
        self.stdout.write(
            f"{run.kind} for {run.method.key}: {run.done} documents in run {run.pk}; "
            f"{coverage['missing']} of {coverage['documents']} documents lack its fingerprint"
        )
