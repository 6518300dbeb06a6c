"""Celery tasks of the desk, the metrics and the method upgrades: thin wrappers over the
services, registered as the work the services hand on after commit (dedup_site.dispatch)."""

from django.conf import settings

from dedup_site import dispatch
from dedup_site.task_policy import db_task
from reviews.calibration import prelabel, stored_figures
from reviews.decisions import automerge
from reviews.operations import method_upgrades, rollups, task_timings


@db_task()
def automerge_run(group_ids: list[int] | None = None) -> dict[str, int]:
    return automerge.automerge_run(group_ids=group_ids)


@db_task()
def calibration_figures_recompute() -> int:
    """The beat task: recompute and store what the calibration page shows."""
    return stored_figures.figures_recompute()


@db_task()
def prelabel_compute() -> int:
    """The beat task: recompute the pre-label score histograms and suggestions."""
    return prelabel.prelabel_compute()


@db_task()
def refingerprint_run(run_id: int) -> int:
    """Work on a background run for a while, then hand the rest to a fresh task (a
    long run never holds one message; a worker that dies loses at most one chunk)."""
    run = method_upgrades.run_work(run_id=run_id)
    if run.status == run.Status.RUNNING:
        refingerprint_run.delay(run_id)
    return run.done


@db_task()
def rollup_metrics(days: int | None = None) -> int:
    """The beat task: recompute the recent days' rollups (idempotent)."""
    written = rollups.rollups_compute(days=rollups.recent_days(days or settings.ROLLUP_DAYS))
    task_timings.task_runs_prune()
    return written


dispatch.register("refingerprint_run", refingerprint_run.delay_on_commit)
