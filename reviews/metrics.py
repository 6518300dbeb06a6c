"""Daily rollups, drift alerts over them, task durations and the Prometheus exposition.

Rollups (one row per day and site, plus an all-sites row with site = None):

- a document counts on the day it was *fetched* (its crawl date), under the current
  extractor version; token quantiles are over the main-text tokens of the documents
  with text (status ok, too_short or blocked);
- pairs, groups, labels and decisions count on the day they were *made*; a pair counts
  for the site of each of its documents (once in the all-sites row); "exact hits" are
  exact pairs, "near candidates" the other pairs above the similarity floor;
- the largest new group is the largest group (any method, not dissolved) that got a
  member that day, measured by its members added up to the day's end.

Recomputing a day replaces its rows with identical values (update_or_create), so the
beat task may run as often as wanted.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from celery.signals import task_postrun, task_prerun
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Count, Max, Min, Q, QuerySet
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from ingest.core import drift
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    DailyRollup,
    Document,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    GroupMember,
    RefingerprintRun,
    Site,
    TaskRun,
)
from reviews.models import Decision, Label

log = logging.getLogger(__name__)

SAMPLES = 5
WITH_TEXT = {"ok", "too_short", "blocked"}
STATUSES = ("ok", "empty", "too_short", "blocked", "error")
# Tasks whose durations /metrics reports.
TIMED_TASKS = frozenset(
    {
        "ingest.tasks.documents_process",
        "ingest.tasks.candidates_find",
        "reviews.tasks.refingerprint_run",
        "reviews.tasks.rollup_metrics",
    }
)


def _bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start, start + timedelta(days=1)


class _Acc:
    """One rollup row being counted."""

    def __init__(self) -> None:
        self.documents = 0
        self.statuses: Counter[str] = Counter()
        self.tokens: list[int] = []
        self.samples: dict[str, list[int]] = defaultdict(list)
        self.exact = 0
        self.near = 0
        self.labels = 0
        self.merges = 0
        self.restores = 0
        self.group_size = 0
        self.group_id: int | None = None

    def sample(self, key: str, document_id: int) -> None:
        if len(self.samples[key]) < SAMPLES:
            self.samples[key].append(document_id)


def rollup_day(*, day: date) -> list[DailyRollup]:
    """Compute and store the day's rollups (every site with activity, and all sites)."""
    start, end = _bounds(day)
    accs: dict[int | None, _Acc] = defaultdict(_Acc)
    overall = accs[None]

    docs = (
        Document.objects.filter(fetched_at__gte=start, fetched_at__lt=end)
        .order_by("pk")
        .values_list("pk", "site_id")
    )
    site_of: dict[int, int] = {}
    for pk, site_id in docs.iterator(chunk_size=5000):
        site_of[pk] = site_id
        for acc in (accs[site_id], overall):
            acc.documents += 1
    extractions = (
        Extraction.objects.filter(
            extractor_version=EXTRACTOR_VERSION,
            document__fetched_at__gte=start,
            document__fetched_at__lt=end,
        )
        .order_by("document_id")
        .values_list("document_id", "status", "main_tokens")
    )
    for document_id, status, tokens in extractions.iterator(chunk_size=5000):
        for acc in (accs[site_of[document_id]], overall):
            acc.statuses[status] += 1
            acc.sample(status, document_id)
            if status in WITH_TEXT:
                acc.tokens.append(tokens)
                acc.sample("text", document_id)

    def sites_of(ids: tuple[int, ...]) -> set[int]:
        missing = [i for i in ids if i not in site_of]
        if missing:
            site_of.update(Document.objects.filter(pk__in=missing).values_list("pk", "site_id"))
        return {site_of[i] for i in ids if i in site_of}

    made = Q(created_at__gte=start, created_at__lt=end)
    pairs = list(
        CandidatePair.objects.filter(made).values_list("a_id", "b_id", "exact", "below_floor")
    )
    sites_of(tuple({d for a, b, _, _ in pairs for d in (a, b)}))  # one query for all
    for a, b, exact, below in pairs:
        ids_all = (a, b)
        for key in (*sites_of(ids_all), None):
            if exact:
                accs[key].exact += 1
            elif not below:
                accs[key].near += 1
    for a, b in Label.objects.filter(made, retraction=False).values_list(
        "pair__a_id", "pair__b_id"
    ):
        ids_all = (a, b)
        for key in (*sites_of(ids_all), None):
            accs[key].labels += 1
    merge_actions = (Decision.Action.MERGE, Decision.Action.AUTO_MERGE, Decision.Action.ACCEPT)
    for action, ids in Decision.objects.filter(
        made, action__in=(*merge_actions, Decision.Action.RESTORE)
    ).values_list("action", "document_ids"):
        decided = tuple(int(i) for i in ids or ())
        for key in (*sites_of(decided), None):
            if action in merge_actions:
                accs[key].merges += 1
            else:
                accs[key].restores += 1

    grown = set(
        GroupMember.objects.filter(made, group__dissolved=False).values_list("group_id", flat=True)
    )
    if grown:
        sizes = dict(
            GroupMember.objects.filter(group_id__in=grown, created_at__lt=end)
            .values_list("group_id")
            .annotate(n=Count("pk"))
            .values_list("group_id", "n")
        )
        members: dict[int, list[int]] = defaultdict(list)
        for gid, document_id in (
            GroupMember.objects.filter(group_id__in=grown, created_at__lt=end)
            .order_by("group_id", "document_id")
            .values_list("group_id", "document_id")
        ):
            members[gid].append(document_id)
        for gid in sorted(grown):
            group_ids = tuple(members[gid])
            for key in (*sites_of(group_ids), None):
                acc = accs[key]
                if sizes.get(gid, 0) > acc.group_size:
                    acc.group_size, acc.group_id = sizes[gid], gid
                    acc.samples["group"] = members[gid][:SAMPLES]

    now = timezone.now()
    rows = []
    for site_key, acc in sorted(accs.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
        p10, p50, p90 = drift.quantiles(acc.tokens)
        row, _ = DailyRollup.objects.update_or_create(
            day=day,
            # site_key None is the all-sites row (site IS NULL).
            site_id=site_key,  # type: ignore[misc]
            defaults={
                "documents": acc.documents,
                **{f"status_{s}": acc.statuses.get(s, 0) for s in STATUSES},
                "tokens_p10": p10,
                "tokens_p50": p50,
                "tokens_p90": p90,
                "exact_hits": acc.exact,
                "near_candidates": acc.near,
                "labels": acc.labels,
                "merges": acc.merges,
                "restores": acc.restores,
                "largest_new_group": acc.group_size,
                "largest_new_group_id": acc.group_id,
                "samples": {k: v for k, v in sorted(acc.samples.items())},
                "computed_at": now,
            },
        )
        rows.append(row)
    # A site whose documents all moved away (none today) keeps no stale row.
    DailyRollup.objects.filter(day=day, site__isnull=False).exclude(
        site_id__in=[k for k in accs if k is not None]
    ).delete()
    return rows


def rollups_compute(*, days: Iterable[date]) -> int:
    """Recompute each day; returns the number of rows written."""
    return sum(len(rollup_day(day=d)) for d in days)


def crawled_days() -> list[date]:
    """Every day from the first to the last fetch date of the stored documents (UTC)."""
    span = Document.objects.aggregate(first=Min("fetched_at"), last=Max("fetched_at"))
    if span["first"] is None:
        return []
    first, last = span["first"].astimezone(UTC).date(), span["last"].astimezone(UTC).date()
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def recent_days(n: int, *, today: date | None = None) -> list[date]:
    today = today or timezone.now().date()
    return [today - timedelta(days=i) for i in range(n - 1, -1, -1)]


def task_runs_prune() -> int:
    cutoff = timezone.now() - timedelta(days=settings.METRICS_TASK_RUN_DAYS)
    return TaskRun.objects.filter(finished_at__lt=cutoff).delete()[0]


# --- drift alerts -----------------------------------------------------------------------


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


# --- task durations ---------------------------------------------------------------------

_started: dict[str, float] = {}


def task_started(task_id: str | None = None, task: object = None, **_: object) -> None:
    if task_id and getattr(task, "name", "") in TIMED_TASKS:
        _started[task_id] = time.perf_counter()


def task_finished(
    task_id: str | None = None, task: object = None, state: str | None = None, **_: object
) -> None:
    """Record the duration; never lets bookkeeping break the task or hide its error."""
    began = _started.pop(task_id or "", None)
    if began is None:
        return
    duration = time.perf_counter() - began
    if connection.in_atomic_block and connection.needs_rollback:
        return
    try:
        TaskRun.objects.create(
            task=getattr(task, "name", ""),
            duration=duration,
            state=state or "",
            finished_at=timezone.now(),
        )
    except DatabaseError:
        log.warning("could not record the duration of %s", getattr(task, "name", ""))


def signals_connect() -> None:
    task_prerun.connect(task_started, weak=False, dispatch_uid="dedup-task-started")
    task_postrun.connect(task_finished, weak=False, dispatch_uid="dedup-task-finished")


# --- reads for the metrics page ---------------------------------------------------------


# How a crawl-quality finding reads: "12 login walls on news.example.com".
_QUALITY_WORDS = {
    "login_wall": ("login wall", "login walls"),
    "paywall": ("paywall", "paywalls"),
    "bot_challenge": ("captcha or bot challenge", "captchas or bot challenges"),
    "access_denied": ("access-denied page", "access-denied pages"),
    "rate_limited": ("rate-limited page", "rate-limited pages"),
    "nav_shell": ("navigation-only shell", "navigation-only shells"),
    "empty": ("page with no main text", "pages with no main text"),
    "too_short": ("page with too little text", "pages with too little text"),
}


@dataclass(frozen=True)
class CrawlSignal:
    """Pages of one site that are a crawl problem, not content, of one kind."""

    host: str
    kind: str  # an Extraction.Quality, or the status empty / too_short
    pages: int
    sample_ids: list[int]

    @property
    def sentence(self) -> str:
        one, many = _QUALITY_WORDS.get(self.kind, (self.kind, self.kind))
        return f"{self.pages} {one if self.pages == 1 else many} on {self.host}"


def crawl_signals(*, site: Site | None = None, limit: int = 20) -> list[CrawlSignal]:
    """Login walls, captchas, access-denied pages, navigation-only shells and pages
    without text under the current extractor, counted by site and kind, largest first:
    a large cluster of login pages is a crawl problem, not many copies."""
    rows = Extraction.objects.filter(
        extractor_version=EXTRACTOR_VERSION,
        status__in=("blocked", "empty", "too_short"),
    )
    if site is not None:
        rows = rows.filter(document__site=site)
    counted = list(
        rows.values("document__site__host", "status", "quality")
        .annotate(n=Count("pk"))
        .order_by("-n", "document__site__host", "status", "quality")[:limit]
    )
    signals: list[CrawlSignal] = []
    for r in counted:
        kind = r["quality"] or r["status"]
        samples = list(
            rows.filter(
                document__site__host=r["document__site__host"],
                status=r["status"],
                quality=r["quality"],
            )
            .order_by("document_id")
            .values_list("document_id", flat=True)[:SAMPLES]
        )
        signals.append(CrawlSignal(r["document__site__host"], kind, r["n"], samples))
    return signals


def site_find(*, host: str) -> Site | None:
    return Site.objects.filter(host=host).first() if host else None


def sites_with_rollups() -> QuerySet[Site]:
    return Site.objects.filter(rollups__isnull=False).distinct().order_by("host")


def rollup_last_day() -> date | None:
    day: date | None = DailyRollup.objects.aggregate(day=Max("day"))["day"]
    return day


def rollups_by_day(*, site: Site | None, first: date, last: date) -> dict[date, DailyRollup]:
    """The rollups of one site (or the all-sites rows, site None) between two days."""
    rows = {
        r.day: r
        for r in DailyRollup.objects.filter(
            site=site, day__gte=first, day__lte=last
        ).select_related("site")
    }
    if site is None:
        rows = {d: r for d, r in rows.items() if r.site_id is None}
    return rows


def rollups_computed_at() -> datetime | None:
    return (
        DailyRollup.objects.order_by("-computed_at").values_list("computed_at", flat=True).first()
    )


# --- Prometheus exposition: a custom collector, read on each scrape ----------------------

# The text format prometheus_client writes (0.0.4, as every Prometheus server reads it).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Family:
    """One metric family, its samples added with keyword labels."""

    def __init__(self, name: str, kind: str, help_text: str) -> None:
        self.metric = Metric(
            name.removesuffix("_total") if kind == "counter" else name, help_text, kind
        )
        self.name = name

    def sample(self, value: float, suffix: str = "", **labels: str) -> None:
        self.metric.add_sample(self.name + suffix, {k: str(v) for k, v in labels.items()}, value)


class DeskCollector(Collector):
    """Counts and task durations from the database, every family with HELP and TYPE."""

    def collect(self) -> Iterator[Metric]:
        families = _families()
        for family in families:
            yield family.metric


def prometheus_text() -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DeskCollector())
    return generate_latest(registry).decode("utf-8")


def _families() -> list[_Family]:
    out: list[_Family] = []

    def family(name: str, kind: str, help_text: str) -> _Family:
        out.append(_Family(name, kind, help_text))
        return out[-1]

    documents = family(
        "dedup_documents", "gauge", "Documents by extraction status (current extractor)."
    )
    total = Document.objects.count()
    by_status = dict(
        Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    for status in STATUSES:
        documents.sample(by_status.get(status, 0), status=status)
    documents.sample(max(total - sum(by_status.values()), 0), status="unprocessed")

    methods = dict(FingerprintMethod.objects.values_list("pk", "key"))
    prints = family("dedup_fingerprints", "gauge", "Fingerprints by method, branch and status.")
    for method_id, branch, status, n in (
        Fingerprint.objects.values_list("method_id", "branch", "status")
        .annotate(n=Count("pk"))
        .values_list("method_id", "branch", "status", "n")
        .order_by("method_id", "branch", "status")
    ):
        prints.sample(n, method=methods[method_id], branch=branch, status=status)
    active = family("dedup_method_active", "gauge", "1 for the active method, else 0.")
    for key, is_active, retired in FingerprintMethod.objects.values_list(
        "key", "is_active", "retired_at"
    ):
        active.sample(int(is_active), method=key, retired=str(bool(retired)))

    pairs = family("dedup_candidate_pairs", "gauge", "Candidate pairs by method and kind.")
    for method_id, exact, below, n in (
        CandidatePair.objects.values_list("method_id", "exact", "below_floor")
        .annotate(n=Count("pk"))
        .values_list("method_id", "exact", "below_floor", "n")
        .order_by("method_id", "exact", "below_floor")
    ):
        kind = "exact" if exact else ("below_floor" if below else "near")
        pairs.sample(n, method=methods[method_id], kind=kind)
    groups = family("dedup_candidate_groups", "gauge", "Current (not dissolved) groups by method.")
    for method_id, n in (
        CandidateGroup.objects.filter(dissolved=False)
        .values_list("method_id")
        .annotate(n=Count("pk"))
        .values_list("method_id", "n")
        .order_by("method_id")
    ):
        groups.sample(n, method=methods[method_id])

    labels = family("dedup_labels_total", "counter", "Labels given (append-only), by verdict.")
    for verdict, n in (
        Label.objects.filter(retraction=False)
        .values_list("verdict")
        .annotate(n=Count("pk"))
        .values_list("verdict", "n")
        .order_by("verdict")
    ):
        labels.sample(n, verdict=verdict)
    decisions = family("dedup_decisions_total", "counter", "Decisions on the log, by action.")
    for action, n in (
        Decision.objects.values_list("action")
        .annotate(n=Count("pk"))
        .values_list("action", "n")
        .order_by("action")
    ):
        decisions.sample(n, action=action)

    progress = family(
        "dedup_refingerprint_progress", "gauge", "Done share of the latest run per method."
    )
    seen: set[tuple[int, str]] = set()
    for run in RefingerprintRun.objects.order_by("-id"):
        if (run.method_id, run.kind) in seen:
            continue
        seen.add((run.method_id, run.kind))
        progress.sample(run.percent / 100.0, method=methods[run.method_id], kind=run.kind)

    tasks = family(
        "dedup_task_duration_seconds",
        "summary",
        f"Task durations over the last {settings.METRICS_TASK_RUN_DAYS} days.",
    )
    durations: dict[str, list[float]] = defaultdict(list)
    for task, duration in TaskRun.objects.order_by("task", "id").values_list("task", "duration"):
        durations[task].append(duration)
    for task, values in sorted(durations.items()):
        for q in (0.5, 0.9, 0.99):
            tasks.sample(drift.quantile(values, q) or 0.0, task=task, quantile=str(q))
        tasks.sample(sum(values), "_sum", task=task)
        tasks.sample(len(values), "_count", task=task)
    family("dedup_sites", "gauge", "Sites seen.").sample(Site.objects.count())
    return out
