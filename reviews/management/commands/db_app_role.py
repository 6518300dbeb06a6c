from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviews.operations.db_roles import RoleError, app_role_grant


class Command(BaseCommand):
    help = (
        "Grant the application's database role what the desk and the workers need and no "
        "more (run as the tables' owner, after migrate). Idempotent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--role", default=settings.DATABASE_APP_ROLE)
        parser.add_argument(
            "--create", action="store_true", help="create the role (LOGIN) when absent"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            grant = app_role_grant(
                role=options["role"],
                create=options["create"],
                password=settings.DATABASE_APP_PASSWORD,
            )
        except RoleError as e:
            raise CommandError(str(e)) from e
        what = "created and granted" if grant.created else "granted"
        self.stdout.write(f"role {grant.role}: {what} ({len(grant.statements)} statements)")
