from typing import Any

from django import forms
from django.utils.translation import gettext_lazy
from django.utils.translation import gettext_lazy as _

from dedup_site.http import BIGINT_MAX, bounded_int
from reviews.models import Label, preset_reason_text


def _choices(form: forms.Form, name: str, document_ids: list[int]) -> None:
    """Offer exactly these documents in the form's document field."""
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)
    field.choices = [(d, str(d)) for d in document_ids]


VERDICT_KEYS = {
    Label.Verdict.DUPLICATE: "1",
    Label.Verdict.NEAR_DUPLICATE: "2",
    Label.Verdict.REVISION: "3",
    Label.Verdict.DISTINCT: "4",
    Label.Verdict.UNSURE: "5",
}

SPLIT_REASONS = [
    ("different_item", _("different item or story")),
    ("numbers_differ", _("prices, numbers or ids differ")),
    ("shared_template", _("only the template is shared")),
    ("chain", _("chained group: the ends are not the same")),
    ("distinct_label", _("a distinct label separates them")),
    ("other", _("other (see text)")),
]

REPRESENTATIVE_POLICIES = [
    ("site_priority", _("preferred site")),
    ("extraction_complete", _("most complete extraction")),
    ("newest", _("newest snapshot")),
    ("oldest", _("first published")),
    ("canonical_url", _("canonical URL")),
    ("editorial", _("editorial choice (see text)")),
]


# The preset a verdict saves with when the editor picks none (keys 1–5 then Enter).
DEFAULT_PRESETS = {
    Label.Verdict.DUPLICATE: Label.ReasonCode.SAME_TEXT,
    Label.Verdict.NEAR_DUPLICATE: Label.ReasonCode.COSMETIC,
    Label.Verdict.REVISION: Label.ReasonCode.UPDATED,
    Label.Verdict.DISTINCT: Label.ReasonCode.DIFFERENT_ITEM,
    Label.Verdict.UNSURE: Label.ReasonCode.UNCLEAR,
}
# Presets that say nothing by themselves: a note is required with them.
PRESETS_NEEDING_A_NOTE = (Label.ReasonCode.OTHER,)


# The key that picks each preset on the pair page: none of the desk's other keys (1–5,
# j n k s u a ?), a letter of the preset's words where one is free.
R = Label.ReasonCode
REASON_KEYS: dict[str, str] = {
    R.SAME_TEXT: "t",
    R.COSMETIC: "c",
    R.SYNDICATED: "y",
    R.UPDATED: "e",
    R.NUMBERS_DIFFER: "i",
    R.DIFFERENT_ITEM: "d",
    R.SHARED_TEMPLATE: "b",
    R.LOGIN_WALL: "l",
    R.UNCLEAR: "x",
    R.OTHER: "o",
}


class ReasonSelect(forms.Select):
    """The presets, each option carrying its key (``data-key``, read by desk.js) and
    showing it before the preset's text."""

    def create_option(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(*args, **kwargs)
        key = REASON_KEYS.get(str(option["value"]))
        if key:
            option["attrs"]["data-key"] = key
            option["label"] = f"{key} · {option['label']}"
        return option


class LabelForm(forms.Form):
    """A preset is a reason: the note is optional except with "other". With no preset
    chosen the verdict's default preset is used; with no note the preset's text is the
    recorded reason."""

    verdict = forms.ChoiceField(choices=Label.Verdict.choices, widget=forms.RadioSelect)
    reason_code = forms.ChoiceField(
        choices=[("", _("the verdict's default")), *Label.ReasonCode.choices],
        label=_("Reason"),
        required=False,
        widget=ReasonSelect,
    )
    reason = forms.CharField(
        max_length=2000,
        label=_("Note"),
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": _("optional note")}),
    )
    region = forms.ChoiceField(
        choices=Label.Region.choices, initial=Label.Region.BODY, label=_("Region that decided")
    )
    purpose = forms.ChoiceField(
        choices=Label.Purpose.choices, initial=Label.Purpose.REVIEW, label=_("Purpose")
    )

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        verdict = data.get("verdict")
        if not verdict:
            return data
        code = data.get("reason_code") or DEFAULT_PRESETS[Label.Verdict(verdict)]
        data["reason_code"] = str(code)
        note = (data.get("reason") or "").strip()
        if not note and code in PRESETS_NEEDING_A_NOTE:
            self.add_error("reason", _("The preset “other” needs a note saying why."))
        data["reason"] = note or preset_reason_text(str(code))
        return data


class QueueFilterForm(forms.Form):
    kind = forms.ChoiceField(
        required=False,
        choices=[("", _("pairs and groups")), ("pair", _("pairs")), ("group", _("groups"))],
    )
    status = forms.ChoiceField(
        required=False,
        choices=[
            ("", _("needs review")),
            ("unlabeled", _("unlabeled")),
            ("disputed", _("disputed")),
            ("stale", _("stale")),
            ("labeled", _("done")),
            ("all", _("all")),
        ],
    )
    doc_type = forms.CharField(required=False)
    site = forms.CharField(required=False)
    method = forms.CharField(required=False)
    guard = forms.ChoiceField(
        required=False,
        choices=[
            ("", _("any or none")),
            ("any", _("any guard")),
            ("none", _("no guard")),
            ("numbers_differ", _("numbers differ")),
            ("ids_differ", _("ids differ")),
            ("title_differs", _("title differs")),
        ],
    )
    channel = forms.ChoiceField(
        required=False,
        choices=[
            ("", _("any channel")),
            ("exact", _("exact")),
            ("simhash", _("SimHash")),
            ("passages", _("passages")),
        ],
    )
    # One label holds both ends of the range: each end names itself.
    distance_min = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=64,
        widget=forms.NumberInput(attrs={"aria-label": gettext_lazy("smallest distance")}),
    )
    distance_max = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=64,
        widget=forms.NumberInput(attrs={"aria-label": gettext_lazy("largest distance")}),
    )


class SplitForm(forms.Form):
    document_ids = forms.TypedMultipleChoiceField(
        coerce=int, widget=forms.CheckboxSelectMultiple, label=_("Members to move")
    )
    detach = forms.BooleanField(required=False, label=_("Detach as singletons (no new group)"))
    reason_code = forms.ChoiceField(choices=SPLIT_REASONS, label=_("Reason"))
    reason = forms.CharField(max_length=2000, label=_("Why (required)"))

    def __init__(self, *args: object, member_ids: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _choices(self, "document_ids", member_ids)


class RepresentativeForm(forms.Form):
    document_id = forms.TypedChoiceField(coerce=int, label=_("Representative"))
    reason_code = forms.ChoiceField(choices=REPRESENTATIVE_POLICIES, label=_("Policy"))
    reason = forms.CharField(max_length=2000, label=_("Why (required)"))

    def __init__(self, *args: object, member_ids: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _choices(self, "document_id", member_ids)


MERGE_REASONS = [
    ("same_item", _("same item or story")),
    ("syndicated", _("syndicated copy")),
    ("missed_by_index", _("the index missed them")),
    ("other", _("other (see text)")),
]


class MergeForm(forms.Form):
    """Merge another group, or documents, into this group (one of the two)."""

    other_group = forms.IntegerField(
        required=False, min_value=1, max_value=BIGINT_MAX, label=_("Group to merge in")
    )
    document_ids = forms.CharField(
        required=False, max_length=2000, label=_("or document ids"), help_text=_("comma separated")
    )
    reason_code = forms.ChoiceField(choices=MERGE_REASONS, label=_("Reason"))
    reason = forms.CharField(max_length=2000, label=_("Why (required)"))

    def clean_document_ids(self) -> list[int]:
        raw = self.cleaned_data["document_ids"].replace(",", " ").split()
        ids = [bounded_int(x, lo=1) for x in raw]
        if None in ids:
            raise forms.ValidationError(_("document ids are numbers, comma separated"))
        return sorted({x for x in ids if x is not None})

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if not data.get("other_group") and not data.get("document_ids"):
            raise forms.ValidationError(_("give a group or some document ids to merge in"))
        return data


class RestoreForm(forms.Form):
    reason = forms.CharField(max_length=2000, label=_("Why restore (required)"))


class ProposalsForm(forms.Form):
    proposal_ids = forms.TypedMultipleChoiceField(coerce=int, widget=forms.CheckboxSelectMultiple)
    verdict = forms.ChoiceField(choices=[("approve", _("approve")), ("reject", _("reject"))])
    reason = forms.CharField(max_length=2000, label=_("Why (required)"))

    def __init__(self, *args: object, proposal_ids: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _choices(self, "proposal_ids", proposal_ids)


class AdjudicationForm(forms.Form):
    verdict = forms.ChoiceField(choices=Label.Verdict.choices, label=_("Final verdict"))
    reason_code = forms.ChoiceField(choices=Label.ReasonCode.choices, label=_("Reason"))
    reason = forms.CharField(max_length=2000, label=_("Why (required)"))


class LabelImportForm(forms.Form):
    file = forms.FileField(label=_("Label file (CSV or JSONL, as exported)"))
    format = forms.ChoiceField(
        required=False,
        label=_("Format"),
        choices=[("", _("from the file name")), ("csv", _("CSV")), ("jsonl", _("JSONL"))],
    )
