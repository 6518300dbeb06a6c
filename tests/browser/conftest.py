"""A real headless Chromium (Debian's package) driven by Playwright against live_server."""

import os
from collections.abc import Iterator

import pytest
from django.db import connection

from tests.factories import wait_until

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here drives the browser: marked so, it skips with the reason where
    Chromium is missing (and fails under REQUIRE_SERVICES), whatever its module says."""
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here + os.sep):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
            args=LAUNCH_ARGS,
            headless=True,
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()
    _server_requests_settle()


def _server_requests_settle(timeout: float = 15.0) -> None:
    """Wait until no other session of the test database is running a statement or holds
    an open transaction. Closing the browser does not stop a request the live server is
    still answering (the page that Save and next opens, say): the transactional test's
    flush would TRUNCATE beside that request's transaction and the two deadlock."""
    if connection.vendor != "postgresql":
        return
    wait_until(_no_other_session_busy, timeout, "the live server's requests to end")


def _no_other_session_busy() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND state IN ('active', 'idle in transaction',"
            " 'idle in transaction (aborted)')"
        )
        (busy,) = cursor.fetchone()
    return not busy


@pytest.fixture
def logged_in(page, live_server, django_user_model):
    """A page logged in as an editor through the real login form."""
    from tests import factories

    factories.user_create(username="eve", role="editor", password="pw-eve-123")
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "eve")
    page.fill("input[name=password]", "pw-eve-123")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{live_server.url}/")
    return page
