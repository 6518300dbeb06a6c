from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Reviews"

    def ready(self) -> None:
        # The tasks register the work the services hand on after commit; the metrics
        # time every task for /metrics (Celery task_prerun / task_postrun).
        # The queue's tallies hear of late changes to pairs' facts (a late cosine).
        from reviews import metrics, tasks  # noqa: F401
        from reviews.queue import queue_tally  # noqa: F401

        metrics.signals_connect()
        queue_tally.signals_connect()
