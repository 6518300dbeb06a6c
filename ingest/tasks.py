from dedup_site.task_policy import db_task


@db_task()
def documents_process(document_ids: list[int]) -> int:
    from ingest import services  # no import cycle

    return services.documents_process(document_ids=document_ids)


@db_task()
def candidates_find(document_ids: list[int]) -> dict[str, int]:
    from ingest import candidates  # no import cycle

    return candidates.candidates_find(document_ids=document_ids)


@db_task()
def refingerprint_run(run_id: int) -> int:
    """Work on a background run for a while, then hand the rest to a fresh task (a
    long run never holds one message; a worker that dies loses at most one chunk)."""
    from ingest import upgrades  # no import cycle

    run = upgrades.run_work(run_id=run_id)
    if run.status == run.Status.RUNNING:
        refingerprint_run.delay(run_id)
    return run.done


@db_task()
def rollup_metrics(days: int | None = None) -> int:
    """The beat task: recompute the recent days' rollups (idempotent)."""
    from django.conf import settings

    from ingest import metrics  # no import cycle

    written = metrics.rollups_compute(days=metrics.recent_days(days or settings.ROLLUP_DAYS))
    metrics.task_runs_prune()
    return written
