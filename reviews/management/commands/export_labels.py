from datetime import date

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviews import roles
from reviews.core.calibration_math import SPLITS
from reviews.labels import exports


class Command(BaseCommand):
    help = (
        "Export every label (superseded ones and retractions included, marked) as CSV or "
        "JSONL, streamed: memory does not grow with the number of labels."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=exports.FORMATS, default="csv")
        parser.add_argument("--split", choices=SPLITS, default="")
        parser.add_argument("--since", default="", help="YYYY-MM-DD: labels given from then")
        parser.add_argument("--method", default="", help="fingerprint method key")
        parser.add_argument("--output", "-o", default="-", help="file (default: stdout)")
        parser.add_argument(
            "--bom",
            action="store_true",
            help="CSV: start with a UTF-8 byte order mark, so that a spreadsheet opening the "
            "file reads Chinese and Vietnamese text as UTF-8",
        )
        parser.add_argument(
            "--user",
            default="",
            help="export as this user, who must hold a calibration role (auditor or admin); "
            "without it the command runs as the operator, who has the database anyway",
        )

    def handle(self, *args: object, **options: object) -> None:
        user = User.objects.filter(username=str(options["user"])).first()
        if options["user"] and (user is None or not roles.can_export_labels(user)):
            raise CommandError(
                f"--user {options['user']!r}: the label export needs an active user with the "
                "auditor or admin role"
            )
        if options["bom"] and options["format"] != "csv":
            raise CommandError("--bom is for CSV only")
        since = None
        if options["since"]:
            try:
                since = date.fromisoformat(str(options["since"]))
            except ValueError:
                raise CommandError(f"--since is not a date: {options['since']!r}") from None
        lines = exports.export_lines(
            fmt=str(options["format"]),
            split=str(options["split"] or ""),
            since=since,
            method=str(options["method"]),
            bom=bool(options["bom"]),
        )
        output = str(options["output"])
        n = -1 if options["format"] == "csv" else 0
        if output == "-":
            for line in lines:
                self.stdout.write(line, ending="")
                n += 1
        else:
            with open(output, "w", encoding="utf-8", newline="") as f:
                for line in lines:
                    f.write(line)
                    n += 1
            self.stderr.write(f"{n} label(s) written to {output}")
