"""Drift alerts end to end: crawls through the real pipeline, rollups, the rules of
ingest/core/drift.py on the stored rows."""

import io
from datetime import UTC, date, datetime, timedelta

import pytest

from ingest import candidates, services
from ingest.core import drift
from ingest.core.readers import read_warc
from ingest.models import DailyRollup
from reviews.operations import drift_alerts, rollups
from tests import factories

START = date(2026, 5, 1)
PAGES = 6


@pytest.fixture(autouse=True)
def _small_thresholds(settings) -> None:
    settings.DRIFT_MIN_DOCUMENTS = 5
    settings.DRIFT_ALERT_DAYS = 1


def crawl(committed, day: date, site: str, pages: list[str]) -> None:
    when = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
    data = factories.warc_bytes(
        [(f"https://{site}/{day:%m%d}/{i}", p.encode()) for i, p in enumerate(pages)], date=when
    )
    with committed():
        services.batch_ingest(source=f"{site}-{day}", fmt="warc", items=read_warc(io.BytesIO(data)))


def normal(seed: int, words: int = 200) -> str:
    return factories.article_html(f"Story {seed}", factories.article_text(seed, words=words))


def week_then(committed, changed: list[str]) -> date:
    """Seven normal days on two sites, then a day where a.example serves `changed`."""
    seed = 0
    for offset in range(8):
        day = START + timedelta(days=offset)
        for site in ("a.example", "b.example"):
            if site == "a.example" and offset == 7:
                pages = changed
            else:
                pages = [normal(seed := seed + 1) for _ in range(PAGES)]
            crawl(committed, day, site, pages)
        rollups.rollup_day(day=day)
    return START + timedelta(days=7)


@pytest.mark.django_db
def test_template_change_on_one_site_raises_a_token_shift_alert_for_it_only(committed) -> None:
    changed = [normal(1000 + i, words=900) for i in range(PAGES)]  # a much longer main text
    day = week_then(committed, changed)
    alerts = drift_alerts.alerts(today=day)
    assert [(a.site, a.kind) for a in alerts] == [("a.example", drift.TOKEN_SHIFT)]
    alert = alerts[0]
    assert alert.value > 3 * alert.baseline  # type: ignore[operator]
    assert len(alert.sample_ids) == 5
    site_rows = DailyRollup.objects.filter(day=day, site__host="a.example").get()
    assert set(alert.sample_ids) <= set(site_rows.samples["text"])


@pytest.mark.django_db
def test_mostly_empty_extraction_on_one_site_raises_an_empty_share_alert(committed) -> None:
    nav_only = (
        "<html><body><nav><ul><li><a href='/a'>Home</a></li><li><a href='/b'>News</a></li>"
        "</ul></nav></body></html>"
    )
    changed = [nav_only.replace("Home", f"Home {i}") for i in range(PAGES - 1)] + [normal(999)]
    day = week_then(committed, changed)
    row = DailyRollup.objects.get(day=day, site__host="a.example")
    assert row.status_empty >= PAGES - 1
    alerts = drift_alerts.alerts(today=day)
    kinds = {(a.site, a.kind) for a in alerts}
    assert ("a.example", drift.EMPTY_SHARE) in kinds
    assert not any(site == "b.example" for site, _ in kinds)
    empty = next(a for a in alerts if a.kind == drift.EMPTY_SHARE)
    assert empty.sample_ids and set(empty.sample_ids) <= set(row.samples["empty"])


@pytest.mark.django_db
def test_a_sudden_large_group_raises_an_alert_linking_to_the_group(settings) -> None:
    settings.DRIFT_LARGE_GROUP = 12
    wall = "Please sign in to continue reading this page with your account password"
    docs = [
        factories.indexed_document(
            url=f"https://news{i % 3}.example/story/{i}",
            text=wall,
            simhash=0xABCDEF0123456789,
            site=f"news{i % 3}.example",
        )
        for i in range(15)
    ]
    candidates.candidates_find(document_ids=[d.pk for d in docs])
    today = datetime.now(UTC).date()
    rollups.rollup_day(day=today)
    overall = DailyRollup.objects.get(day=today, site__isnull=True)
    assert overall.largest_new_group == 15
    (alert,) = [a for a in drift_alerts.alerts(today=today) if a.kind == drift.LARGE_GROUP]
    assert alert.group_id == overall.largest_new_group_id
    assert alert.site == "" and len(alert.sample_ids) == 5
    # Per-site rows carry the group too, but the alert is raised once.
    assert DailyRollup.objects.get(day=today, site__host="news0.example").largest_new_group == 15


@pytest.mark.django_db
def test_a_small_group_raises_no_alert(settings) -> None:
    settings.DRIFT_LARGE_GROUP = 50
    docs = [
        factories.indexed_document(
            url=f"https://x.example/{i}", text="same words here ok", simhash=7
        )
        for i in range(3)
    ]
    candidates.candidates_find(document_ids=[d.pk for d in docs])
    today = datetime.now(UTC).date()
    rollups.rollup_day(day=today)
    assert drift_alerts.alerts(today=today) == []
