"""Compile the desk's translation catalogues (.po → .mo) with Babel, no GNU gettext."""

from django.core.management.base import BaseCommand

from dedup_site import catalogues


class Command(BaseCommand):
    help = "Compile locale/*/LC_MESSAGES/*.po into the .mo files the desk reads (pure Python)."

    def handle(self, *args: object, **options: object) -> None:
        for mo in catalogues.compile_all():
            self.stdout.write(f"compiled {mo.relative_to(catalogues.LOCALE_DIR.parent)}")
