"""Review desk pages. Views translate: the sub-domain packages own the rules and the reads."""

import hashlib
from collections.abc import Sequence
from datetime import date
from typing import Any, cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.csp import CSP
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language, gettext
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.csp import csp_override, csp_report_only_override
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from dedup_site.transactions import BUSY_TEXT, DatabaseBusy
from ingest.core.warc_archive import ArchiveError
from reviews import pages, roles
from reviews.calibration import prelabel, stored_figures
from reviews.calibration import sweeps as cal
from reviews.calibration.action_errors import action_views
from reviews.core.calibration_math import SPLITS
from reviews.core.prelabel_math import METHOD_NAME
from reviews.decisions import group_reads, group_splits
from reviews.forms import (
    LabelForm,
    QueueFilterForm,
    RepresentativeForm,
    SplitForm,
)
from reviews.http import (
    DeskRequest,
    bounded_int,
    fragment,
    remember_locale,
    require_editor,
    require_label_export,
    require_viewer,
    template_for,
)
from reviews.labels import exports, labelling, preferences
from reviews.models import Claim
from reviews.pair import pair_reads, panels, text_diffs
from reviews.queue import (
    claiming,
    desk_search,
    group_queue,
    pair_queue,
    queue_counts,
    queue_filters,
    queue_tally,
)

# Crawled HTML runs under this policy only, inside <iframe sandbox> (crawled HTML is hostile):
# no script, no network, no same-origin access.
SOURCE_CSP: dict[str, Any] = {
    "sandbox": True,
    "default-src": [CSP.NONE],
    "style-src": [CSP.UNSAFE_INLINE],
    "img-src": ["data:"],
}


def _filters(data: Any) -> tuple[QueueFilterForm, queue_filters.QueueFilters]:
    form = QueueFilterForm(data)
    if not form.is_valid():
        return form, queue_filters.QueueFilters()
    c = form.cleaned_data
    return form, queue_filters.QueueFilters(
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


@require_viewer
@require_GET
@vary_on_headers("HX-Request")
def queue(request: DeskRequest) -> HttpResponse:
    form, filters = _filters(request.GET)
    queue_tally.queue_sync()
    disputed = group_queue.groups_disputed()  # read once for the counts and the groups
    # Each group in scope with its facts, read once for the counts and the list.
    in_scope = group_queue.queue_group_facts(filters=filters, disputed=disputed)
    counts = queue_counts.queue_counts(
        filters=filters, disputed=disputed, sync=False, groups_in_scope=in_scope
    )
    # The counts already know how many pairs match: the page fetches ids, then rows.
    page = pair_queue.QueuePairPage(
        filters=filters, count=counts["kind"]["pair"] if filters.kind in ("", "pair") else 0
    )
    pairs = Paginator(
        cast(Sequence[pair_queue.QueueRow], page),  # a lazy sequence: len() and slices
        50,
    ).get_page(request.GET.get("page"))
    groups = (
        group_queue.queue_group_page(filters=filters, groups_in_scope=in_scope)
        if filters.kind in ("", "group")
        else []
    )
    claims = {
        (c.kind, c.pair_id or c.group_id): c
        for c in claiming.active_claims().select_related("editor")
    }
    for pair in pairs:
        pair.claim = claims.get(("pair", pair.id))
    for group in groups:
        group.claim = claims.get(("group", group.pk))
    template = template_for("reviews/queue.html", fragment(request, "queue-results", boosted=False))
    return render(
        request,
        template,
        {
            "form": form,
            "filters": filters,
            "query": filters.as_query(),
            "counts": counts,
            "choices": queue_filters.filter_choices(),
            "pairs": pairs,
            "groups": groups,
            "can_edit": roles.can_edit(request.user),
            "blind": preferences.blind_mode_for(user=request.user),
        },
    )


def _skip(request: HttpRequest, name: str) -> set[int]:
    return {n for x in request.POST.getlist(name) if (n := bounded_int(x)) is not None}


# Pairs an editor skipped lately (their session): Next serves them again only when
# nothing else is left, so that a skipped pair does not come straight back.
SKIPPED_KEY = "desk_skipped_pairs"
SKIPPED_KEPT = 50


def _skipped(request: HttpRequest, now: set[int]) -> set[int]:
    """The pairs this editor skipped lately, `now` (this request's skip) added."""
    kept = [x for x in request.session.get(SKIPPED_KEY, []) if isinstance(x, int)]
    if now:
        kept = [x for x in kept if x not in now] + sorted(now)
        request.session[SKIPPED_KEY] = kept[-SKIPPED_KEPT:]
    return set(kept)


@require_editor
@require_POST
def queue_next(request: DeskRequest) -> HttpResponse:
    """Claim the next item and go to it. A skip (the skip button) releases the pair
    (claim_next ends the editor's claims) and keeps it out of their Next for a while."""
    _, filters = _filters(request.POST)
    skip_pairs = _skip(request, "skip_pair")
    skipped = _skipped(request, skip_pairs if request.POST.get("skip") else set())
    try:
        claim = claiming.claim_next(
            editor=request.user,
            filters=filters,
            skip_pairs=skip_pairs | skipped,
            skip_groups=_skip(request, "skip_group"),
        )
        if claim is None and skipped - skip_pairs:
            # Nothing else is left: the pairs skipped earlier come back.
            claim = claiming.claim_next(
                editor=request.user,
                filters=filters,
                skip_pairs=skip_pairs,
                skip_groups=_skip(request, "skip_group"),
            )
    except DatabaseBusy:
        return _busy_status(request, _busy_page(request))
    return _goto(request, claim, notice="")


def _busy_page(request: DeskRequest) -> HttpResponse:
    """The "try again" answer where no pair is shown: the review panel with the notice
    and its Next button."""
    return render(
        request,
        "reviews/pair_detail.html" + ("#pair-review" if request.htmx else ""),
        {
            "view": None,
            "busy": True,
            "notice": gettext(BUSY_TEXT),
            "can_edit": roles.can_edit(request.user),
        },
    )


def _busy_status(request: DeskRequest, response: HttpResponse) -> HttpResponse:
    """htmx swaps only 2xx answers: a fragment says "try again" with a 200; a whole
    page says it with a 503 (and when to retry)."""
    if not request.htmx:
        response.status_code = 503
        response["Retry-After"] = "1"
    return response


def _goto(request: DeskRequest, claim: Claim | None, *, notice: str) -> HttpResponse:
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
    pair = pair_reads.pair_get(pair_id=claim.pair_id)  # type: ignore[arg-type]
    response = pages.pair_render(request, pair, partial="pair-review", notice=notice)
    response["HX-Push-Url"] = url
    return response


@require_viewer
@require_GET
def queue_done(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "reviews/pair_detail.html",
        {"view": None, "notice": "", "can_edit": roles.can_edit(request.user)},
    )


# --- pair view -----------------------------------------------------------------------


@require_viewer
@require_GET
@vary_on_headers("HX-Request")
def pair_detail(request: DeskRequest, pair_id: int) -> HttpResponse:
    pair = pair_reads.pair_get(pair_id=pair_id)
    diff_view = request.GET.get("view", "main")
    if diff_view not in pages.DIFF_VIEWS:
        diff_view = "main"
    partial = fragment(request, "diff-panel", target="diff-panel")
    return pages.pair_render(request, pair, partial=partial, diff_view=diff_view)


@require_editor
@require_GET
def pair_progress(request: DeskRequest) -> HttpResponse:
    """The pair page's progress counter, fetched once the page is shown: labels given
    today and the pairs left for the editor in the pair queue."""
    progress = queue_counts.progress_for(
        user=request.user, filters=queue_filters.QueueFilters(kind="pair")
    )
    return render(request, "reviews/pair_detail.html#progress", {"progress": progress})


@require_viewer
@require_GET
@vary_on_headers("HX-Request")
def pair_panel(request: DeskRequest, pair_id: int, name: str) -> HttpResponse:
    """A channel panel the pair page fetches after it is shown (panels.DEFERRED):
    the panel alone for htmx, a page of its own (the link of a browser without
    JavaScript)."""
    pair = pair_reads.pair_get(pair_id=pair_id)
    view = pair_reads.pair_view(pair=pair, user=request.user)
    found = panels.panel(view, name)
    if found is None or not found.deferred or found.template is None:
        raise Http404("no such panel on this pair's page")
    context = {"pair": pair, "view": view, "panel": found.context}
    if request.htmx:
        return render(request, found.template, context)
    return render(request, "reviews/pair_panel.html", {**context, "template": found.template})


@require_editor
@require_POST
def pair_label(request: DeskRequest, pair_id: int) -> HttpResponse:
    """Save a label, then move on to the next pair (one request with htmx)."""
    pair = pair_reads.pair_get(pair_id=pair_id)
    form = LabelForm(request.POST)
    if not form.is_valid():
        # 200, not 4xx: htmx swaps the panel with the errors shown.
        return pages.pair_render(request, pair, partial=fragment(request, "pair-review"), form=form)
    try:
        label = labelling.label_record(pair=pair, editor=request.user, **form.cleaned_data)
    except DatabaseBusy:
        # Nothing was stored: the same panel, the form as filled, and why.
        response = pages.pair_render(
            request,
            pair,
            partial=fragment(request, "pair-review"),
            form=form,
            notice=gettext(BUSY_TEXT),
        )
        return _busy_status(request, response)
    notice = gettext("Saved “%(verdict)s” (%(reason)s) on pair %(pair)s.") % {
        "verdict": label.verdict_label,
        "reason": label.get_reason_code_display(),
        "pair": pair.id,
    }
    if not request.htmx:
        # Without JavaScript the next page is a redirect: the notice rides along.
        messages.success(request, notice)
    _, filters = _filters(request.POST)
    try:
        claim = claiming.claim_next(
            editor=request.user,
            filters=filters.replace(kind="pair"),
            skip_pairs={pair.id},
        )
    except DatabaseBusy:
        # The label is stored: say so; only the next pair could not be handed out.
        if not request.htmx:
            return redirect("reviews:pair-detail", pair.id)
        notice += " " + gettext(
            "The next pair could not be fetched (the desk is busy): press Next."
        )
        return pages.pair_render(request, pair, partial="pair-review", notice=notice)
    return _goto(request, claim, notice=notice)


@require_editor
@require_POST
def label_undo(request: DeskRequest) -> HttpResponse:
    """Withdraw my last label (append a retraction) and show that pair again."""
    pair_id = bounded_int(request.POST.get("pair"))
    pair = pair_reads.pair_get(pair_id=pair_id) if pair_id is not None else None
    undone = labelling.label_undo(editor=request.user, pair=pair)
    if undone is None:
        if pair is None:
            return (
                redirect("reviews:queue")
                if not request.htmx
                else _goto(request, None, notice=gettext("Nothing to undo."))
            )
        target = pair
        notice = gettext("Nothing to undo.")
    else:
        target = undone.pair
        notice = gettext("Withdrew your “%(verdict)s” label on pair %(pair)s.") % {
            "verdict": undone.verdict_label,
            "pair": target.id,
        }
    if not request.htmx:
        return redirect("reviews:pair-detail", target.id)
    response = pages.pair_render(request, target, partial="pair-review", notice=notice)
    response["HX-Push-Url"] = reverse("reviews:pair-detail", args=[target.id])
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
    document = text_diffs.document_get(document_id=document_id)
    try:
        source = text_diffs.document_source(document=document)
    except ArchiveError as exc:
        # The stored bytes cannot be read back as stored (a missing or changed archive
        # file): the frame says so, escaped, instead of a 500 or wrong bytes.
        source = format_html("<p>{}</p>", str(exc))
    response = HttpResponse(source, content_type="text/html; charset=utf-8")
    response["X-Frame-Options"] = "SAMEORIGIN"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Content-Type-Options"] = "nosniff"
    return response


# --- preferences ---------------------------------------------------------------------


@require_viewer
@require_POST
def preference_blind(request: DeskRequest) -> HttpResponse:
    preferences.preference_set(
        user=request.user,
        blind_mode=request.POST.get("blind_mode") == "on",
    )
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("reviews:queue")
    if request.htmx:
        return HttpResponseClientRedirect(back)
    return redirect(back)


@require_POST
def preference_locale(request: HttpRequest) -> HttpResponse:
    """The header's switcher: the language (and, signed in, the time zone) of the desk.
    Stored per editor when signed in; the language cookie carries it otherwise (the login
    page), as Django's own set_language does."""
    languages = {code for code, _ in settings.LANGUAGES}
    language = request.POST.get("language", "")
    language = language if language in languages else ""
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = "/"
    response = redirect(back)
    if request.user.is_authenticated:
        time_zone = request.POST.get("time_zone", "")
        time_zone = time_zone if time_zone in settings.DESK_TIME_ZONES else ""
        user = cast(User, request.user)
        preferences.preference_locale_set(user=user, language=language, time_zone=time_zone)
        remember_locale(request, language, time_zone)
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            samesite="Lax",
            secure=request.is_secure(),
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)
    return response


# --- group view ----------------------------------------------------------------------


@require_viewer
@require_GET
def group_detail(request: DeskRequest, group_id: int) -> HttpResponse:
    return pages.group_render(request, group_reads.group_get(group_id=group_id))


@require_editor
@require_http_methods(["POST"])
def group_split(request: DeskRequest, group_id: int) -> HttpResponse:
    group = group_reads.group_get(group_id=group_id)
    form = SplitForm(request.POST, member_ids=group_reads.group_member_ids(group=group))

    def split() -> str:
        decision = group_splits.group_split(
            group=group,
            editor=request.user,
            document_ids=form.cleaned_data["document_ids"],
            detach=form.cleaned_data["detach"],
            reason_code=form.cleaned_data["reason_code"],
            reason=form.cleaned_data["reason"],
            expected_version=pages.expected_version(request),
        )
        moved = ", ".join(map(str, decision.document_ids))
        if decision.new_group_id:
            return gettext("Split: %(documents)s moved to group %(group)s.") % {
                "documents": moved,
                "group": decision.new_group_id,
            }
        return gettext("Split: %(documents)s moved out.") % {"documents": moved}

    return pages.group_form_answer(
        request,
        group,
        form,
        action="split",
        document_ids=lambda: form.cleaned_data["document_ids"],
        apply=split,
        shown_with={"split_form": form},
    )


@require_editor
@require_http_methods(["POST"])
def group_representative(request: DeskRequest, group_id: int) -> HttpResponse:
    group = group_reads.group_get(group_id=group_id)
    form = RepresentativeForm(request.POST, member_ids=group_reads.group_member_ids(group=group))

    def choose() -> str:
        group_splits.group_representative_set(
            group=group,
            editor=request.user,
            expected_version=pages.expected_version(request),
            **form.cleaned_data,
        )
        return gettext("Representative set to %(document)s.") % {
            "document": form.cleaned_data["document_id"]
        }

    return pages.group_form_answer(
        request,
        group,
        form,
        action="set_representative",
        document_ids=lambda: [form.cleaned_data["document_id"]],
        apply=choose,
        shown_with={"rep_form": form},
    )


# --- search --------------------------------------------------------------------------


@require_viewer
@require_GET
def search(request: DeskRequest) -> HttpResponse:
    """Documents and pairs whose URL, title or text contains the term."""
    q = request.GET.get("q", "").strip()
    return render(
        request,
        "reviews/search.html",
        {
            "q": q,
            "results": desk_search.search(q=q),
            "min_chars": desk_search.MIN_CHARS,
            "blind": preferences.blind_mode_for(user=request.user),
        },
    )


# --- labels out: export, calibration report, calibration sample --------------------


def _calibration_filters(data: Any) -> tuple[str, str]:
    doc_type = data.get("doc_type", "")
    method = data.get("method", "")
    if doc_type not in settings.DOC_TYPES:
        doc_type = ""
    if method not in queue_filters.filter_choices()["methods"]:
        method = ""
    return doc_type, method


def _calibration_context(request: HttpRequest, doc_type: str, method: str) -> dict[str, Any]:
    """What the page and its sections show beside the figures."""
    return {
        "at": request.GET.get("at", ""),
        "prelabel_method": METHOD_NAME,
        "prelabel_pairs": settings.PRELABEL_SAMPLE_PAIRS,
        "prelabel_min_documents": settings.PRELABEL_MIN_DOCUMENTS,
        "group_rule": settings.GROUP_RULE,
        "representative_policy": settings.REPRESENTATIVE_POLICY,
        "doc_type": doc_type,
        "method": method,
        "positive": settings.CALIBRATION_POSITIVE,
        "negative": settings.CALIBRATION_NEGATIVE,
        "cost_false_merge": settings.CALIBRATION_COST_FALSE_MERGE,
        "cost_missed": settings.CALIBRATION_COST_MISSED,
        "min_per_class": settings.CALIBRATION_MIN_PER_CLASS,
    }


def _calibration_sections(
    request: HttpRequest, doc_type: str, method: str, parts: frozenset[str]
) -> dict[str, Any]:
    """The figures of the sections named by `parts` ("sweep", "actions", "cosine",
    "prelabel"), ready for the template."""
    figures = stored_figures.figures(
        doc_type=doc_type, method=method, parts=parts & stored_figures.PARTS
    )
    views = figures.views
    acts = action_views(reports=figures.actions, at=request.GET.get("at", ""))
    for v in views:
        v.actions = acts.get((v.report.doc_type, v.report.method), [])
        v.has_actions = (v.report.doc_type, v.report.method) in figures.with_actions
    context: dict[str, Any] = {
        "views": views,
        "figures": figures,
        "cosine_sweeps": figures.cosine,
    }
    if "prelabel" in parts:
        context["prelabel"] = prelabel.prelabel_views(
            prelabel.distributions(doc_type=doc_type, method=method),
            [v.report for v in views],
        )
    return context


@require_viewer
@require_GET
def calibration(request: HttpRequest) -> HttpResponse:
    """Threshold sweep per doc type and method: each report's recommendation on the
    page, the sweeps, charts, errors per action, cosine sweeps and pre-label
    distributions in sections fetched when opened (all of them inline with
    ``sections=all``, the page without JavaScript)."""
    doc_type, method = _calibration_filters(request.GET)
    all_sections = request.GET.get("sections") == "all"
    parts = SECTION_PARTS if all_sections else frozenset({"sweep"})
    context = _calibration_sections(request, doc_type, method, parts)
    at = request.GET.get("at", "")
    return render(
        request,
        "reviews/calibration.html",
        {
            **context,
            **_calibration_context(request, doc_type, method),
            "all_sections": all_sections,
            # A threshold chosen in a table of errors per action: those sections open.
            "calibration_actions_open": bool(at),
            "figures_every": settings.CALIBRATION_FIGURES_EVERY_SECONDS,
            "choices": queue_filters.filter_choices(),
            "splits": SPLITS,
            "holdout_share": settings.LABEL_HOLDOUT_SHARE,
            "sampled": cal.calibration_sample_pairs().count(),
            "bands": [cal.band_name(lo, hi) for lo, hi in cal.BANDS],
            "can_edit": roles.can_edit(request.user),
        },
    )


SECTION_PARTS = frozenset({"sweep", "actions", "cosine", "prelabel"})
SECTION_TEMPLATES = {
    "sweep": "calibration-sweep",
    "actions": "calibration-actions",
    "cosine": "calibration-cosine",
    "prelabel": "calibration-prelabel",
}


@require_viewer
@require_GET
@vary_on_headers("HX-Request")
def calibration_section(request: DeskRequest) -> HttpResponse:
    """One section of the calibration page, fetched when an auditor opens it: the sweep
    and charts or the errors per action of one report (the doc type and method given),
    the cosine sweeps or the pre-label distributions of a filter. Stored figures render
    the same until the next recompute, so the HTML is cached per recompute, section,
    filter, threshold shown and language; a whole page (not htmx) for a browser without
    JavaScript."""
    part = request.GET.get("part", "")
    if part not in SECTION_TEMPLATES:
        return HttpResponseBadRequest(gettext("part: sweep, actions, cosine or prelabel"))
    doc_type, method = _calibration_filters(request.GET)
    n = bounded_int(request.GET.get("n"), lo=1, hi=10_000, default=1)
    at = request.GET.get("at", "")[:20]
    whole = not request.htmx
    stamp = stored_figures.figures_stamp()
    key = ":".join(
        [
            "calibration-section",
            stamp.isoformat() if stamp else "",
            part,
            doc_type,
            method,
            str(n),
            at,
            get_language() or "",
        ]
    )
    key = "calibration-section:" + hashlib.sha256(key.encode()).hexdigest()
    if stamp is not None and not whole and (html := cache.get(key)) is not None:
        return HttpResponse(html)
    context = {
        # The reports (the sweeps) come along: the errors per action and the pre-label
        # suggestions are shown per report.
        **_calibration_sections(request, doc_type, method, frozenset({part, "sweep"})),
        **_calibration_context(request, doc_type, method),
        "n": n,
        "part": part,
        "fragment": SECTION_TEMPLATES[part],
    }
    views = context["views"]
    if part in ("sweep", "actions"):
        context["v"] = views[0] if views else None
        if not views:
            raise Http404("no report for this doc type and method")
    template = (
        "reviews/calibration_section.html"
        if whole
        else f"reviews/calibration.html#{SECTION_TEMPLATES[part]}"
    )
    response = render(request, template, context)
    if stamp is not None and not whole:  # a whole page carries its own nonce and token
        cache.set(key, response.content, 2 * settings.CALIBRATION_FIGURES_EVERY_SECONDS)
    return response


@require_editor
@require_POST
def calibration_sample_create(request: HttpRequest) -> HttpResponse:
    def number(name: str, default: int, lo: int, hi: int) -> int:
        value = bounded_int(request.POST.get(name, "").strip(), default=default)
        return min(max(value, lo), hi)

    doc_type, method = _calibration_filters(request.POST)
    cal.calibration_sample_make(
        per_band=number("per_band", 20, 1, 1000),
        seed=number("seed", 1, 0, 2**31 - 1),
        doc_type=doc_type,
        method=method,
    )
    return redirect("reviews:calibration-sample")


@require_viewer
@require_GET
def calibration_sample(request: HttpRequest) -> HttpResponse:
    """The calibration sample as a queue: unlabelled pairs first, each linking to its
    pair view (label with purpose "calibration")."""
    page = Paginator(cal.calibration_sample_pairs(), 100).get_page(request.GET.get("page"))
    return render(request, "reviews/calibration_sample.html", {"page": page})


@require_label_export
@require_GET
def labels_export(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """Every label as CSV or JSONL, streamed (the calibration roles: auditors, admins).
    The CSV a browser downloads starts with the UTF-8 byte order mark, since a person
    opens it in a spreadsheet, which needs the mark to read Chinese and Vietnamese text as
    UTF-8; `bom=0` leaves it out (scripts use the API or `export_labels`, BOM-free)."""
    fmt = request.GET.get("format", "csv")
    bom = request.GET.get("bom", "1") != "0"
    split = request.GET.get("split", "")
    _, method = _calibration_filters(request.GET)
    try:
        since = date.fromisoformat(request.GET["since"]) if request.GET.get("since") else None
    except ValueError:
        return HttpResponseBadRequest("since: not a date (YYYY-MM-DD)")
    if fmt not in exports.FORMATS or (split and split not in SPLITS):
        return HttpResponseBadRequest("format: csv or jsonl; split: calibration or holdout")
    lines = exports.export_lines(fmt=fmt, split=split, since=since, method=method, bom=bom)
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(
        (line.encode("utf-8") for line in lines), content_type=f"{content_type}; charset=utf-8"
    )
    name = "-".join(["labels", *(x for x in (split, method) if x)])
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
