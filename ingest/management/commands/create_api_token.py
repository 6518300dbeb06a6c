import hashlib
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for a user and print it once (only its hash is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="what the token is for, e.g. the crawler's name")
        parser.add_argument("--user", required=True, help="username the token acts for")
        parser.add_argument("--token", help="use this token instead of a random one")

    def handle(self, *args: object, **options: object) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(username=options["user"])
        except User.DoesNotExist:
            raise CommandError(f"no user {options['user']!r}") from None
        token = str(options["token"] or secrets.token_urlsafe(32))
        digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
        ApiToken.objects.get_or_create(
            key_sha256=digest, defaults={"name": str(options["name"]), "user": user}
        )
        self.stdout.write(token)
