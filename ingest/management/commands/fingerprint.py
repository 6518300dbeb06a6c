from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.core.methods import METHODS, REFERENCE_KEY, fingerprint_text
from ingest.core.simhash import to_hex


class Command(BaseCommand):
    help = "Print the 64-bit SimHash of TEXT under a method, as 16 hex digits."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", nargs="+", help="the text (several words are joined)")
        parser.add_argument("--method", default=REFERENCE_KEY, choices=sorted(METHODS))
        parser.add_argument(
            "--reference",
            action="store_true",
            help="use the slow locked reference implementation instead of the fast one",
        )

    def handle(self, *args: object, **options: object) -> None:
        text = " ".join(options["text"])  # type: ignore[arg-type]
        result = fingerprint_text(
            str(options["method"]), text, reference=bool(options["reference"])
        )
        if result.simhash is None:
            raise CommandError(f"insufficient_features: {result.token_count} tokens")
        self.stdout.write(to_hex(result.simhash))
