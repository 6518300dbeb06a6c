"""Daily rollups and the reads of the metrics page.

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

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Count, Max, Min, Q, QuerySet
from django.utils import timezone

from ingest.core import drift
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidatePair, DailyRollup, Document, Extraction, GroupMember, Site
from reviews.models import Decision, Label

SAMPLES = 5


WITH_TEXT = {"ok", "too_short", "blocked"}


STATUSES = ("ok", "empty", "too_short", "blocked", "error")


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
