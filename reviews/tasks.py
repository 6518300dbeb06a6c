from celery import shared_task
from django.db import OperationalError


@shared_task(acks_late=True, autoretry_for=(OperationalError,), max_retries=3, retry_backoff=True)
def automerge_run(group_ids: list[int] | None = None) -> dict[str, int]:
    from reviews import decisions  # no import cycle

    return decisions.automerge_run(group_ids=group_ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), max_retries=3, retry_backoff=True)
def prelabel_compute() -> int:
    """The beat task: recompute the pre-label score histograms and suggestions."""
    from reviews import prelabel  # no import cycle

    return prelabel.prelabel_compute()
