"""Every number a desk page reads from the address or a form is bounded: a huge or
malformed number gets a 4xx (or the page's default), never a 500."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from dedup_site.http import bounded_int
from tests import factories
from tests.factories import group_of

pytestmark = pytest.mark.django_db

# Past PostgreSQL's bigint; past Python's int() digit limit; a digit int() refuses
# ("²".isdigit() is true); a sign, a float, hex, spaces, a NUL.
BAD = ["9" * 30, "9" * 5000, "²", "١٢³", "-1", "1e9", "0x10", " 7 ", "1\x00"]


@pytest.fixture
def everyone(db) -> Client:
    user = factories.user_create(username="all", role="editor")
    for role in ("admin", "auditor", "adjudicator"):
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def _ok(response, what: str) -> None:
    assert response.status_code < 500, f"{what}: {response.status_code}"


def test_the_helper_bounds_and_refuses() -> None:
    assert bounded_int("12", lo=0, hi=100) == 12
    assert bounded_int("0", lo=0, hi=100) == 0
    for bad in [*BAD, "", "101", None]:
        assert bounded_int(bad, lo=0, hi=100) is None, repr(bad)
    assert bounded_int("9" * 5000, lo=0, hi=100, default=3) == 3


@pytest.mark.parametrize("bad", BAD)
def test_query_numbers_never_500(everyone, chain, bad) -> None:
    group = group_of(chain[0])
    for path, name in [
        ("/review/", "page"),
        ("/review/", "distance_min"),
        ("/review/", "distance_max"),
        ("/review/audit/", "days"),
        ("/review/approvals/", "page"),
        ("/review/calibration/", "at"),
        ("/review/calibration/sample/", "page"),
        ("/", "page"),
        (f"/review/groups/{group.pk}/", "page"),
        ("/api/v1/canonical", "after"),
        ("/review/labels/export", "since"),
    ]:
        value = f"group:{bad}" if name == "after" else bad
        _ok(everyone.get(path, {name: value}), f"GET {path}?{name}={bad!r}")


@pytest.mark.parametrize("bad", BAD)
def test_form_numbers_never_500(everyone, chain, bad) -> None:
    group = group_of(chain[0])
    g = f"/review/groups/{group.pk}"
    common = {"reason": "x", "reason_code": "other"}
    for path, data in [
        ("/review/next", {"skip_pair": bad, "skip_group": bad, "distance_min": bad}),
        ("/review/labels/undo", {"pair": bad}),
        (f"{g}/split", {**common, "document_ids": [bad], "version": bad}),
        (f"{g}/representative", {**common, "document_id": bad, "version": bad}),
        (f"{g}/merge", {**common, "other_group": bad, "version": bad}),
        (f"{g}/merge", {**common, "document_ids": bad, "version": "1"}),
        (f"{g}/accept", {**common, "version": bad}),
        ("/review/calibration/sample/new", {"per_band": bad, "seed": bad}),
        ("/review/approvals/", {"proposal_ids": [bad], "verdict": "approve", "reason": "x"}),
        (f"/review/decisions/{bad}/restore", {"reason": "x"}),
    ]:
        _ok(everyone.post(path, data), f"POST {path} {data!r}")


@pytest.mark.parametrize("bad", ["9" * 30, "9" * 5000])
def test_huge_ids_in_the_address_are_404(everyone, bad) -> None:
    for path in [
        f"/review/pairs/{bad}/",
        f"/review/groups/{bad}/",
        f"/review/documents/{bad}/source",
        f"/documents/{bad}/",
    ]:
        assert everyone.get(path).status_code == 404, path
    for path in [f"/review/pairs/{bad}/label", f"/review/pairs/{bad}/adjudicate"]:
        assert everyone.post(path, {"verdict": "duplicate"}).status_code == 404, path
