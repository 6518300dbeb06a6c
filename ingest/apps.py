from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest"

    def ready(self) -> None:
        from ingest import metrics

        # Task durations for /metrics (Celery task_prerun / task_postrun).
        metrics.signals_connect()
