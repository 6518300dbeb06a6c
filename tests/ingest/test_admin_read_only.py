"""Crawl and derived records are read-only in the admin, even for a superuser; a site's
priority changes only through a recorded SitePriorityChange."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from ingest.models import CrawlBatch, Extraction, Fingerprint, Site, SitePriorityChange
from ingest.sites import SitePriorityError, site_priority_set
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_() -> Client:
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def document():
    return factories.indexed_document(
        url="https://s.example.com/a",
        text=factories.article_text(1),
        simhash=12,
        site="s.example.com",
        priority=5,
    )


def test_a_documents_page_shows_its_extractions_and_fingerprints_read_only(
    admin_client_: Client, document
) -> None:
    """Keyed by their document (a composite primary key, which the admin cannot list),
    extractions and fingerprints are shown on the document's page, not edited anywhere."""
    fp = Fingerprint.objects.filter(document=document).get()
    extraction = Extraction.objects.get(document=document)
    page = admin_client_.get(f"/admin/ingest/document/{document.pk}/change/")
    assert page.status_code == 200  # viewing is fine
    assert b'name="_save"' not in page.content
    assert fp.hex.encode() in page.content
    assert extraction.extractor_version.encode() in page.content
    for model in ("fingerprint", "extraction"):
        assert admin_client_.get(f"/admin/ingest/{model}/").status_code == 404
        assert admin_client_.get(f"/admin/ingest/{model}/add/").status_code == 404


@pytest.mark.parametrize(
    "model",
    [
        "document",
        "crawlbatch",
        "site",
    ],
)
def test_crawl_and_derived_records_have_no_add_change_or_delete(
    admin_client_: Client, document, model: str
) -> None:
    CrawlBatch.objects.create(format="warc", source="x.warc")
    pk = {
        "document": document.pk,
        "crawlbatch": CrawlBatch.objects.get().pk,
        "site": document.site_id,
    }[model]
    assert admin_client_.get(f"/admin/ingest/{model}/add/").status_code == 403
    assert admin_client_.post(f"/admin/ingest/{model}/{pk}/change/", {}).status_code == 403
    assert admin_client_.post(
        f"/admin/ingest/{model}/{pk}/delete/", {"post": "yes"}
    ).status_code in (403,)


def test_a_site_priority_change_through_the_admin_is_recorded(
    admin_client_: Client, document
) -> None:
    site = Site.objects.get(pk=document.site_id)
    response = admin_client_.post(
        "/admin/ingest/siteprioritychange/add/",
        {"site": site.pk, "priority_after": 9, "reason": "the publisher's own site"},
    )
    assert response.status_code == 302, response.content[:2000]
    site.refresh_from_db()
    assert site.priority == 9
    change = SitePriorityChange.objects.get()
    assert (change.priority_before, change.priority_after) == (5, 9)
    assert change.actor == "person:root"
    assert change.reason == "the publisher's own site"
    url = f"/admin/ingest/siteprioritychange/{change.pk}"
    assert admin_client_.post(f"{url}/change/", {"reason": "rewritten"}).status_code == 403
    assert admin_client_.post(f"{url}/delete/", {"post": "yes"}).status_code == 403


def test_the_service_requires_a_reason_and_keeps_every_change(document) -> None:
    site = Site.objects.get(pk=document.site_id)
    with pytest.raises(SitePriorityError):
        site_priority_set(site=site, priority=1, actor="person:a", reason="  ")
    site_priority_set(site=site, priority=1, actor="person:a", reason="first")
    site_priority_set(site=site, priority=3, actor="person:b", reason="second")
    rows = list(
        SitePriorityChange.objects.order_by("id").values_list("priority_before", "priority_after")
    )
    assert rows == [(5, 1), (1, 3)]
    assert Site.objects.get(pk=site.pk).priority == 3


def test_the_site_priority_command_records_the_change(document) -> None:
    factories.user_create(username="ed", role="editor")
    call_command("site_priority", "s.example.com", "7", "--reason", "primary source", "--by", "ed")
    change = SitePriorityChange.objects.get()
    assert (change.priority_after, change.actor) == (7, "person:ed")
    with pytest.raises(CommandError):
        call_command("site_priority", "s.example.com", "1", "--reason", "x", "--by", "nobody")
