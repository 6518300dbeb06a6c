"""A real Celery worker process against the test database and the Redis broker."""

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]


class WorkerProcess:
    def __init__(self, env: dict[str, str], log: Path, extra_args: list[str] | None = None) -> None:
        self.env = env
        self.log = log
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "dedup_site",
                    "worker",
                    "--pool",
                    "solo",
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-n",
                    f"test-{os.getpid()}@%h",
                    *self.extra_args,
                ],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, no ack for the task in hand."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def _worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The worker connects to the test database as the application's role, with only
    the privileges `db_app_role` grants (the suite itself runs as the owner)."""
    from django.db import connection

    from reviews.operations.db_roles import app_role_grant

    role = settings.DATABASE_APP_ROLE
    app_role_grant(role=role, create=True, password=settings.DATABASE_APP_PASSWORD)
    db_url = urlsplit(settings.DATABASE_URL)
    host = db_url.hostname or "127.0.0.1"
    user = quote(role) + (
        ":" + quote(settings.DATABASE_APP_PASSWORD, safe="")
        if settings.DATABASE_APP_PASSWORD
        else ""
    )
    netloc = f"{user}@{host}" + (f":{db_url.port}" if db_url.port else "")
    test_db_url = urlunsplit(
        db_url._replace(netloc=netloc, path="/" + connection.settings_dict["NAME"])
    )
    return {
        **os.environ,
        "DATABASE_URL": test_db_url,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_VISIBILITY_TIMEOUT": "4",
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "CELERY_UNACKED_RESTORE_THROTTLE": "1",
        "DB_CONN_MAX_AGE": "0",
        **(extra or {}),
    }


@pytest.fixture
def worker_factory(transactional_db, tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    """`worker_factory(extra_args=[…], env={…})`: a worker process, not started yet."""
    from dedup_site.celery import app

    app.control.purge()
    made: list[WorkerProcess] = []

    def make(
        extra_args: list[str] | None = None, env: dict[str, str] | None = None
    ) -> WorkerProcess:
        process = WorkerProcess(_worker_env(env), tmp_path / f"worker{len(made)}.log", extra_args)
        made.append(process)
        return process

    yield make
    for process in made:
        process.stop()
        print(process.log.read_text(errors="replace")[-3000:])


@pytest.fixture
def worker(worker_factory) -> WorkerProcess:
    process = worker_factory()
    process.start()
    return process
