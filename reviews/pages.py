"""The desk's two review pages, rendered whole or as the fragment an htmx request swaps
in: the pair page (label form, diffs, SimHash panel) and the group page (split,
representative, merge and restore forms, history), and the group page's answer when an
editor lost a race (the conflict goes on the record). Every view that shows a pair or a
group renders it through here."""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy as _

from ingest.core.warc_archive import ArchiveError
from ingest.models import CandidateGroup
from reviews import roles, rules
from reviews.core.words import Said, gettext_noop
from reviews.decisions import audit, decision_records, group_merges, group_reads
from reviews.forms import (
    VERDICT_KEYS,
    AdjudicationForm,
    LabelForm,
    MergeForm,
    RepresentativeForm,
    SplitForm,
)
from reviews.http import DeskRequest, bounded_int, error_text, fragment, template_for
from reviews.labels import label_reads, preferences
from reviews.pair import pair_reads, panels, simhash_panel, text_diffs

DIFF_TABS = (
    ("main", _("main text diff")),
    ("aligned", _("aligned sentences")),
    ("full", _("full-page text diff")),
    ("source", _("source rendered")),
    ("html", _("HTML source diff")),
)
DIFF_VIEWS = tuple(key for key, _name in DIFF_TABS)


def pair_context(
    request: DeskRequest,
    pair: Any,
    *,
    form: LabelForm | None = None,
    diff_view: str = "main",
    notice: str = "",
) -> dict[str, Any]:
    view = pair_reads.pair_view(pair=pair, user=request.user)
    context: dict[str, Any] = {
        "view": view,
        "pair": pair,
        "form": form or LabelForm(initial=label_reads.label_defaults(user=request.user)),
        # The progress counter is fetched after the page (reviews:pair-progress): counting
        # the queue is a fifth of a long pair's first view.
        "diff_view": diff_view,
        "notice": notice,
        "verdict_keys": VERDICT_KEYS,
        "can_edit": roles.can_edit(request.user),
        "diff_tabs": DIFF_TABS,
        "can_adjudicate": roles.can_adjudicate(request.user),
        "simhash": simhash_panel.simhash_view(pair=pair),
        "panels": panels.panels(view),
        "adjudication_form": AdjudicationForm(),
        "previous_pair": label_reads.previous_pair_id(user=request.user, pair=pair),
    }
    context.update(diff_context(view, diff_view))
    return context


def diff_context(view: pair_reads.PairView, diff_view: str) -> dict[str, Any]:
    if diff_view in ("main", "full"):
        return {"word_diff": text_diffs.pair_text_diff(view=view, branch=diff_view)}
    if diff_view == "aligned":
        return {"alignment": text_diffs.pair_alignment(view=view)}
    if diff_view == "html":
        try:
            return {"line_diff": text_diffs.pair_source_diff(pair=view.pair)}
        except ArchiveError as exc:  # a missing or changed archive file: said, not a 500
            return {"source_error": str(exc)}
    return {}


def pair_render(
    request: DeskRequest,
    pair: Any,
    *,
    partial: str | None = None,
    form: LabelForm | None = None,
    notice: str = "",
    diff_view: str = "main",
) -> HttpResponse:
    template = template_for("reviews/pair_detail.html", partial)
    return render(
        request,
        template,
        pair_context(request, pair, form=form, diff_view=diff_view, notice=notice),
    )


def group_decision_context(
    request: DeskRequest,
    view: group_reads.GroupView,
    *,
    merge_form: MergeForm | None = None,
    restore_errors: dict[int, str] | None = None,
    conflict: bool = False,
) -> dict[str, Any]:
    """What the group page adds for merges and restores: the merge form, which history
    rows can still be restored, and restore errors by decision."""
    restored = audit.restored_ids(view.decisions)
    return {
        "merge_form": merge_form or MergeForm(),
        "restorable": {
            d.pk for d in view.decisions if group_merges.restorable(d) and d.pk not in restored
        },
        "restored": restored,
        "restore_errors": restore_errors or {},
        "conflict": conflict,
    }


def group_render(
    request: DeskRequest,
    group: Any,
    *,
    split_form: SplitForm | None = None,
    rep_form: RepresentativeForm | None = None,
    notice: str = "",
    partial: str | None = None,
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    view = group_reads.group_view(group=group)
    ids = [m.document.pk for m in view.members]
    template = template_for("reviews/group_detail.html", partial)
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
            "is_decided": decision_records.deciding(group) is not None,
            "blind": preferences.blind_mode_for(user=request.user),
        },
    )


def expected_version(request: HttpRequest) -> int:
    """The group version the editor's form was rendered at (optimistic versioning).
    Required: without it two editors' changes could both apply, so a form without it
    is refused like any invalid form."""
    version = bounded_int(request.POST.get("version", ""))
    if version is None:
        raise rules.ReviewError(
            Said(
                gettext_noop(
                    "This form lacks the group's version, so a concurrent change could not "
                    "be detected: nothing was applied. Reload the page and try again."
                )
            )
        )
    return version


def group_conflict(
    request: DeskRequest,
    conflict: decision_records.GroupConflict,
    action: str,
    document_ids: list[int],
    form: Any,
) -> HttpResponse:
    """The losing editor: the attempt goes on the record, the page shows the current
    state (the form is not re-filled: it was decided on a stale view)."""
    group_merges.conflict_record(
        conflict=conflict,
        editor=request.user,
        action=action,
        document_ids=document_ids,
        reason_code=form.cleaned_data.get("reason_code", ""),
        reason=form.cleaned_data.get("reason", ""),
    )
    group = group_reads.group_get(group_id=conflict.group.pk)
    response = group_render(
        request,
        group,
        notice=str(conflict),
        partial=fragment(request, "group-review"),
        extra={"conflict": True},
    )
    if not request.htmx:
        response.status_code = 409
    return response


def group_done(request: DeskRequest, group: CandidateGroup, notice: str) -> HttpResponse:
    """A group action that went through: the group page again (without htmx), or the
    refreshed review fragment with the notice."""
    if not request.htmx:
        return redirect("reviews:group-detail", group.pk)
    group.refresh_from_db()
    return group_render(request, group, notice=notice, partial="group-review")


def group_form_answer(
    request: DeskRequest,
    group: CandidateGroup,
    form: Any,
    *,
    action: str,
    document_ids: Callable[[], list[int]],
    apply: Callable[[], str],
    shown_with: dict[str, Any],
) -> HttpResponse:
    """The one flow of a group form: when the form is valid, `apply()` makes the
    decision and says what was done (`group_done`); a lost race goes on the record and
    shows the current state (`group_conflict`); a refusal shows on the form, as does an
    invalid form: the group page again, the form shown as `shown_with` says."""
    if form.is_valid():
        try:
            notice = apply()
        except decision_records.GroupConflict as e:
            return group_conflict(request, e, action, document_ids(), form)
        except rules.ReviewError as e:
            form.add_error(None, error_text(e))
        else:
            return group_done(request, group, notice)
    return group_render(request, group, partial=fragment(request, "group-review"), **shown_with)
