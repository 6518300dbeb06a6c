"""Count the review queue's tallies (pairs and labelled pairs) from scratch: after a data
migration that rewrites pairs' facts or an extraction's status, or to repair a tally."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from reviews.models import LabelTally, QueueTally
from reviews.queue.pair_states import pair_states_rebuild
from reviews.queue.queue_tally import queue_sync, queue_tally_rebuild


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--states",
            action="store_true",
            help="first recompute every labelled pair's review state from its labels",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["states"]:
            pair_states_rebuild()
        queue_sync()
        queue_tally_rebuild()
        self.stdout.write(
            f"queue tally rebuilt: {QueueTally.objects.count()} rows of pairs, "
            f"{LabelTally.objects.count()} rows of labelled pairs"
        )
