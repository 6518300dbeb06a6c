"""Transactions that lose a race are run again.

PostgreSQL aborts a transaction caught in a deadlock (SQLSTATE 40P01) or, under a
stricter isolation level, one that cannot be serialized (40001). Nothing of it was
applied, so running the whole transaction again is the fix. `conflict_retry` does that
a few times at the service boundary; when every attempt lost, it raises `DatabaseBusy`,
which views turn into a "try again" answer (never a 500). Inside a caller's own
transaction it does not retry: the outermost transaction is the one that can be redone.
"""

import random
import time
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction
from django.utils.translation import gettext_noop

CONFLICT_SQLSTATES = frozenset({"40P01", "40001"})  # deadlock, serialization failure


class DatabaseBusy(Exception):
    """Every attempt of a transaction was aborted by a concurrent one: try again."""


def is_conflict(exc: BaseException) -> bool:
    """A deadlock or serialization failure (Django's wrapper or psycopg's own error)."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if getattr(e, "sqlstate", None) in CONFLICT_SQLSTATES:
            return True
        e = e.__cause__ or e.__context__
    return False


def conflict_retry[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
    """Run `fn` in its own transaction, again (after a short random pause) when the
    database aborts it as a deadlock or serialization failure, up to
    DB_CONFLICT_ATTEMPTS times in all; then raise DatabaseBusy. Called inside an open
    transaction, `fn` runs in it once (a savepoint) and a conflict goes up to the
    outermost caller."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if connections[DEFAULT_DB_ALIAS].in_atomic_block:
            with transaction.atomic():
                return fn(*args, **kwargs)
        attempts = max(1, settings.DB_CONFLICT_ATTEMPTS)
        for attempt in range(1, attempts + 1):
            try:
                with transaction.atomic():
                    return fn(*args, **kwargs)
            except OperationalError as e:
                if not is_conflict(e):
                    raise
                if attempt == attempts:
                    raise DatabaseBusy(str(e).splitlines()[0]) from e
            # Full jitter: racers that collided do not collide again in step.
            time.sleep(random.uniform(0, settings.DB_CONFLICT_BACKOFF_SECONDS * attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    return wrapper


BUSY_TEXT = gettext_noop(
    "The desk was busy with other editors' work and this request was not applied: please try again."
)
