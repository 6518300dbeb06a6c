"""The Prometheus exposition: a custom collector, read on each scrape."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from ingest.core import drift
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    Document,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    RefingerprintRun,
    Site,
    TaskRun,
)
from reviews.models import Decision, Label
from reviews.operations.rollups import STATUSES

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
    # A branch's status is its SimHash being there (ok) or not (ingest 0040).
    counts = (
        Fingerprint.objects.values_list("method_id")
        .annotate(n=Count("pk"), with_main=Count("simhash"), with_full=Count("full_simhash"))
        .values_list("method_id", "n", "with_main", "with_full")
        .order_by("method_id")
    )
    for method_id, n, with_main, with_full in counts:
        for branch, ok in (("full", with_full), ("main", with_main)):
            for status, count in (
                (Fingerprint.Status.INSUFFICIENT.value, n - ok),
                (Fingerprint.Status.OK.value, ok),
            ):
                if count:
                    prints.sample(count, method=methods[method_id], branch=branch, status=status)
    active = family("dedup_method_active", "gauge", "1 for the active method, else 0.")
    for key, is_active, retired in FingerprintMethod.objects.values_list(
        "key", "is_active", "retired_at"
    ):
        active.sample(int(is_active), method=key, retired=str(bool(retired)))

    pairs = family("dedup_candidate_pairs", "gauge", "Candidate pairs by method and kind.")
    for method_id, exact, below, n in (
        CandidatePair.objects.values_list("method_id", "exact", "below_floor")
        .annotate(n=Count("id"))
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
