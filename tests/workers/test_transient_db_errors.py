"""Transient database errors are retried, whichever layer raises them: the band index
query runs on a raw psycopg cursor, and a connection the server terminated mid-task must
not drop the task (PostgreSQL; the last test with a real worker)."""

from pathlib import Path

import psycopg
import pytest
from django.db import IntegrityError, InterfaceError, OperationalError, ProgrammingError

from dedup_site.task_policy import TRANSIENT_DB_ERRORS, is_transient_db_error
from ingest import tasks
from ingest.models import CandidatePair
from reviews import tasks as review_tasks
from tests import factories
from tests.factories import wait_until
from tests.workers import fault_hooks


@pytest.mark.parametrize(
    "exc",
    [
        OperationalError("django layer"),
        InterfaceError("django layer"),
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
        psycopg.errors.SerializationFailure("could not serialize access"),
        psycopg.errors.DeadlockDetected("deadlock detected"),
        psycopg.OperationalError("server closed the connection unexpectedly"),
        psycopg.InterfaceError("the connection is closed"),
    ],
)
def test_transient_errors_of_both_layers_are_retried(exc: BaseException) -> None:
    assert is_transient_db_error(exc)
    for task in (tasks.documents_process, tasks.candidates_find, review_tasks.rollup_metrics):
        assert isinstance(exc, task.autoretry_for)


@pytest.mark.parametrize(
    "exc",
    [IntegrityError("dup"), ProgrammingError("bad sql"), psycopg.errors.UniqueViolation("dup")],
)
def test_errors_a_retry_cannot_fix_are_not_retried(exc: BaseException) -> None:
    assert not is_transient_db_error(exc)
    assert not isinstance(exc, TRANSIENT_DB_ERRORS)


def _near_pair():
    text = factories.article_text(3)
    a = factories.indexed_document(url="https://a.example/1", text=text, simhash=0xF0F0)
    b = factories.indexed_document(url="https://b.example/1", text=text + " x", simhash=0xF0F1)
    return a, b


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_terminated_connection_during_the_index_query_is_retried() -> None:
    a, b = _near_pair()
    calls: list[int] = []

    def fail_first() -> bool:
        calls.append(1)
        return len(calls) == 1

    restore = fault_hooks.patch_index_query(fail_first)
    try:
        result = tasks.candidates_find.apply(args=[[a.pk, b.pk]], throw=False)
    finally:
        restore()
    assert result.successful(), result.traceback
    assert len(calls) >= 2  # the first attempt met the terminated connection
    assert CandidatePair.objects.filter(a_id=a.pk, b_id=b.pk).exists()


@pytest.mark.redis
@pytest.mark.postgres
def test_a_real_worker_retries_after_its_connection_is_terminated(
    worker_factory, tmp_path: Path
) -> None:
    flag = tmp_path / "terminate-once"
    worker = worker_factory(
        extra_args=["-I", "tests.workers.fault_hooks"],
        env={"DEDUP_FAULT_TERMINATE_FILE": str(flag), "DB_CONN_MAX_AGE": "60"},
    )
    a, b = _near_pair()
    flag.write_text("1")
    worker.start()
    tasks.candidates_find.delay([a.pk, b.pk])
    wait_until(
        lambda: CandidatePair.objects.filter(a_id=a.pk, b_id=b.pk).exists(),
        90,
        "the pair after the retry",
    )
    assert not flag.exists()  # the fault did happen
    assert "Retry in" in worker.log.read_text(errors="replace")


@pytest.mark.redis
@pytest.mark.postgres
def test_workers_run_as_the_application_role(worker) -> None:
    """Every worker test's worker connects as the role `db_app_role` set up."""
    from django.conf import settings

    assert f"{settings.DATABASE_APP_ROLE}@" in worker.env["DATABASE_URL"]
    a, b = _near_pair()
    tasks.candidates_find.delay([a.pk, b.pk])
    wait_until(lambda: CandidatePair.objects.filter(a_id=a.pk, b_id=b.pk).exists(), 60, "the pair")


def test_the_visibility_timeout_outlasts_the_longest_retry_countdown() -> None:
    """A retry waits in its worker, unacked, until its countdown ends; were the
    visibility timeout shorter, Redis would hand the same message to a second worker."""
    from django.conf import settings

    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    assert options["visibility_timeout"] > 2 * settings.TASK_DB_RETRY_BACKOFF_MAX
    assert options["visibility_timeout"] > settings.REFINGERPRINT_TASK_SECONDS * 2
    for task in (tasks.documents_process, tasks.candidates_find, review_tasks.refingerprint_run):
        assert task.acks_late
        assert task.retry_backoff_max == settings.TASK_DB_RETRY_BACKOFF_MAX
