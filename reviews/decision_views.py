"""Desk pages for merge decisions, restore, approvals and the audit page.
Views translate: reviews.decisions owns the rules, reviews.decisions.audit reads."""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviews import pages, roles, rules
from reviews.decisions import audit, automerge, decision_records, group_merges, group_reads
from reviews.forms import MergeForm, ProposalsForm, RestoreForm
from reviews.http import (
    DeskRequest,
    bounded_int,
    error_text,
    fragment,
    require_editor,
    require_viewer,
    template_for,
)


@require_editor
@require_POST
def group_merge(request: DeskRequest, group_id: int) -> HttpResponse:
    group = group_reads.group_get(group_id=group_id)
    form = MergeForm(request.POST)
    other = None
    if form.is_valid() and form.cleaned_data["other_group"]:
        other = audit.group_find(group_id=form.cleaned_data["other_group"])
        if other is None:
            form.add_error("other_group", "no such group")

    def merge() -> str:
        decision = group_merges.group_merge(
            group=group,
            editor=request.user,
            other_group=other,
            document_ids=form.cleaned_data["document_ids"],
            reason_code=form.cleaned_data["reason_code"],
            reason=form.cleaned_data["reason"],
            expected_version=pages.expected_version(request),
        )
        moved = ", ".join(map(str, decision.document_ids))
        return gettext("Merged %(documents)s into group %(group)s.") % {
            "documents": moved,
            "group": group.pk,
        }

    return pages.group_form_answer(
        request,
        group,
        form,
        action="merge",
        document_ids=lambda: form.cleaned_data["document_ids"],
        apply=merge,
        shown_with={"extra": {"merge_form": form}},
    )


@require_editor
@require_POST
def group_accept(request: DeskRequest, group_id: int) -> HttpResponse:
    """Accept the whole group at once (exact copies are decided as one item)."""
    group = group_reads.group_get(group_id=group_id)
    form = RestoreForm(request.POST)  # one field: the reason
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        automerge.group_accept(
            group=group,
            editor=request.user,
            reason=reason,
            expected_version=pages.expected_version(request),
        )
    except decision_records.GroupConflict as e:
        return pages.group_conflict(
            request, e, "accept", group_reads.group_member_ids(group=group), form
        )
    except rules.ReviewError as e:
        notice = gettext("Not accepted: %(error)s.") % {"error": error_text(e)}
    else:
        if not request.htmx:
            return redirect("reviews:group-detail", group.pk)
        notice = gettext("Accepted group %(group)s: all %(size)s members, in one decision.") % {
            "group": group.pk,
            "size": group.size,
        }
    group.refresh_from_db()
    return pages.group_render(
        request, group, notice=notice, partial=fragment(request, "group-review")
    )


@require_editor
@require_POST
def decision_restore(request: DeskRequest, decision_id: int) -> HttpResponse:
    decision = audit.decision_get(decision_id=decision_id)
    group = group_reads.group_get(group_id=decision.group_id)
    form = RestoreForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            restore = group_merges.decision_restore(
                decision=decision,
                editor=request.user,
                reason=form.cleaned_data["reason"],
                expected_version=pages.expected_version(request),
            )
        except decision_records.GroupConflict as e:
            return pages.group_conflict(request, e, "restore", decision.document_ids, form)
        except rules.ReviewError as e:
            error = error_text(e)
        else:
            notice = gettext(
                "Restored: decision %(decision)s (%(action)s) reverted by decision %(restore)s."
            ) % {"decision": decision.pk, "action": decision.action, "restore": restore.pk}
            return pages.group_done(request, group, notice)
    else:
        error = gettext("a reason is required")
    return pages.group_render(
        request,
        group,
        partial=fragment(request, "group-review"),
        extra={"restore_errors": {decision.pk: error}},
    )


# --- approval queue (semi-automatic merging) -------------------------------------------


@require_viewer
@require_http_methods(["GET", "POST"])
def approvals(request: DeskRequest) -> HttpResponse:
    pending = audit.proposals_pending()
    notice = ""
    form = ProposalsForm(
        request.POST or None, proposal_ids=list(pending.values_list("pk", flat=True))
    )
    if request.method == "POST":
        if not roles.can_edit(request.user):
            raise PermissionDenied("this needs the editor role")
        if form.is_valid():
            counts = automerge.proposals_decide(
                proposal_ids=form.cleaned_data["proposal_ids"],
                editor=request.user,
                approve=form.cleaned_data["verdict"] == "approve",
                reason=form.cleaned_data["reason"],
            )
            shown = {
                "approved": ngettext("%(n)s approved", "%(n)s approved", counts["approved"]),
                "rejected": ngettext("%(n)s rejected", "%(n)s rejected", counts["rejected"]),
                "stale": ngettext(
                    "%(n)s stale (the group changed)",
                    "%(n)s stale (the group changed)",
                    counts["stale"],
                ),
            }
            notice = ", ".join(
                shown[k] % {"n": v} for k, v in counts.items() if v and k in shown
            ) or gettext("Nothing changed.")
            form = ProposalsForm(proposal_ids=list(pending.values_list("pk", flat=True)))
    recent = audit.proposals_decided(limit=50)
    template = template_for(
        "reviews/approvals.html", fragment(request, "approvals-panel", boosted=False)
    )
    return render(
        request,
        template,
        {
            "pending": Paginator(pending, 200).get_page(request.GET.get("page")),
            "recent": recent,
            "form": form,
            "notice": notice,
            "can_edit": roles.can_edit(request.user),
            "modes": settings.AUTO_MERGE,
        },
    )


# --- audit page ----------------------------------------------------------------------


@require_viewer
@require_GET
def audit_page(request: HttpRequest) -> HttpResponse:
    days = bounded_int(request.GET.get("days"), lo=1, hi=366, default=30)
    return render(
        request,
        "reviews/audit.html",
        {
            "summary": audit.audit_summary(days=days),
            "days": days,
            "recent": audit.decisions_recent(limit=50),
        },
    )
