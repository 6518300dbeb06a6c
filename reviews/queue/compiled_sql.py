"""The SQL of the review queue's read statements, compiled once per process and shape.

Building and compiling a Django queryset costs a millisecond or more of Python for a
statement the database answers in about as long, and the queue page runs the same dozen
statements on every read with values that are the filters' own. A caller names, in the
key, everything its statement depends on (the filters, the extractor version it reads
walls under, a watermark); the statement is compiled on the first read of that key and
its SQL and parameters are reused after. Nothing whose value changes by itself (the time
now) may go into a compiled statement. The cache is emptied when a setting changes (the
thresholds and doc types are in the SQL) and when it grows past MAX_ENTRIES.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.db import connection
from django.db.models import QuerySet
from django.dispatch import receiver

MAX_ENTRIES = 512
_SQL: dict[Hashable, tuple[str, tuple[Any, ...]]] = {}


def compiled(key: Hashable, build: Callable[[], QuerySet[Any, Any]]) -> tuple[str, tuple[Any, ...]]:
    """The SQL and parameters of `build()`, compiled once for this key."""
    full = (
        connection.vendor,
        tuple(settings.DOC_TYPES),
        tuple(sorted(settings.CANDIDATE_THRESHOLDS.items())),
        key,
    )
    hit = _SQL.get(full)
    if hit is None:
        sql, params = build().query.sql_with_params()
        if len(_SQL) >= MAX_ENTRIES:
            _SQL.clear()
        hit = _SQL[full] = (sql, tuple(params))
    return hit


def compiled_rows(key: Hashable, build: Callable[[], QuerySet[Any, Any]]) -> list[tuple[Any, ...]]:
    """The rows of `build()` (a values_list query: no field converters), read with the
    statement compiled once for this key."""
    sql, params = compiled(key, build)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


@receiver(setting_changed)
def _settings_changed(**kwargs: Any) -> None:
    _SQL.clear()
