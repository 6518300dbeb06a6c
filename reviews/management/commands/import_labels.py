from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviews.labels import exports, imports


class Command(BaseCommand):
    help = (
        "Import labels exported by export_labels (or a spreadsheet in the same columns). "
        "Every row is validated first; any bad row and nothing is imported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--format", choices=exports.FORMATS, default="")

    def handle(self, *args: object, **options: object) -> None:
        path = str(options["file"])
        try:
            fmt = exports.format_for(path, str(options["format"] or ""))
        except ValueError as e:
            raise CommandError(str(e)) from None
        try:
            with open(path, encoding="utf-8-sig", newline="") as f:
                result = imports.labels_import(stream=f, fmt=fmt)
        except OSError as e:
            raise CommandError(f"cannot read {path}: {e.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{path} is not UTF-8 text") from None
        except imports.LabelImportError as e:
            for problem in e.problems:
                self.stderr.write(problem)
            raise CommandError(f"{e}: fix the rows above and run again") from None
        users = ", ".join(result.users_created)
        self.stdout.write(
            f"{result.created} label(s) imported, {result.skipped} already stored"
            + (f"; new inactive users: {users}" if users else "")
        )
