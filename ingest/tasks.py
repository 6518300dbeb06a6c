from celery import shared_task
from django.db import OperationalError


@shared_task(acks_late=True, autoretry_for=(OperationalError,), max_retries=3, retry_backoff=True)
def documents_process(document_ids: list[int]) -> int:
    from ingest import services  # no import cycle

    return services.documents_process(document_ids=document_ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), max_retries=3, retry_backoff=True)
def candidates_find(document_ids: list[int]) -> dict[str, int]:
    from ingest import candidates  # no import cycle

    return candidates.candidates_find(document_ids=document_ids)
