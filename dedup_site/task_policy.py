"""What every worker task shares: one definition of a transient database error, and
the retry policy for it.

A database error is transient when the server or the connection went away (restart,
failover, `pg_terminate_backend`, a network cut) or the transaction lost a race
(serialization failure, deadlock): running the task again later is the fix. It can
come from Django's wrapper (`django.db.OperationalError`/`InterfaceError`) or straight
from psycopg, when code uses a raw psycopg cursor (the band index query): psycopg's
`OperationalError` family covers `AdminShutdown`, `ConnectionFailure`,
`SerializationFailure`, `DeadlockDetected` and `QueryCanceled`. Every task is
idempotent, so a retry after a half-done attempt adds nothing twice.
"""

from typing import Any

import psycopg
from celery import shared_task
from celery.contrib.django.task import DjangoTask
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

TRANSIENT_DB_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


def is_transient_db_error(exc: BaseException) -> bool:
    return isinstance(exc, TRANSIENT_DB_ERRORS)


def drop_broken_connections() -> None:
    """Close connections that are unusable, so the next attempt opens a fresh one.

    Outside an atomic block only: closing inside one would end a caller's transaction
    (an eager task run inside a request or a test)."""
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block:
            conn.close_if_unusable_or_obsolete()


class DatabaseTask(DjangoTask):
    """Retries transient database errors with exponential backoff (and jitter, so a
    desk's workers do not all reconnect at once after an outage). A DjangoTask, so
    `delay_on_commit` enqueues after the transaction commits."""

    abstract = True
    acks_late = True
    autoretry_for = TRANSIENT_DB_ERRORS
    retry_backoff = True
    retry_jitter = True

    def retry(self, *args: Any, **kwargs: Any) -> Any:
        drop_broken_connections()
        return super().retry(*args, **kwargs)


def db_task(**options: Any) -> Any:
    """`@db_task()` is `@shared_task` with the desk's transient-error policy."""
    options.setdefault("base", DatabaseTask)
    options.setdefault("max_retries", settings.TASK_DB_MAX_RETRIES)
    options.setdefault("retry_backoff_max", settings.TASK_DB_RETRY_BACKOFF_MAX)
    return shared_task(**options)
