"""Review desk pages. Views translate: services own the rules, selectors read."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.csp import CSP
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.csp import csp_override, csp_report_only_override
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from reviews import decisions, prelabel, roles, selectors, services
from reviews.actions import action_views
from reviews.core.prelabel import METHOD_NAME
from reviews.forms import (
    VERDICT_KEYS,
    AdjudicationForm,
    LabelForm,
    QueueFilterForm,
    RepresentativeForm,
    SplitForm,
)
from reviews.models import Claim

# Crawled HTML runs under this policy only, inside <iframe sandbox> (invariant 8):
# no script, no network, no same-origin access.
SOURCE_CSP = {
    "sandbox": True,
    "default-src": [CSP.NONE],
    "style-src": [CSP.UNSAFE_INLINE],
    "img-src": ["data:"],
}
DIFF_TABS = (
    ("main", "main text diff"),
    ("aligned", "aligned sentences"),
    ("full", "full-page text diff"),
    ("source", "source rendered"),
    ("html", "HTML source diff"),
)
DIFF_VIEWS = tuple(key for key, _ in DIFF_TABS)


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def _viewer(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not roles.can_view(request.user):
            raise PermissionDenied("the review desk needs the editor, auditor or admin role")
        return view(request, *args, **kwargs)

    return wrapped


def _editor(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not roles.can_edit(request.user):
            raise PermissionDenied("this needs the editor role")
        return view(request, *args, **kwargs)

    return wrapped


def _filters(data: Any) -> tuple[QueueFilterForm, selectors.QueueFilters]:
    form = QueueFilterForm(data)
    if not form.is_valid():
        return form, selectors.QueueFilters()
    c = form.cleaned_data
    return form, selectors.QueueFilters(
        doc_type=c["doc_type"] or "",
        site=c["site"] or "",
        distance_min=c["distance_min"],
        distance_max=c["distance_max"],
        guard=c["guard"] or "",
        channel=c["channel"] or "",
        status=c["status"] or "",
        method=c["method"] or "",
        kind=c["kind"] or "",
    )


# --- queue ---------------------------------------------------------------------------


@_viewer
@require_GET
@vary_on_headers("HX-Request")
def queue(request: HtmxHttpRequest) -> HttpResponse:
    form, filters = _filters(request.GET)
    counts = selectors.queue_counts(filters=filters)
    # The counts already know how many pairs match: the page fetches ids, then rows.
    pairs = Paginator(
        selectors.QueuePairPage(
            filters=filters, count=counts["kind"]["pair"] if filters.kind in ("", "pair") else 0
        ),
        50,
    ).get_page(request.GET.get("page"))
    groups = (
        list(selectors.queue_groups(filters=filters, with_urls=True)[:25])
        if filters.kind in ("", "group")
        else []
    )
    claims = {
        (c.kind, c.pair_id or c.group_id): c
        for c in selectors.active_claims().select_related("editor")
    }
    for pair in pairs:
        pair.claim = claims.get(("pair", pair.pk))  # type: ignore[attr-defined]
    for group in groups:
        group.claim = claims.get(("group", group.pk))  # type: ignore[attr-defined]
    template = "reviews/queue.html"
    if request.htmx and not request.htmx.boosted:
        template += "#queue-results"
    return render(
        request,
        template,
        {
            "form": form,
            "filters": filters,
            "query": filters.as_query(),
            "counts": counts,
            "choices": selectors.filter_choices(),
            "pairs": pairs,
            "groups": groups,
            "can_edit": roles.can_edit(request.user),
            "blind": selectors.blind_mode_for(user=request.user),  # type: ignore[arg-type]
        },
    )


def _skip(request: HttpRequest, name: str) -> set[int]:
    return {int(x) for x in request.POST.getlist(name) if x.isdigit()}


@_editor
@require_POST
def queue_next(request: HtmxHttpRequest) -> HttpResponse:
    """Claim the next item and go to it."""
    _, filters = _filters(request.POST)
    claim = services.claim_next(
        editor=request.user,  # type: ignore[arg-type]
        filters=filters,
        skip_pairs=_skip(request, "skip_pair"),
        skip_groups=_skip(request, "skip_group"),
    )
    return _goto(request, claim, notice="")


def _goto(request: HtmxHttpRequest, claim: Claim | None, *, notice: str) -> HttpResponse:
    """Show the claimed item: a pair is swapped in place (htmx, URL pushed); a group
    is a page of its own."""
    if claim is None:
        if request.htmx:
            response = render(
                request,
                "reviews/pair_detail.html#pair-review",
                {"view": None, "notice": notice, "can_edit": roles.can_edit(request.user)},
            )
            response["HX-Push-Url"] = reverse("reviews:queue-done")
            return response
        return redirect("reviews:queue-done")
    url = claim.get_absolute_url()
    if not request.htmx:
        return redirect(url)
    if claim.kind == Claim.Kind.GROUP:
        return HttpResponseClientRedirect(url)
    pair = selectors.pair_get(pair_id=claim.pair_id)  # type: ignore[arg-type]
    response = _pair_render(request, pair, partial="pair-review", notice=notice)
    response["HX-Push-Url"] = url
    return response


@_viewer
@require_GET
def queue_done(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "reviews/pair_detail.html",
        {"view": None, "notice": "", "can_edit": roles.can_edit(request.user)},
    )


# --- pair view -----------------------------------------------------------------------


def _pair_context(
    request: HttpRequest,
    pair: Any,
    *,
    form: LabelForm | None = None,
    diff_view: str = "main",
    notice: str = "",
) -> dict[str, Any]:
    view = selectors.pair_view(pair=pair, user=request.user)  # type: ignore[arg-type]
    context: dict[str, Any] = {
        "view": view,
        "pair": pair,
        "form": form or LabelForm(initial=selectors.label_defaults(user=request.user)),  # type: ignore[arg-type]
        "progress": selectors.progress_for(
            user=request.user,  # type: ignore[arg-type]
            filters=selectors.QueueFilters(kind="pair"),
        )
        if roles.can_edit(request.user)
        else None,
        "diff_view": diff_view,
        "notice": notice,
        "verdict_keys": VERDICT_KEYS,
        "can_edit": roles.can_edit(request.user),
        "diff_tabs": DIFF_TABS,
        "can_adjudicate": roles.can_adjudicate(request.user),
        "simhash": selectors.simhash_view(pair=pair),
        "adjudication_form": AdjudicationForm(),
        "previous_pair": selectors.previous_pair_id(user=request.user, pair=pair),  # type: ignore[arg-type]
    }
    context.update(_diff_context(view, diff_view))
    return context


def _diff_context(view: selectors.PairView, diff_view: str) -> dict[str, Any]:
    if diff_view in ("main", "full"):
        return {"word_diff": selectors.pair_text_diff(view=view, branch=diff_view)}
    if diff_view == "aligned":
        return {"alignment": selectors.pair_alignment(view=view)}
    if diff_view == "html":
        return {"line_diff": selectors.pair_source_diff(pair=view.pair)}
    return {}


def _pair_render(
    request: HtmxHttpRequest,
    pair: Any,
    *,
    partial: str | None = None,
    form: LabelForm | None = None,
    notice: str = "",
    diff_view: str = "main",
) -> HttpResponse:
    template = "reviews/pair_detail.html"
    if partial:
        template += f"#{partial}"
    return render(
        request,
        template,
        _pair_context(request, pair, form=form, diff_view=diff_view, notice=notice),
    )


@_viewer
@require_GET
@vary_on_headers("HX-Request")
def pair_detail(request: HtmxHttpRequest, pair_id: int) -> HttpResponse:
    pair = selectors.pair_get(pair_id=pair_id)
    diff_view = request.GET.get("view", "main")
    if diff_view not in DIFF_VIEWS:
        diff_view = "main"
    partial = "diff-panel" if request.htmx and request.htmx.target == "diff-panel" else None
    return _pair_render(request, pair, partial=partial, diff_view=diff_view)


@_editor
@require_POST
def pair_label(request: HtmxHttpRequest, pair_id: int) -> HttpResponse:
    """Save a label, then move on to the next pair (one request with htmx)."""
    pair = selectors.pair_get(pair_id=pair_id)
    form = LabelForm(request.POST)
    if not form.is_valid():
        # 200, not 4xx: htmx swaps the panel with the errors shown.
        return _pair_render(
            request, pair, partial="pair-review" if request.htmx else None, form=form
        )
    label = services.label_record(pair=pair, editor=request.user, **form.cleaned_data)  # type: ignore[arg-type]
    notice = f"Saved “{label.verdict_label}” ({label.get_reason_code_display()}) on pair {pair.pk}."
    if not request.htmx:
        # Without JavaScript the next page is a redirect: the notice rides along.
        messages.success(request, notice)
    _, filters = _filters(request.POST)
    claim = services.claim_next(
        editor=request.user,  # type: ignore[arg-type]
        filters=filters.replace(kind="pair"),
        skip_pairs={pair.pk},
    )
    return _goto(request, claim, notice=notice)


@_editor
@require_POST
def label_undo(request: HtmxHttpRequest) -> HttpResponse:
    """Withdraw my last label (append a retraction) and show that pair again."""
    pair_id = request.POST.get("pair")
    pair = selectors.pair_get(pair_id=int(pair_id)) if pair_id and pair_id.isdigit() else None
    undone = services.label_undo(editor=request.user, pair=pair)  # type: ignore[arg-type]
    if undone is None:
        if pair is None:
            return (
                redirect("reviews:queue")
                if not request.htmx
                else _goto(request, None, notice="Nothing to undo.")
            )
        target = pair
        notice = "Nothing to undo."
    else:
        target = undone.pair
        notice = f"Withdrew your “{undone.verdict_label}” label on pair {target.pk}."
    if not request.htmx:
        return redirect("reviews:pair-detail", target.pk)
    response = _pair_render(request, target, partial="pair-review", notice=notice)
    response["HX-Push-Url"] = reverse("reviews:pair-detail", args=[target.pk])
    return response


@login_required
@require_GET
@csp_override(SOURCE_CSP)
@csp_report_only_override({})
@xframe_options_sameorigin  # framed by the desk's own pair view; every other page: DENY
def document_source(request: HttpRequest, document_id: int) -> HttpResponse:
    """A crawled page's HTML for <iframe sandbox>: under its own policy, no script runs
    and nothing is fetched."""
    if not roles.can_view(request.user):
        raise PermissionDenied
    document = selectors.document_get(document_id=document_id)
    response = HttpResponse(
        selectors.document_source(document=document), content_type="text/html; charset=utf-8"
    )
    response["X-Frame-Options"] = "SAMEORIGIN"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Content-Type-Options"] = "nosniff"
    return response


# --- preferences ---------------------------------------------------------------------


@_viewer
@require_POST
def preference_blind(request: HtmxHttpRequest) -> HttpResponse:
    services.preference_set(
        user=request.user,  # type: ignore[arg-type]
        blind_mode=request.POST.get("blind_mode") == "on",
    )
    back = request.POST.get("next") or reverse("reviews:queue")
    if not back.startswith("/") or back.startswith("//"):
        back = reverse("reviews:queue")
    if request.htmx:
        return HttpResponseClientRedirect(back)
    return redirect(back)


# --- group view ----------------------------------------------------------------------


def _group_render(
    request: HtmxHttpRequest,
    group: Any,
    *,
    split_form: SplitForm | None = None,
    rep_form: RepresentativeForm | None = None,
    notice: str = "",
    partial: str | None = None,
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    view = selectors.group_view(group=group)
    ids = [m.document.pk for m in view.members]
    template = "reviews/group_detail.html"
    if partial:
        template += f"#{partial}"
    from reviews.decision_views import group_decision_context  # issue 6

    return render(
        request,
        template,
        {
            **group_decision_context(request, view, **(extra or {})),
            "view": view,
            "group": group,
            "split_form": split_form or SplitForm(member_ids=ids),
            "rep_form": rep_form
            or RepresentativeForm(member_ids=ids, initial={"document_id": group.representative_id}),
            "notice": notice,
            "can_edit": roles.can_edit(request.user),
            # A dissolved group has nothing left to decide (a restore still works).
            "live": roles.can_edit(request.user) and not group.dissolved,
            "is_decided": decisions.deciding(group) is not None,
            "blind": selectors.blind_mode_for(user=request.user),  # type: ignore[arg-type]
        },
    )


def _expected_version(request: HttpRequest) -> int:
    """The group version the editor's form was rendered at (optimistic versioning).
    Required: without it two editors' changes could both apply, so a form without it
    is refused like any invalid form."""
    raw = request.POST.get("version", "")
    if not raw.isdigit():
        raise services.ReviewError(
            "This form lacks the group's version, so a concurrent change could not be "
            "detected: nothing was applied. Reload the page and try again."
        )
    return int(raw)


def _conflict(
    request: HtmxHttpRequest,
    conflict: services.GroupConflict,
    action: str,
    document_ids: list[int],
    form: Any,
) -> HttpResponse:
    """The losing editor: the attempt goes on the record, the page shows the current
    state (the form is not re-filled: it was decided on a stale view)."""
    from reviews import decisions

    decisions.conflict_record(
        conflict=conflict,
        editor=request.user,  # type: ignore[arg-type]
        action=action,
        document_ids=document_ids,
        reason_code=form.cleaned_data.get("reason_code", ""),
        reason=form.cleaned_data.get("reason", ""),
    )
    group = selectors.group_get(group_id=conflict.group.pk)
    response = _group_render(
        request,
        group,
        notice=str(conflict),
        partial="group-review" if request.htmx else None,
        extra={"conflict": True},
    )
    if not request.htmx:
        response.status_code = 409
    return response


@_viewer
@require_GET
def group_detail(request: HtmxHttpRequest, group_id: int) -> HttpResponse:
    return _group_render(request, selectors.group_get(group_id=group_id))


@_editor
@require_http_methods(["POST"])
def group_split(request: HtmxHttpRequest, group_id: int) -> HttpResponse:
    group = selectors.group_get(group_id=group_id)
    form = SplitForm(request.POST, member_ids=selectors.group_member_ids(group=group))
    if form.is_valid():
        try:
            decision = services.group_split(
                group=group,
                editor=request.user,  # type: ignore[arg-type]
                document_ids=form.cleaned_data["document_ids"],
                detach=form.cleaned_data["detach"],
                reason_code=form.cleaned_data["reason_code"],
                reason=form.cleaned_data["reason"],
                expected_version=_expected_version(request),
            )
        except services.GroupConflict as e:
            return _conflict(request, e, "split", form.cleaned_data["document_ids"], form)
        except services.ReviewError as e:
            form.add_error(None, str(e))
        else:
            moved = ", ".join(map(str, decision.document_ids))
            notice = f"Split: {moved} moved" + (
                f" to group {decision.new_group_id}." if decision.new_group_id else " out."
            )
            if not request.htmx:
                return redirect("reviews:group-detail", group.pk)
            group.refresh_from_db()
            return _group_render(request, group, notice=notice, partial="group-review")
    return _group_render(
        request, group, split_form=form, partial="group-review" if request.htmx else None
    )


@_editor
@require_http_methods(["POST"])
def group_representative(request: HtmxHttpRequest, group_id: int) -> HttpResponse:
    group = selectors.group_get(group_id=group_id)
    form = RepresentativeForm(request.POST, member_ids=selectors.group_member_ids(group=group))
    if form.is_valid():
        try:
            services.group_representative_set(
                group=group,
                editor=request.user,  # type: ignore[arg-type]
                expected_version=_expected_version(request),
                **form.cleaned_data,
            )
        except services.GroupConflict as e:
            ids = [form.cleaned_data["document_id"]]
            return _conflict(request, e, "set_representative", ids, form)
        except services.ReviewError as e:
            form.add_error(None, str(e))
        else:
            if not request.htmx:
                return redirect("reviews:group-detail", group.pk)
            group.refresh_from_db()
            notice = f"Representative set to {group.representative_id}."
            return _group_render(request, group, notice=notice, partial="group-review")
    return _group_render(
        request, group, rep_form=form, partial="group-review" if request.htmx else None
    )


# --- labels out: export, calibration report, calibration sample (issue 5) ------------


def _calibration_filters(data: Any) -> tuple[str, str]:
    from django.conf import settings

    doc_type = data.get("doc_type", "")
    method = data.get("method", "")
    if doc_type not in settings.DOC_TYPES:
        doc_type = ""
    if method not in selectors.filter_choices()["methods"]:
        method = ""
    return doc_type, method


@_viewer
@require_GET
def calibration(request: HttpRequest) -> HttpResponse:
    """Threshold sweep per doc type and method, with charts and the two policies."""
    from django.conf import settings

    from reviews import calibration as cal
    from reviews.core.calibration import SPLITS

    doc_type, method = _calibration_filters(request.GET)
    views = cal.report_views(doc_type=doc_type, method=method)
    acts = action_views(doc_type=doc_type, method=method, at=request.GET.get("at", ""))
    for v in views:
        v.actions = acts.get((v.report.doc_type, v.report.method), [])
    return render(
        request,
        "reviews/calibration.html",
        {
            "views": views,
            "prelabel": prelabel.prelabel_views(
                prelabel.distributions(doc_type=doc_type, method=method),
                [v.report for v in views],
            ),
            "prelabel_method": METHOD_NAME,
            "prelabel_pairs": settings.PRELABEL_SAMPLE_PAIRS,
            "prelabel_min_documents": settings.PRELABEL_MIN_DOCUMENTS,
            "group_rule": settings.GROUP_RULE,
            "representative_policy": settings.REPRESENTATIVE_POLICY,
            "doc_type": doc_type,
            "method": method,
            "choices": selectors.filter_choices(),
            "splits": SPLITS,
            "positive": settings.CALIBRATION_POSITIVE,
            "negative": settings.CALIBRATION_NEGATIVE,
            "cost_false_merge": settings.CALIBRATION_COST_FALSE_MERGE,
            "cost_missed": settings.CALIBRATION_COST_MISSED,
            "min_per_class": settings.CALIBRATION_MIN_PER_CLASS,
            "holdout_share": settings.LABEL_HOLDOUT_SHARE,
            "sampled": cal.calibration_sample_pairs().count(),
            "bands": [cal.band_name(lo, hi) for lo, hi in cal.BANDS],
            "can_edit": roles.can_edit(request.user),
        },
    )


@_editor
@require_POST
def calibration_sample_create(request: HttpRequest) -> HttpResponse:
    from reviews import calibration as cal

    def number(name: str, default: int, lo: int, hi: int) -> int:
        value = request.POST.get(name, "")
        return min(max(int(value), lo), hi) if value.strip().isdigit() else default

    doc_type, method = _calibration_filters(request.POST)
    cal.calibration_sample_make(
        per_band=number("per_band", 20, 1, 1000),
        seed=number("seed", 1, 0, 2**31 - 1),
        doc_type=doc_type,
        method=method,
    )
    return redirect("reviews:calibration-sample")


@_viewer
@require_GET
def calibration_sample(request: HttpRequest) -> HttpResponse:
    """The calibration sample as a queue: unlabelled pairs first, each linking to its
    pair view (label with purpose "calibration")."""
    from reviews import calibration as cal

    page = Paginator(cal.calibration_sample_pairs(), 100).get_page(request.GET.get("page"))
    return render(request, "reviews/calibration_sample.html", {"page": page})


@_viewer
@require_GET
def labels_export(request: HttpRequest) -> HttpResponse:
    """Every label as CSV or JSONL, streamed (editors, auditors, admins)."""
    from datetime import date

    from django.http import HttpResponseBadRequest, StreamingHttpResponse

    from reviews import exports
    from reviews.core.calibration import SPLITS

    fmt = request.GET.get("format", "csv")
    split = request.GET.get("split", "")
    _, method = _calibration_filters(request.GET)
    try:
        since = date.fromisoformat(request.GET["since"]) if request.GET.get("since") else None
    except ValueError:
        return HttpResponseBadRequest("since: not a date (YYYY-MM-DD)")
    if fmt not in exports.FORMATS or (split and split not in SPLITS):
        return HttpResponseBadRequest("format: csv or jsonl; split: calibration or holdout")
    lines = exports.export_lines(fmt=fmt, split=split, since=since, method=method)
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(
        (line.encode("utf-8") for line in lines), content_type=f"{content_type}; charset=utf-8"
    )
    name = "-".join(["labels", *(x for x in (split, method) if x)])
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
