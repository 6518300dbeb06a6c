"""Operations pages: metrics and drift alerts, fingerprint methods (compute,
compare, switch, retire), and the Prometheus endpoint. Views translate: the rules are in
reviews.operations (rollups, drift_alerts, exposition, method_upgrades) and
ingest.core.drift."""

import hmac
import ipaddress
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from ingest.models import DailyRollup
from reviews import roles
from reviews.core import charts
from reviews.http import DeskRequest, error_text, fragment, require_viewer, template_for
from reviews.operations import drift_alerts, exposition, method_upgrades, rollups

METRICS_DAYS = 30


def _admin(request: HttpRequest) -> None:
    if not roles.can_admin(request.user):
        raise PermissionDenied("this needs the admin role")


def _actor(request: HttpRequest) -> str:
    return f"person:{request.user.get_username()}"


# --- metrics page ------------------------------------------------------------------------


@require_viewer
@require_GET
def metrics_page(request: HttpRequest) -> HttpResponse:
    """Daily charts for one site (or all sites) and the drift alerts of every site."""
    host = request.GET.get("site", "")
    site = rollups.site_find(host=host)
    today = timezone.now().date()
    # With nothing in the last window (a demo crawl of past dates, a paused crawler) the
    # window ends on the last day with data rather than showing empty charts.
    latest = rollups.rollup_last_day()
    if latest is not None and latest < today - timedelta(days=METRICS_DAYS - 1):
        today = latest
    days = [today - timedelta(days=i) for i in range(METRICS_DAYS - 1, -1, -1)]
    rows = rollups.rollups_by_day(site=site, first=days[0], last=today)

    def point(day: Any, value: Any) -> tuple[str, float | None]:
        return day.strftime("%m-%d"), value

    def share(r: DailyRollup | None) -> float | None:
        if r is None or not r.documents:
            return None
        return (r.status_empty + r.status_blocked) / r.documents

    series = {
        "documents": [point(d, rows[d].documents if d in rows else 0) for d in days],
        "share": [point(d, share(rows.get(d))) for d in days],
        "p50": [point(d, rows[d].tokens_p50 if d in rows else None) for d in days],
    }
    return render(
        request,
        "reviews/metrics.html",
        {
            "site": site,
            "sites": rollups.sites_with_rollups(),
            "charts": [
                charts.timeline(series["documents"], title=gettext("Documents fetched per day")),
                charts.timeline(
                    series["share"],
                    title=gettext("Empty + blocked extraction share per day"),
                    bars=False,
                    percent=True,
                ),
                charts.timeline(
                    series["p50"], title=gettext("Median main-text tokens per day"), bars=False
                ),
            ],
            "rows": [rows[d] for d in reversed(days) if d in rows],
            "alerts": drift_alerts.alerts(today=today),
            "crawl_signals": rollups.crawl_signals(site=site),
            "thresholds": drift_alerts.thresholds(),
            "alert_days": settings.DRIFT_ALERT_DAYS,
            "last_computed": rollups.rollups_computed_at(),
        },
    )


def _scraper_allowed(request: HttpRequest) -> bool:
    """The bearer METRICS_TOKEN, or a client address in METRICS_ALLOWED_IPS."""
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if hmac.compare_digest(given.encode(), token.encode()):
            return True
    try:
        client = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(
        client in ipaddress.ip_network(allowed, strict=False)
        for allowed in settings.METRICS_ALLOWED_IPS
    )


@never_cache
@require_GET
def prometheus(request: HttpRequest) -> HttpResponse:
    """GET /metrics: Prometheus text format, for a scraper that sends "Authorization:
    Bearer METRICS_TOKEN" or connects from METRICS_ALLOWED_IPS; no one else."""
    if not _scraper_allowed(request):
        response = HttpResponse(
            "metrics: send the METRICS_TOKEN bearer token or connect from an allowed address\n",
            status=401,
            content_type="text/plain",
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(exposition.prometheus_text(), content_type=exposition.CONTENT_TYPE)


# --- methods page ------------------------------------------------------------------------


def _methods_context(request: HttpRequest) -> dict[str, Any]:
    return {
        "overview": method_upgrades.methods_overview(),
        "running": method_upgrades.runs_active(),
        "can_admin": roles.can_admin(request.user),
    }


@require_viewer
@require_GET
@vary_on_headers("HX-Request")
def methods_page(request: DeskRequest) -> HttpResponse:
    """Every method with its coverage and runs (a progress bar polled while a run goes),
    the comparison on the labelled pairs, and the switch/retire log."""
    if request.GET.get("part") == "method-runs" and (part := fragment(request, "method-runs")):
        return render(
            request, template_for("reviews/methods.html", part), _methods_context(request)
        )
    doc_type = request.GET.get("doc_type", "all")
    if doc_type not in ("all", *settings.DOC_TYPES):
        doc_type = "all"
    keys = method_upgrades.compare_keys()
    chosen = [k for k in request.GET.getlist("method") if k in keys] or keys
    comparisons = method_upgrades.methods_compare(keys=chosen, doc_type=doc_type)
    for c in comparisons:
        chart = charts.histogram(c.distances, max_distance=settings.CALIBRATION_MAX_THRESHOLD)
        title = gettext("Distance by label · %(method)s") % {"method": c.key}
        c.histogram = replace(chart, title=title)  # type: ignore[attr-defined]
    context = _methods_context(request)
    context.update(
        {
            "comparisons": comparisons,
            "keys": keys,
            "chosen": chosen,
            "doc_type": doc_type,
            "doc_types": settings.DOC_TYPES,
            "switches": method_upgrades.switches_recent(limit=50),
        }
    )
    return render(request, "reviews/methods.html", context)


def _method_action(request: HttpRequest, act: Callable[[str, str, str], str]) -> HttpResponse:
    """An admin's action on a method: `act(key, actor, reason)` says what was done; a
    refusal (UpgradeError) is shown instead. Back to the methods page either way."""
    _admin(request)
    try:
        done = act(request.POST.get("method", ""), _actor(request), request.POST.get("reason", ""))
    except method_upgrades.UpgradeError as e:
        messages.error(request, error_text(e))
    else:
        messages.info(request, done)
    return redirect("reviews:methods")


@require_POST
@require_viewer
def method_compute(request: HttpRequest) -> HttpResponse:
    def compute(key: str, actor: str, reason: str) -> str:
        run = method_upgrades.run_start(key=key, actor=actor)
        return gettext("Computing %(method)s: %(done)s of %(total)s done.") % {
            "method": run.method.key,
            "done": run.done,
            "total": run.total,
        }

    return _method_action(request, compute)


@require_POST
@require_viewer
def method_switch(request: HttpRequest) -> HttpResponse:
    def switch(key: str, actor: str, reason: str) -> str:
        record = method_upgrades.method_switch(key=key, actor=actor, reason=reason)
        return gettext("%(method)s is the active method; candidates are being searched.") % {
            "method": record.to_method.key
        }

    return _method_action(request, switch)


@require_POST
@require_viewer
def method_retire(request: HttpRequest) -> HttpResponse:
    def retire(key: str, actor: str, reason: str) -> str:
        record = method_upgrades.method_retire(key=key, actor=actor, reason=reason)
        return gettext("%(method)s is retired; nothing was deleted.") % {
            "method": record.to_method.key
        }

    return _method_action(request, retire)
