from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Reviews"

    def ready(self) -> None:
        # The tasks register the work the services hand on after commit; the metrics
        # time every task for /metrics (Celery task_prerun / task_postrun).
        # The queue's tallies hear of late changes to pairs' facts (a late cosine).
        from reviews import tasks  # noqa: F401
        from reviews.operations import task_timings
        from reviews.queue import queue_tally

        task_timings.signals_connect()
        queue_tally.signals_connect()
