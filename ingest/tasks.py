"""Celery tasks of the ingest pipeline: thin wrappers over the services, registered as
the work the services hand on after commit (dedup_site.dispatch)."""

import logging

from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, connection

from dedup_site import dispatch
from dedup_site.task_policy import db_task
from ingest import candidates, index, partitions, semantic, services

log = logging.getLogger(__name__)


@worker_ready.connect
def _band_index_warm(**_: object) -> None:
    """A worker that starts reads the band btrees into the database server's memory
    before the first lookups need them (index.band_index_warm): after a restart or a
    bulk load they are otherwise read from disk by the first searches. A failure is
    logged and the worker goes on; the worker's own process keeps no connection from it
    (its pool's processes open their own)."""
    try:
        read = index.band_index_warm()
        log.info("band index read into memory: %d entries", read)
    except DatabaseError:
        log.exception("band index not read into memory")
    finally:
        connection.close()


@db_task()
def documents_process(document_ids: list[int]) -> int:
    return services.documents_process(document_ids=document_ids)


# The processing task searches its own documents; this task stays for searches queued
# by name (messages from before, an operator's call). No service names it any more.
@db_task()
def candidates_find(document_ids: list[int]) -> dict[str, int]:
    return candidates.candidates_find(document_ids=document_ids)


# On its own queue (settings.CELERY_TASK_ROUTES): embedding workers can run elsewhere.
@db_task()
def embeddings_compute(document_ids: list[int]) -> dict[str, object]:
    summary = semantic.embeddings_compute(document_ids=document_ids)
    if summary.deferred:
        # This process's index is still being built: the same batch again later (its
        # vectors are stored; the rerun embeds nothing twice and then nominates).
        embeddings_compute.apply_async((document_ids,), countdown=settings.EMBEDDING_DEFER_SECONDS)
    return {
        "deferred": summary.deferred,
        "created": summary.created,
        "pairs_created": summary.pairs_created,
        "pairs_updated": summary.pairs_updated,
    }


# On the embeddings queue too, every EMBEDDING_SNAPSHOT_EVERY_SECONDS (beat).
@db_task()
def embeddings_snapshot() -> dict[str, object] | None:
    result = semantic.embeddings_snapshot(seconds=settings.EMBEDDING_CATCHUP_SECONDS)
    if result is None:
        return None
    return {"vectors": result.vectors, "complete": result.complete, "bytes": result.bytes}


# Beat, daily: the channel indexes' partitions of this month and the next ones exist
# before a live crawl's pages need them (ingest/partitions.py).
@db_task()
def partitions_ahead() -> None:
    partitions.months_ahead(settings.PARTITION_MONTHS_AHEAD)


dispatch.register("documents_process", documents_process.delay_on_commit)
dispatch.register("embeddings_compute", embeddings_compute.delay_on_commit)
