import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from demo.crawl import (
    build_demo_crawl,
    expectations,
    expectations_path,
    write_jsonl,
    write_warc,
)


class Command(BaseCommand):
    help = (
        "Write the built-in demo crawl (invented pages with known answers) as a gzipped "
        "WARC, or JSONL with --jsonl, and its answer key OUT.expected.json beside it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out", help="OUT.warc.gz (or OUT.jsonl with --jsonl)")
        parser.add_argument("--seed", type=int, default=7, help="same seed → same bytes")
        parser.add_argument("--jsonl", action="store_true", help="write JSON Lines instead")

    def handle(self, *args: object, **options: object) -> None:
        out = Path(str(options["out"]))
        seed = int(options["seed"])  # type: ignore[call-overload]
        if not out.parent.is_dir():
            raise CommandError(f"directory {out.parent} does not exist")
        pages, cases = build_demo_crawl(seed)
        if options["jsonl"]:
            with out.open("w", encoding="utf-8", newline="\n") as fh:
                records = write_jsonl(pages, fh)
        else:
            with out.open("wb") as fh:
                records = write_warc(pages, fh, seed=seed)
        answers = expectations_path(out)
        answers.write_text(
            json.dumps(expectations(pages, cases, seed), ensure_ascii=False, indent=1) + "\n",
            encoding="utf-8",
        )
        self.stdout.write(
            f"{out}: {len(pages)} pages ({records} records), seed {seed}\n"
            f"{answers}: {len(cases)} cases"
        )
