from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest"

    def ready(self) -> None:
        # The tasks register the work the services hand on after commit.
        from ingest import tasks  # noqa: F401
