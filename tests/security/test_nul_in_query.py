"""A NUL (%00) in any query parameter of any list or filter view is a 400, never a 500.

PostgreSQL refuses NUL in text, so before the guard a filter that reached a query failed
with a 500 (the metrics page and five admin filters did)."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import reverse

from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

# Every query parameter each desk page reads.
DESK_PAGES = {
    "ingest:document-list": ["status", "page"],
    "ingest:batch-list": ["page"],
    "reviews:queue": ["kind", "status", "doc_type", "site", "method", "guard", "page"],
    "reviews:metrics": ["site"],
    "reviews:methods": ["doc_type", "method", "part"],
    "reviews:approvals": ["page"],
    "reviews:audit": ["days"],
    "reviews:calibration": ["doc_type", "method"],
    "reviews:calibration-sample": ["page"],
    "reviews:labels-export": ["format", "split", "since", "method", "doc_type", "bom"],
}


def _admin_changelists() -> list[tuple[str, list[str]]]:
    """Each registered model's changelist with every parameter its filters, search,
    ordering, paging and date hierarchy read."""
    rf_user = User(is_superuser=True, is_staff=True, is_active=True)
    out = []
    for model, model_admin in admin.site._registry.items():
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        params = {"q", "o", "p", "_facets"}
        request = RequestFactory().get(url)
        request.user = rf_user
        changelist = model_admin.get_changelist_instance(request)
        for spec in changelist.filter_specs:
            params.update(p for p in spec.expected_parameters() if p)
        if model_admin.date_hierarchy:
            field = model_admin.date_hierarchy
            params.update(f"{field}__{part}" for part in ("year", "month", "day"))
        out.append((url, sorted(params)))
    return out


@pytest.fixture
def superuser(db) -> User:
    return User.objects.create_superuser(username="root", password="pw-root-123")


@pytest.fixture
def client() -> Client:
    """A 500 is a status to report here, not an exception to raise."""
    return Client(raise_request_exception=False)


def test_every_admin_changelist_answers_400_to_a_nul_in_each_parameter(
    client: Client, superuser: User
) -> None:
    client.force_login(superuser)
    tried, failures = 0, []
    for url, params in _admin_changelists():
        for param in params:
            r = client.get(f"{url}?{param}=a%00b")
            tried += 1
            if r.status_code != 400:
                failures.append((url, param, r.status_code))
    assert tried > 50
    assert failures == []


def test_every_desk_page_answers_400_to_a_nul_in_each_parameter(
    client: Client, superuser: User
) -> None:
    client.force_login(superuser)
    failures: list[tuple[str, str, int | str]] = []
    for name, params in DESK_PAGES.items():
        url = reverse(name)
        for param in params:
            r = client.get(f"{url}?{param}=%00")
            if r.status_code != 400:
                failures.append((name, param, r.status_code))
        # a NUL in a parameter's name counts as well
        if client.get(f"{url}?a%00b=1").status_code != 400:
            failures.append((name, "<name>", "not 400"))
    assert failures == []


def test_the_api_and_prometheus_answer_400_too(client: Client, superuser: User) -> None:
    token = factories.api_token_create(user=superuser)
    auth = {"Authorization": f"Bearer {token}"}
    r = client.get("/api/v1/canonical?after=%00", headers=auth)
    assert r.status_code == 400
    assert client.get("/metrics?x=%00").status_code == 400


def test_query_strings_without_nul_still_work(client: Client, superuser: User) -> None:
    client.force_login(superuser)
    assert client.get(reverse("reviews:metrics") + "?site=nowhere.example").status_code == 200
    assert client.get("/admin/reviews/decision/?q=%2500").status_code == 200
