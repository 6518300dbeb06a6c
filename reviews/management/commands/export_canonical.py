"""Stream the canonical view of the corpus: one record per group and per singleton."""

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviews.decisions import canonical


class Command(BaseCommand):
    help = (
        "Write the deduplicated view (nothing is deleted): one record per group "
        "representative and per singleton, with members' ids and URLs and the decision "
        "that made it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument("--output", "-o", help="file to write (default: stdout)")
        parser.add_argument("--method", help="fingerprint method key (default: the active one)")
        parser.add_argument(
            "--accepted-only",
            action="store_true",
            help="collapse only groups a decision accepted; others come out as singletons",
        )
        parser.add_argument(
            "--bom",
            action="store_true",
            help="CSV: start with a UTF-8 byte order mark, so that a spreadsheet opening the "
            "file reads Chinese and Vietnamese text as UTF-8",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["bom"] and options["format"] != "csv":
            raise CommandError("--bom is for CSV only")
        records = canonical.canonical_records(
            method_key=options["method"], accepted_only=options["accepted_only"]
        )
        lines = (
            canonical.as_csv(records, bom=options["bom"])
            if options["format"] == "csv"
            else canonical.as_jsonl(records)
        )
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as out:
                n = sum(out.write(line) >= 0 for line in lines)
        else:
            n = 0
            for line in lines:
                self.stdout.write(line, ending="")
                n += 1
        if options["format"] == "csv":
            n -= 1
        sys.stderr.write(f"{n} records\n")
