from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ingest import body_store


class Command(BaseCommand):
    help = (
        "Re-read every sealed archive file and compare its SHA-256 with the one recorded "
        "at sealing; check that every open one exists. Lists each missing or changed file "
        "with the number of bodies it holds, and fails when there is one. docs/archive.md"
    )

    def handle(self, *args: Any, **options: Any) -> None:
        checked, problems = body_store.archive_verify()
        for problem in problems:
            self.stdout.write(f"{problem.message}; {problem.documents} bodies stored in it")
        self.stdout.write(f"{checked} archive file(s) checked, {len(problems)} with problems")
        if problems:
            raise CommandError(
                f"{len(problems)} archive file(s) missing or changed: restore them from a "
                "backup (docs/archive.md)"
            )
