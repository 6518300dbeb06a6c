"""Run the automatic-merge rule once (the beat schedule runs it on the workers)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from reviews.decisions import automerge


class Command(BaseCommand):
    help = "Apply AUTO_MERGE: accept (auto) or propose (semi) eligible groups per doc type."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--group", type=int, action="append", help="only these groups")

    def handle(self, *args: Any, **options: Any) -> None:
        counts = automerge.automerge_run(group_ids=options["group"])
        self.stdout.write(", ".join(f"{k}: {v}" for k, v in counts.items()))
