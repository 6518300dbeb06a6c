from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ingest import body_store


class Command(BaseCommand):
    help = (
        "Seal the archive files of this host left open by writers that no longer run "
        "(a worker or command killed with its file open): each is made read-only and its "
        "size and SHA-256 recorded. A file a running process writes is left alone, and so "
        "is another host's (run the command there). docs/archive.md"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--gone-host",
            default="",
            help="seal every open file of this other host: it is gone for good and none "
            "of its processes writes any more (a decommissioned machine or container)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        sealed = body_store.archive_seal_dead(gone_host=options["gone_host"])
        for path in sealed:
            self.stdout.write(f"sealed {path}")
        self.stdout.write(f"{len(sealed)} file(s) sealed")
