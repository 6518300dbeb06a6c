"""Repeated bad passwords lock the account out (django-axes), on the login page and in
the admin; the right password is refused until the cool-off ends. The pair (username,
address) is counted, and an address alone up to a higher limit; behind a proxy, the
address is the one the proxy forwards."""

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tests import factories

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"


@pytest.fixture
def client() -> Client:
    # CSRF is enforced by the real pages; the lockout is what is tested here.
    return Client()


def _login(client: Client, url: str, username: str, password: str, **extra: Any):
    return client.post(url, {"username": username, "password": password}, **extra)


def test_the_right_password_logs_in(client: Client) -> None:
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    r = _login(client, LOGIN, "eve", "right-pass-123")
    assert r.status_code == 302 and "_auth_user_id" in client.session


def test_n_wrong_passwords_then_the_right_one_is_refused(client: Client, settings) -> None:
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, LOGIN, "eve", "wrong").status_code == 200  # the form again
    assert _login(client, LOGIN, "eve", "wrong").status_code == 429  # the Nth locks
    r = _login(client, LOGIN, "eve", "right-pass-123")
    assert r.status_code == 429
    assert b"Too many failed logins" in r.content
    assert "_auth_user_id" not in client.session


def test_fewer_failures_than_the_limit_do_not_lock(client: Client, settings) -> None:
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, LOGIN, "eve", "wrong")
    assert _login(client, LOGIN, "eve", "right-pass-123").status_code == 302


def test_bad_passwords_for_a_username_from_elsewhere_do_not_lock_its_owner(
    client: Client, settings
) -> None:
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(client, LOGIN, "eve", "wrong", REMOTE_ADDR="198.51.100.1")
    assert (
        _login(client, LOGIN, "eve", "right-pass-123", REMOTE_ADDR="198.51.100.1").status_code
        == 429
    )
    # The pair is counted: eve at her own address still logs in.
    r = _login(client, LOGIN, "eve", "right-pass-123", REMOTE_ADDR="203.0.113.9")
    assert r.status_code == 302


def test_made_up_usernames_from_an_address_do_not_lock_real_ones_below_its_limit(
    client: Client, settings
) -> None:
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, LOGIN, f"guess{i}", "wrong", REMOTE_ADDR="198.51.100.7")
    r = _login(client, LOGIN, "eve", "right-pass-123", REMOTE_ADDR="198.51.100.7")
    assert r.status_code == 302


def test_an_address_trying_many_usernames_is_locked_at_its_own_limit(
    client: Client, settings
) -> None:
    assert settings.LOGIN_ADDRESS_FAILURE_LIMIT > settings.AXES_FAILURE_LIMIT  # the default
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = settings.AXES_FAILURE_LIMIT + 2  # fewer hashings
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    for i in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT - 1):
        _login(client, LOGIN, f"guess{i}", "wrong", REMOTE_ADDR="198.51.100.7")
    assert (
        _login(client, LOGIN, "eve", "right-pass-123", REMOTE_ADDR="198.51.100.7").status_code
        == 302
    )
    client.logout()
    for i in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT):
        _login(client, LOGIN, f"other{i}", "wrong", REMOTE_ADDR="198.51.100.8")
    r = _login(client, LOGIN, "eve", "right-pass-123", REMOTE_ADDR="198.51.100.8")
    assert r.status_code == 429
    # Another address is not concerned.
    assert (
        _login(client, LOGIN, "eve", "right-pass-123", REMOTE_ADDR="203.0.113.9").status_code == 302
    )


def test_behind_the_proxy_one_client_does_not_lock_out_another(client: Client, settings) -> None:
    """Every request comes from the proxy's address; the proxy appends the client's
    address to X-Forwarded-For (what docker-compose.yml's LOGIN_PROXY_COUNT=1 is for)."""
    settings.LOGIN_PROXY_COUNT = 1
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    proxy = {"REMOTE_ADDR": "10.0.0.2"}
    for i in range(settings.AXES_FAILURE_LIMIT):
        # A client that also forges an X-Forwarded-For entry of its own.
        _login(
            client,
            LOGIN,
            "eve",
            "wrong",
            HTTP_X_FORWARDED_FOR=f"203.0.113.{i}, 198.51.100.66",
            **proxy,
        )
    locked = _login(
        client, LOGIN, "eve", "right-pass-123", HTTP_X_FORWARDED_FOR="198.51.100.66", **proxy
    )
    assert locked.status_code == 429
    r = _login(client, LOGIN, "eve", "right-pass-123", HTTP_X_FORWARDED_FOR="192.0.2.10", **proxy)
    assert r.status_code == 302
    assert AccessAttempt.objects.filter(ip_address="198.51.100.66").exists()
    assert not AccessAttempt.objects.filter(ip_address="10.0.0.2").exists()


def test_without_a_proxy_count_the_forwarded_header_is_not_believed(
    client: Client, settings
) -> None:
    settings.LOGIN_PROXY_COUNT = 0
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    for i in range(settings.AXES_FAILURE_LIMIT):
        _login(client, LOGIN, "eve", "wrong", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")
    r = _login(client, LOGIN, "eve", "right-pass-123", HTTP_X_FORWARDED_FOR="192.0.2.10")
    assert r.status_code == 429  # all from REMOTE_ADDR: the client cannot pick its address


def test_the_admin_login_is_locked_too(client: Client, settings) -> None:
    User.objects.create_superuser(username="root", password="root-pass-123")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(client, ADMIN_LOGIN, "root", "wrong")
    r = _login(client, ADMIN_LOGIN, "root", "root-pass-123")
    assert r.status_code == 429
    assert client.get("/admin/").status_code == 302  # still not logged in


def test_the_lock_ends_after_the_cool_off(client: Client, settings) -> None:
    factories.user_create(username="eve", role="editor", password="right-pass-123")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(client, LOGIN, "eve", "wrong")
    assert _login(client, LOGIN, "eve", "right-pass-123").status_code == 429
    # the cool-off is over (the attempts are older than it)
    past = timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    AccessAttempt.objects.update(attempt_time=past)
    assert _login(client, LOGIN, "eve", "right-pass-123").status_code == 302
