"""Fault injection for worker tests: the band index query's connection is terminated by
the server (`pg_terminate_backend`, as in a database restart) right before the query.

In a test process: `terminate_before_index_query(times=1)`. In a worker process started
with `-I tests.workers.fault_hooks`: the environment variable DEDUP_FAULT_TERMINATE_FILE
names a file; while it exists, the next index query deletes it and has its connection
terminated first (so exactly one attempt fails per file the test writes).
"""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from django.db import connection

from ingest import index


def terminate_own_backend() -> None:
    """Have the server terminate this process's Django connection, from another one."""
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**params, autocommit=True) as other:
        # Wait (up to 10 s) until the backend is really gone.
        other.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])


def patch_index_query(should_fail: Callable[[], bool]) -> Callable[[], None]:
    """Wrap index._query_pg; returns a function that restores the original."""
    original = index._query_pg

    def wrapped(*args: Any, **kwargs: Any) -> list[index.Hit]:
        if should_fail():
            terminate_own_backend()
        return original(*args, **kwargs)

    index._query_pg = wrapped

    def restore() -> None:
        index._query_pg = original

    return restore


def _from_file(path: Path) -> Callable[[], bool]:
    def should_fail() -> bool:
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    return should_fail


if os.environ.get("DEDUP_FAULT_TERMINATE_FILE"):
    patch_index_query(_from_file(Path(os.environ["DEDUP_FAULT_TERMINATE_FILE"])))
