"""Drift rules over daily rollups: quantiles, a site's own baseline, and the alerts.

Pure: no Django. Data quality drifts before deduplication does (a template change, an
extractor keeping menus, a login wall at a thousand URLs); the rules here turn one day's
figures and the site's previous days into plain alerts. The rules:

- **Quantiles** are linear interpolation between order statistics (numpy's default,
  "type 7"): ``q`` of ``n`` sorted values is at position ``q × (n − 1)``. No values: None.
- **Baseline** of a site for day D: its rollups of the ``baseline_days`` days before D
  that have documents; fewer than ``min_baseline_days`` such days → no baseline, no
  share or token alert (a new site is not drifting).
- **Large group** (rule a): the day's largest group created or grown reached
  ``large_group`` members. Judged on the all-sites row only (a login wall spans sites).
- **Share jump** (rule b), for "empty" and for "blocked" separately: the site has at
  least ``min_documents`` documents today, and today's share ≥ baseline share +
  ``share_jump`` and ≥ ``share_ratio`` × baseline share, the baseline share being the
  pooled share of the baseline days (their counts summed, not an average of ratios).
- **Token shift** (rule c): the site has at least ``min_documents`` documents with text
  today, and |today's p50 − baseline p50| > ``token_shift`` × baseline p50, the baseline
  p50 being the median of the baseline days' p50s (robust to one odd day). The message
  also gives both p10–p90 ranges, so a reader sees whether the whole distribution moved.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

LARGE_GROUP = "large_group"
EMPTY_SHARE = "empty_share"
BLOCKED_SHARE = "blocked_share"
TOKEN_SHIFT = "token_shift"
KINDS = (LARGE_GROUP, EMPTY_SHARE, BLOCKED_SHARE, TOKEN_SHIFT)


def quantile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile (0 ≤ q ≤ 1) by linear interpolation; None for no values."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q!r}")
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def quantiles(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """(p10, p50, p90)."""
    return quantile(values, 0.1), quantile(values, 0.5), quantile(values, 0.9)


@dataclass(frozen=True)
class DayStats:
    """One rollup row, as the rules see it. ``site`` is "" for all sites."""

    day: date
    site: str
    documents: int
    empty: int = 0
    blocked: int = 0
    with_text: int = 0  # documents whose tokens entered the quantiles
    p10: float | None = None
    p50: float | None = None
    p90: float | None = None
    largest_group: int = 0
    largest_group_id: int | None = None
    samples: dict[str, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Thresholds:
    large_group: int = 50
    share_jump: float = 0.2
    share_ratio: float = 2.0
    min_documents: int = 20
    token_shift: float = 0.5
    baseline_days: int = 7
    min_baseline_days: int = 3


@dataclass(frozen=True)
class Alert:
    kind: str
    day: date
    site: str  # "" = all sites
    message: str
    value: float
    baseline: float | None
    sample_ids: tuple[int, ...] = ()
    group_id: int | None = None


def baseline_days(day: date, history: Iterable[DayStats], t: Thresholds) -> list[DayStats]:
    """The site's days with documents in the ``baseline_days`` before ``day``."""
    start = day - timedelta(days=t.baseline_days)
    return sorted(
        (h for h in history if start <= h.day < day and h.documents > 0), key=lambda h: h.day
    )


def _share(count: int, total: int) -> float:
    return count / total if total else 0.0


def alerts_for(today: DayStats, history: Iterable[DayStats], t: Thresholds) -> list[Alert]:
    """Every alert for one site's (or all sites') day, given its previous days."""
    out: list[Alert] = []
    if not today.site and today.largest_group >= t.large_group:
        out.append(
            Alert(
                LARGE_GROUP,
                today.day,
                today.site,
                f"a group reached {today.largest_group} members on the day (threshold "
                f"{t.large_group}): likely a login wall or an error page, not copying",
                float(today.largest_group),
                None,
                tuple(today.samples.get("group", ())),
                today.largest_group_id,
            )
        )
    if not today.site:
        return out
    base = baseline_days(today.day, history, t)
    if len(base) < t.min_baseline_days:
        return out
    if today.documents >= t.min_documents:
        base_docs = sum(h.documents for h in base)
        for kind, attr in ((EMPTY_SHARE, "empty"), (BLOCKED_SHARE, "blocked")):
            share = _share(getattr(today, attr), today.documents)
            before = _share(sum(getattr(h, attr) for h in base), base_docs)
            if share >= before + t.share_jump and share >= t.share_ratio * before:
                out.append(
                    Alert(
                        kind,
                        today.day,
                        today.site,
                        f"{attr} extraction share {share:.0%} of {today.documents} documents, "
                        f"against {before:.0%} over the previous {len(base)} days",
                        share,
                        before,
                        tuple(today.samples.get(attr, ())),
                    )
                )
    medians = [h.p50 for h in base if h.p50 is not None]
    if today.p50 is not None and today.with_text >= t.min_documents and medians:
        base_p50 = quantile(medians, 0.5) or 0.0
        moved = abs(today.p50 - base_p50)
        if moved > t.token_shift * max(base_p50, 1.0):
            p10s = [h.p10 for h in base if h.p10 is not None]
            p90s = [h.p90 for h in base if h.p90 is not None]
            direction = "up" if today.p50 > base_p50 else "down"
            out.append(
                Alert(
                    TOKEN_SHIFT,
                    today.day,
                    today.site,
                    f"median main-text tokens {direction}: {today.p50:.0f} against "
                    f"{base_p50:.0f} (p10–p90 {_num(today.p10)}–{_num(today.p90)} against "
                    f"{_num(quantile(p10s, 0.5))}–{_num(quantile(p90s, 0.5))}): "
                    "a template or extractor change?",
                    today.p50,
                    base_p50,
                    tuple(today.samples.get("text", ())),
                )
            )
    return out


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def alerts_over(days: Iterable[DayStats], *, since: date, t: Thresholds) -> list[Alert]:
    """Alerts of every row dated ``since`` or later, each judged against the earlier rows
    of its own site. Newest first, then by site."""
    by_site: dict[str, list[DayStats]] = {}
    for d in days:
        by_site.setdefault(d.site, []).append(d)
    out: list[Alert] = []
    for rows in by_site.values():
        for row in rows:
            if row.day >= since:
                out.extend(alerts_for(row, rows, t))
    return sorted(out, key=lambda a: (-a.day.toordinal(), a.site, a.kind))
