"""Recompute daily rollups (idempotent: a day's rows are replaced by identical values)."""

from datetime import date, timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from reviews.operations import drift_alerts, rollups


class Command(BaseCommand):
    help = "Compute the daily rollups of a day (--day) or of the last N days (--days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--day", help="YYYY-MM-DD (default: today, UTC)")
        parser.add_argument("--days", type=int, default=1, help="this many days up to --day")
        parser.add_argument(
            "--crawled",
            action="store_true",
            help="every day from the first to the last fetch date of the stored documents",
        )

    def handle(self, *args: object, **options: object) -> None:
        try:
            last = date.fromisoformat(str(options["day"])) if options["day"] else None
        except ValueError:
            raise CommandError("--day: not a date (YYYY-MM-DD)") from None
        last = last or timezone.now().date()
        n = int(options["days"])  # type: ignore[call-overload]
        if n < 1:
            raise CommandError("--days must be at least 1")
        days = [last - timedelta(days=i) for i in range(n - 1, -1, -1)]
        if options["crawled"]:
            span = rollups.crawled_days()
            if not span:
                raise CommandError("no documents stored")
            days, last = span, span[-1]
        rows = rollups.rollups_compute(days=days)
        alerts = drift_alerts.alerts(today=last)
        self.stdout.write(f"{rows} rollup rows for {days[0]}…{days[-1]}; {len(alerts)} alerts")
        for a in alerts:
            self.stdout.write(f"  {a.day} {a.site or 'all sites'} {a.kind}: {a.message}")
