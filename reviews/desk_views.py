"""Desk pages for adjudication, editor agreement and label import in the browser.
Views translate: reviews.labels owns the rules (labelling, agreement, imports)."""

import io

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from reviews import pages, roles, rules
from reviews.forms import AdjudicationForm, LabelImportForm
from reviews.http import DeskRequest, error_text, require_admin, said_text
from reviews.labels import agreement, exports, imports, labelling
from reviews.models import Label
from reviews.pair import pair_reads
from reviews.queue import wall_pages


@login_required
@require_POST
def pair_adjudicate(request: DeskRequest, pair_id: int) -> HttpResponse:
    """The final label of a disputed pair (adjudicator or admin)."""
    if not roles.can_adjudicate(request.user):
        raise PermissionDenied("adjudicating needs the adjudicator or admin role")
    pair = pair_reads.pair_get(pair_id=pair_id)
    form = AdjudicationForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            labelling.pair_adjudicate(
                pair=pair,
                adjudicator=request.user,
                **form.cleaned_data,
            )
        except rules.ReviewError as e:
            error = error_text(e)
        else:
            notice = gettext("Adjudicated pair %(pair)s: %(verdict)s.") % {
                "pair": pair.id,
                "verdict": Label.Verdict(form.cleaned_data["verdict"]).label,
            }
            if not request.htmx:
                messages.success(request, notice)
                return redirect("reviews:pair-detail", pair.id)
            return pages.pair_render(request, pair, partial="pair-review", notice=notice)
    else:
        error = "; ".join(str(e) for errs in form.errors.values() for e in errs)
    if not request.htmx:
        messages.error(request, gettext("Not adjudicated: %(error)s") % {"error": error})
        return redirect("reviews:pair-detail", pair.id)
    return pages.pair_render(
        request,
        pair,
        partial="pair-review",
        notice=gettext("Not adjudicated: %(error)s") % {"error": error},
    )


@require_admin
@require_http_methods(["GET"])
def agreement_page(request: HttpRequest) -> HttpResponse:
    """Agreement per editor and doc type: kappa per two editors, alpha overall, and
    agreement with the adjudicated label."""
    return render(
        request,
        "reviews/agreement.html",
        {"reports": agreement.agreement_reports(doc_types=list(settings.DOC_TYPES))},
    )


@require_admin
@require_http_methods(["GET", "POST"])
def labels_import(request: HttpRequest) -> HttpResponse:
    """Upload a label file: every row is checked first, as by `import_labels`; any bad
    row and nothing is imported."""
    form = LabelImportForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    result = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            fmt = exports.format_for(upload.name, form.cleaned_data["format"])
            text = upload.read().decode("utf-8-sig")
            result = imports.labels_import(stream=io.StringIO(text, newline=""), fmt=fmt)
        except UnicodeDecodeError:
            problems = [
                gettext("%(file)s is not UTF-8 text; nothing imported") % {"file": upload.name}
            ]
        except imports.LabelImportError as e:
            count = e.bad_rows
            heading = ngettext(
                "%(count)s row is bad:",
                "%(count)s rows are bad:",
                count,
            ) % {"count": count}
            problems = [heading, *(said_text(p) for p in e.problems)]
        except ValueError as e:
            problems = [error_text(e)]
    return render(
        request,
        "reviews/labels_import.html",
        {"form": form, "problems": problems, "result": result},
    )


@login_required
@require_http_methods(["GET"])
def crawl_quality(request: HttpRequest) -> HttpResponse:
    """Login walls, captchas, bot challenges and empty pages: a crawl problem, not
    duplicates to review, so they are listed here instead of in the queue."""
    if not roles.can_view(request.user):
        raise PermissionDenied("the review desk needs the editor, auditor or admin role")
    return render(
        request,
        "reviews/crawl_quality.html",
        {"quality": wall_pages.crawl_quality(), "statuses": wall_pages.WALL_STATUSES},
    )
