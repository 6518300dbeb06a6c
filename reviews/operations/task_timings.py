"""Task durations: the timed Celery tasks' run times, recorded from Celery's signals
(TaskRun rows, pruned after a while)."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery.signals import task_postrun, task_prerun
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from ingest.models import TaskRun

log = logging.getLogger(__name__)


# Tasks whose durations /metrics reports.
TIMED_TASKS = frozenset(
    {
        "ingest.tasks.documents_process",
        "ingest.tasks.candidates_find",
        "reviews.tasks.refingerprint_run",
        "reviews.tasks.rollup_metrics",
    }
)


def task_runs_prune() -> int:
    cutoff = timezone.now() - timedelta(days=settings.METRICS_TASK_RUN_DAYS)
    return TaskRun.objects.filter(finished_at__lt=cutoff).delete()[0]


_started: dict[str, float] = {}


def task_started(task_id: str | None = None, task: object = None, **_: object) -> None:
    if task_id and getattr(task, "name", "") in TIMED_TASKS:
        _started[task_id] = time.perf_counter()


def task_finished(
    task_id: str | None = None, task: object = None, state: str | None = None, **_: object
) -> None:
    """Record the duration; never lets bookkeeping break the task or hide its error."""
    began = _started.pop(task_id or "", None)
    if began is None:
        return
    duration = time.perf_counter() - began
    if connection.in_atomic_block and connection.needs_rollback:
        return
    try:
        TaskRun.objects.create(
            task=getattr(task, "name", ""),
            duration=duration,
            state=state or "",
            finished_at=timezone.now(),
        )
    except DatabaseError:
        log.warning("could not record the duration of %s", getattr(task, "name", ""))


def signals_connect() -> None:
    task_prerun.connect(task_started, weak=False, dispatch_uid="dedup-task-started")
    task_postrun.connect(task_finished, weak=False, dispatch_uid="dedup-task-finished")
