"""Drift alerts over the daily rollups (the rules are in ingest.core.drift; the
thresholds come from the settings)."""

from __future__ import annotations

from datetime import date, timedelta

from django.conf import settings
from django.utils import timezone

from ingest.core import drift
from ingest.models import DailyRollup


def thresholds() -> drift.Thresholds:
    return drift.Thresholds(
        large_group=settings.DRIFT_LARGE_GROUP,
        share_jump=settings.DRIFT_SHARE_JUMP,
        share_ratio=settings.DRIFT_SHARE_RATIO,
        min_documents=settings.DRIFT_MIN_DOCUMENTS,
        token_shift=settings.DRIFT_TOKEN_SHIFT,
        baseline_days=settings.DRIFT_BASELINE_DAYS,
        min_baseline_days=settings.DRIFT_MIN_BASELINE_DAYS,
    )


def day_stats(row: DailyRollup) -> drift.DayStats:
    return drift.DayStats(
        day=row.day,
        site=row.site.host if row.site else "",
        documents=row.documents,
        empty=row.status_empty,
        blocked=row.status_blocked,
        with_text=row.status_ok + row.status_too_short + row.status_blocked,
        p10=row.tokens_p10,
        p50=row.tokens_p50,
        p90=row.tokens_p90,
        largest_group=row.largest_new_group,
        largest_group_id=row.largest_new_group_id,
        samples={k: [int(i) for i in v] for k, v in (row.samples or {}).items()},
    )


def alerts(*, days: int | None = None, today: date | None = None) -> list[drift.Alert]:
    """Alerts of the last ``days`` days (DRIFT_ALERT_DAYS), from the stored rollups."""
    t = thresholds()
    days = days or settings.DRIFT_ALERT_DAYS
    today = today or timezone.now().date()
    since = today - timedelta(days=days - 1)
    rows = DailyRollup.objects.filter(
        day__gte=since - timedelta(days=t.baseline_days), day__lte=today
    ).select_related("site")
    return drift.alerts_over([day_stats(r) for r in rows], since=since, t=t)
