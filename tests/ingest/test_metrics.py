"""Daily rollups (idempotent), the metrics page and GET /metrics (Prometheus)."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from ingest import candidates, services
from ingest.models import DailyRollup, Extraction, TaskRun
from reviews.models import Label
from reviews.operations import exposition, rollups
from tests import factories

# Prometheus text exposition format 0.0.4, one sample line.
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\\\|\\"|\\n)*"'
LABELS = (
    rf"\{{(?:[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE})(?:,[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE})*\}}"
)
VALUE = r"(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)"
SAMPLE = re.compile(rf"^({NAME})({LABELS})? {VALUE}(?: -?\d+)?$")
COMMENT = re.compile(
    rf"^# (?:HELP {NAME} .*|TYPE ({NAME}) (counter|gauge|histogram|summary|untyped))$"
)
DAY = datetime(2026, 5, 1, tzinfo=UTC)


def populated() -> list:
    """Two sites: a pair with a label on a.example, and one empty page on b.example."""
    text = factories.article_text(3, words=80)
    a = factories.indexed_document(
        url="https://a.example/1", text=text, simhash=1, site="a.example", fetched_at=DAY
    )
    b = factories.indexed_document(
        url="https://a.example/2", text=text, simhash=3, site="a.example", fetched_at=DAY
    )
    c = factories.indexed_document(
        url="https://b.example/1", text="x", simhash=99 << 40, site="b.example", fetched_at=DAY
    )
    Extraction.objects.filter(document=c).update(status="empty", main_tokens=0)
    candidates.candidates_find(document_ids=[a.pk, b.pk, c.pk])
    return [a, b, c]


def values(row: DailyRollup) -> dict[str, object]:
    return {
        f.attname: getattr(row, f.attname)
        for f in row._meta.concrete_fields
        if f.name not in ("id", "computed_at")
    }


@pytest.mark.django_db
def test_rollup_per_site_and_overall(editor) -> None:
    _, _, empty = populated()
    pair = candidates.CandidatePair.objects.get()
    Label.objects.create(
        pair=pair,
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="x",
        region="body",
        method_key=pair.method.key,
        extractor_version="v",
    )
    rollups.rollup_day(day=DAY.date())
    overall = DailyRollup.objects.get(day=DAY.date(), site__isnull=True)
    site_a = DailyRollup.objects.get(day=DAY.date(), site__host="a.example")
    site_b = DailyRollup.objects.get(day=DAY.date(), site__host="b.example")
    assert (overall.documents, overall.status_ok, overall.status_empty) == (3, 2, 1)
    assert (site_a.documents, site_b.documents, site_b.status_empty) == (2, 1, 1)
    assert site_a.tokens_p50 == 80 and site_b.tokens_p50 is None
    assert site_b.samples["empty"] == [empty.pk]
    # Pairs and labels were made today, not on the crawl day.
    today = datetime.now(UTC).date()
    rollups.rollup_day(day=today)
    now = DailyRollup.objects.get(day=today, site__isnull=True)
    assert now.documents == 0
    assert now.exact_hits + now.near_candidates == 1 and now.labels == 1
    assert DailyRollup.objects.get(day=today, site__host="a.example").labels == 1
    assert now.largest_new_group == 2


@pytest.mark.django_db
def test_recomputing_a_day_gives_identical_rows() -> None:
    populated()
    rollups.rollup_day(day=DAY.date())
    first = {r.site_id: values(r) for r in DailyRollup.objects.all()}
    rollups.rollup_day(day=DAY.date())
    rollups.rollup_day(day=DAY.date())
    again = {r.site_id: values(r) for r in DailyRollup.objects.all()}
    assert first == again and len(again) == 3


@pytest.mark.django_db
def test_rollup_command_and_beat_task() -> None:
    populated()
    call_command("rollup_metrics", "--day", "2026-05-02", "--days", "3")
    assert DailyRollup.objects.filter(day=DAY.date(), site__isnull=True).exists()
    assert DailyRollup.objects.filter(day=DAY.date() - timedelta(days=1)).count() == 1
    from django.conf import settings

    from reviews.tasks import rollup_metrics

    assert "rollup-metrics" in settings.CELERY_BEAT_SCHEDULE
    rollup_metrics.delay(2)
    assert DailyRollup.objects.filter(day=datetime.now(UTC).date()).exists()


@pytest.mark.django_db
def test_task_durations_are_recorded(committed) -> None:
    import io

    from ingest.core.readers import read_warc

    page = factories.article_html("T", factories.article_text(5))
    data = factories.warc_bytes([("https://t.example/1", page.encode())])
    with committed():
        services.batch_ingest(source="t", fmt="warc", items=read_warc(io.BytesIO(data)))
    tasks = set(TaskRun.objects.values_list("task", flat=True))
    assert "ingest.tasks.documents_process" in tasks
    assert all(d >= 0 for d in TaskRun.objects.values_list("duration", flat=True))


def parse(text: str) -> dict[str, str]:
    types: dict[str, str] = {}
    assert text.endswith("\n")
    for line in text.splitlines():
        m = COMMENT.match(line)
        if m:
            if m.group(1):
                types[m.group(1)] = m.group(2)
            continue
        sample = SAMPLE.match(line)
        assert sample, f"not a sample line: {line!r}"
        name = sample.group(1)
        family = re.sub(r"_(sum|count)$", "", name) if name not in types else name
        assert family in types, f"{name} has no TYPE"
    return types


@pytest.mark.django_db
def test_prometheus_exposition_is_well_formed(client, committed, settings) -> None:
    settings.METRICS_ALLOWED_IPS = ["127.0.0.1"]  # the test client's address
    populated()
    TaskRun.objects.create(task='weird"task\\name\n', duration=0.25, finished_at=DAY)
    TaskRun.objects.create(task="ingest.tasks.candidates_find", duration=1.5, finished_at=DAY)
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r["Content-Type"].startswith("text/plain; version=0.0.4")
    text = r.content.decode()
    types = parse(text)
    assert types["dedup_decisions_total"] == "counter"
    assert types["dedup_task_duration_seconds"] == "summary"
    assert 'dedup_documents{status="ok"} 2' in text
    assert 'dedup_documents{status="empty"} 1' in text
    assert 'dedup_task_duration_seconds_count{task="ingest.tasks.candidates_find"} 1' in text
    assert r'task="weird\"task\\name\n"' in text
    assert re.search(
        r'dedup_fingerprints\{branch="main",method="simhash64-mixedscript-sha256-v1@trafilatura-2-doctype-v3",'
        r'status="ok"\} 3',
        text,
    )


@pytest.mark.django_db
def test_label_values_are_escaped() -> None:
    TaskRun.objects.create(task='a"b\\c\nd', duration=1.0, finished_at=DAY)
    assert 'task="a\\"b\\\\c\\nd"' in exposition.prometheus_text()


@pytest.mark.django_db
def test_prometheus_token(client, settings) -> None:
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer s3cret"}).status_code == 200


@pytest.mark.django_db
def test_metrics_page_needs_a_desk_role(client) -> None:
    r = client.get("/review/metrics/")
    assert r.status_code == 302
    client.force_login(factories.user_create(username="nobody"))
    assert client.get("/review/metrics/").status_code == 403


@pytest.mark.django_db
def test_metrics_page_shows_charts_and_alerts(client, settings) -> None:
    settings.DRIFT_LARGE_GROUP = 2
    populated()
    rollups.rollup_day(day=datetime.now(UTC).date())
    client.force_login(factories.user_create(username="aud", role="auditor"))
    r = client.get("/review/metrics/")
    assert r.status_code == 200
    html = r.content.decode()
    assert html.count("<svg") == 3
    assert "large_group" in html
    assert "/documents/" in html  # samples link to document pages
    assert "style=" not in html and "<script>" not in html
    assert client.get("/review/metrics/?site=a.example").status_code == 200
