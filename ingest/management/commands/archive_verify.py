from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest import body_store, services


class Command(BaseCommand):
    help = (
        "Re-read every sealed archive file and compare its SHA-256 with the one recorded "
        "at sealing; check that every open one exists. Lists each missing or changed file "
        "with the number of bodies it holds, and fails when there is one. docs/archive.md"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reprocess",
            action="store_true",
            help="when every file is whole: hand the workers the documents never processed "
            "(their body was unreadable then, its file since restored)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        result = body_store.archive_verify()
        for path, host, pid in result.open_files:
            self.stdout.write(f"open (not sealed yet): {path}, written by {host} pid {pid}")
        for problem in result.problems:
            self.stdout.write(f"{problem.message}; {problem.documents} bodies stored in it")
        self.stdout.write(
            f"{result.checked} archive file(s) checked ({len(result.open_files)} open), "
            f"{len(result.problems)} with problems"
        )
        if result.problems:
            raise CommandError(
                f"{len(result.problems)} archive file(s) missing or changed: restore them "
                "from a backup (docs/archive.md)"
            )
        if options["reprocess"]:
            count = services.documents_unprocessed_enqueue()
            self.stdout.write(f"{count} unprocessed document(s) handed to the workers")
