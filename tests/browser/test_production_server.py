"""The desk as it is deployed: gunicorn, DEBUG off, collectstatic output served by
WhiteNoise under hashed names, the nonce-based CSP. htmx and desk.js load and an htmx
action (a keyboard label, saved without a page reload) works."""

import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.test import override_settings

from reviews.models import Label
from tests import factories
from tests.conftest import PRODUCTION_PASSWORD_HASHERS
from tests.factories import find, pair_of, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
HASHED = re.compile(r"\.[0-9a-f]{12}\.(js|css)$")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"gunicorn exited:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"gunicorn did not answer {url}:\n{log.read_text()}")


@pytest.fixture
def production_server(transactional_db, tmp_path: Path) -> Iterator[str]:
    from django.db import connection

    parts = urlsplit(settings.DATABASE_URL)
    test_db = urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "PYTEST_VERSION", "CELERY_BROKER_URL", "SECURE_SSL_REDIRECT"}
    }
    env.update(
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=test_db,
        ALLOWED_HOSTS="127.0.0.1",
        STATIC_MANIFEST="1",
        STATIC_ROOT=str(tmp_path / "static"),
    )
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
    )
    port = _free_port()
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "dedup_site.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{base}/healthz", proc, log)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture
def prod_page(browser, production_server: str) -> Iterator[object]:
    context = browser.new_context(base_url=production_server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def _assets(page) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('script[src], link[rel=stylesheet]')]"
        ".map(e => e.src || e.href)"
    )


def _assert_served(page, urls: list[str]) -> None:
    assert urls
    for url in urls:
        assert HASHED.search(url), f"not a collectstatic (hashed) name: {url}"
        r = page.request.get(url)
        assert r.status == 200, url
        assert "max-age=315360000" in r.headers.get("cache-control", ""), url


def test_static_files_htmx_and_an_htmx_action_under_gunicorn_with_debug_off(
    prod_page, production_server: str
) -> None:
    page = prod_page
    text = factories.article_text(300, words=120)
    a = reviewed_document(url="https://a.example.com/p", text=text)
    b = reviewed_document(url="https://b.example.com/p", text=text + " extra", flips=2)
    find(a, b)
    pair = pair_of(a, b)
    # The server checks the password with its own (production) hashers.
    with override_settings(PASSWORD_HASHERS=PRODUCTION_PASSWORD_HASHERS):
        factories.user_create(username="eve", role="editor", password="pw-eve-123")
    csp_errors: list[str] = []
    page.on(
        "console",
        lambda m: csp_errors.append(m.text) if "Content Security Policy" in m.text else None,
    )

    # The admin's own CSS is served as well.
    page.goto("/admin/login/")
    admin_assets = _assets(page)
    assert any("/static/admin/css/" in u for u in admin_assets)
    _assert_served(page, admin_assets)

    page.goto("/accounts/login/")
    page.fill("input[name=username]", "eve")
    page.fill("input[name=password]", "pw-eve-123")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{production_server}/")

    page.goto(f"/review/pairs/{pair.id}/")
    assets = _assets(page)
    assert any("htmx" in u for u in assets) and any("desk" in u for u in assets)
    assert any(u.endswith(".css") for u in assets)
    _assert_served(page, assets)
    # htmx ran (its script carries the CSP nonce) and the desk's keyboard script too.
    assert page.evaluate("typeof window.htmx") == "object"
    page.evaluate("window.__marker = 'no reload'")

    page.keyboard.press("1")  # desk.js: choose "duplicate" and focus the reason
    assert page.locator("input[name=verdict][value=duplicate]").is_checked()
    page.keyboard.type("same article under gunicorn")
    page.keyboard.press("Enter")  # saved by an htmx POST
    page.wait_for_selector(".notice:has-text('Saved')")
    assert page.evaluate("window.__marker") == "no reload"
    label = Label.objects.get()
    assert (label.pair_id, label.verdict) == (pair.id, "duplicate")
    assert csp_errors == []
