from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.models import Site
from ingest.sites import SitePriorityError, site_priority_set


class Command(BaseCommand):
    help = "Change a site's priority (representative suggestions), on the record."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("host")
        parser.add_argument("priority", type=int)
        parser.add_argument("--reason", required=True)
        parser.add_argument("--by", required=True, help="username of the person deciding")

    def handle(self, *args: Any, **options: Any) -> None:
        site = Site.objects.filter(host=options["host"]).first()
        if site is None:
            raise CommandError(f"no site {options['host']!r}")
        if not get_user_model().objects.filter(username=options["by"], is_active=True).exists():
            raise CommandError(f"no active user {options['by']!r}")
        try:
            change = site_priority_set(
                site=site,
                priority=options["priority"],
                actor=f"person:{options['by']}",
                reason=options["reason"],
            )
        except SitePriorityError as e:
            raise CommandError(str(e)) from e
        self.stdout.write(
            f"{site.host}: priority {change.priority_before} → {change.priority_after} "
            f"(recorded as change {change.pk})"
        )
