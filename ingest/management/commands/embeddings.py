from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest import embedder, semantic


class Command(BaseCommand):
    help = (
        "The semantic channel: its state (on, or off and why) and the rows per status; "
        "--backfill hands every extracted document without an embedding, or whose tries "
        "failed fewer than EMBEDDING_ATTEMPTS times, to the embedding workers (run eagerly "
        "where there is no broker); --snapshot brings this process's index up to date and "
        "writes it to EMBEDDING_INDEX_DIR (to warm workers)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--backfill", action="store_true")
        parser.add_argument("--limit", type=int, default=None)
        parser.add_argument("--snapshot", action="store_true")

    def handle(self, *args: object, **options: Any) -> None:
        state = embedder.channel_state()
        if state.on:
            self.stdout.write(f"semantic channel: on ({embedder.model_key()})")
        else:
            self.stdout.write(f"semantic channel: off ({state.reason})")
        if options["backfill"]:
            if not state.on:
                raise CommandError(f"the semantic channel is off: {state.reason}")
            n = semantic.embeddings_backfill(limit=options["limit"])
            self.stdout.write(f"handed {n} documents to the embedding workers")
        if options["snapshot"]:
            if not state.on:
                raise CommandError(f"the semantic channel is off: {state.reason}")
            result = semantic.embeddings_snapshot()
            if result is not None:
                self.stdout.write(
                    f"snapshot: {result.vectors} vectors, {result.bytes} bytes, {result.path}"
                )
        counts = semantic.embedding_counts()
        for status, n in sorted(counts.statuses.items()):
            self.stdout.write(f"{status}: {n}")
        if counts.failed_attempts:
            self.stdout.write(
                f"failed attempts: {counts.failed_attempts} rows; {counts.given_up} documents "
                f"gave up after EMBEDDING_ATTEMPTS={settings.EMBEDDING_ATTEMPTS} tries"
            )
