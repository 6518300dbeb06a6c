from typing import Any

from django import forms
from django.utils.translation import gettext_lazy

from dedup_site.http import BIGINT_MAX, bounded_int
from reviews.models import Label


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
    ("different_item", "different item or story"),
    ("numbers_differ", "prices, numbers or ids differ"),
    ("shared_template", "only the template is shared"),
    ("chain", "chained group: the ends are not the same"),
    ("distinct_label", "a distinct label separates them"),
    ("other", "other (see text)"),
]

REPRESENTATIVE_POLICIES = [
    ("site_priority", "preferred site"),
    ("extraction_complete", "most complete extraction"),
    ("newest", "newest snapshot"),
    ("oldest", "first published"),
    ("canonical_url", "canonical URL"),
    ("editorial", "editorial choice (see text)"),
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
        choices=[("", "the verdict's default"), *Label.ReasonCode.choices],
        label="Reason",
        required=False,
        widget=ReasonSelect,
    )
    reason = forms.CharField(
        max_length=2000,
        label="Note",
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": "optional note"}),
    )
    region = forms.ChoiceField(
        choices=Label.Region.choices, initial=Label.Region.BODY, label="Region that decided"
    )
    purpose = forms.ChoiceField(choices=Label.Purpose.choices, initial=Label.Purpose.REVIEW)

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        verdict = data.get("verdict")
        if not verdict:
            return data
        code = data.get("reason_code") or DEFAULT_PRESETS[Label.Verdict(verdict)]
        data["reason_code"] = str(code)
        note = (data.get("reason") or "").strip()
        if not note and code in PRESETS_NEEDING_A_NOTE:
            self.add_error("reason", "The preset “other” needs a note saying why.")
        data["reason"] = note or Label.ReasonCode(code).label
        return data


class QueueFilterForm(forms.Form):
    kind = forms.ChoiceField(
        required=False, choices=[("", "pairs and groups"), ("pair", "pairs"), ("group", "groups")]
    )
    status = forms.ChoiceField(
        required=False,
        choices=[
            ("", "needs review"),
            ("unlabeled", "unlabeled"),
            ("disputed", "disputed"),
            ("stale", "stale"),
            ("labeled", "done"),
            ("all", "all"),
        ],
    )
    doc_type = forms.CharField(required=False)
    site = forms.CharField(required=False)
    method = forms.CharField(required=False)
    guard = forms.ChoiceField(
        required=False,
        choices=[
            ("", "any or none"),
            ("any", "any guard"),
            ("none", "no guard"),
            ("numbers_differ", "numbers differ"),
            ("ids_differ", "ids differ"),
            ("title_differs", "title differs"),
        ],
    )
    channel = forms.ChoiceField(
        required=False,
        choices=[
            ("", "any channel"),
            ("exact", "exact"),
            ("simhash", "SimHash"),
            ("passages", "passages"),
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
        coerce=int, widget=forms.CheckboxSelectMultiple, label="Members to move"
    )
    detach = forms.BooleanField(required=False, label="Detach as singletons (no new group)")
    reason_code = forms.ChoiceField(choices=SPLIT_REASONS, label="Reason")
    reason = forms.CharField(max_length=2000, label="Why (required)")

    def __init__(self, *args: object, member_ids: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _choices(self, "document_ids", member_ids)


class RepresentativeForm(forms.Form):
    document_id = forms.TypedChoiceField(coerce=int, label="Representative")
    reason_code = forms.ChoiceField(choices=REPRESENTATIVE_POLICIES, label="Policy")
    reason = forms.CharField(max_length=2000, label="Why (required)")

    def __init__(self, *args: object, member_ids: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _choices(self, "document_id", member_ids)


MERGE_REASONS = [
    ("same_item", "same item or story"),
    ("syndicated", "syndicated copy"),
    ("missed_by_index", "the index missed them"),
    ("other", "other (see text)"),
]


class MergeForm(forms.Form):
    """Merge another group, or documents, into this group (one of the two)."""

    other_group = forms.IntegerField(
        required=False, min_value=1, max_value=BIGINT_MAX, label="Group to merge in"
    )
    document_ids = forms.CharField(
        required=False, max_length=2000, label="or document ids", help_text="comma separated"
    )
    reason_code = forms.ChoiceField(choices=MERGE_REASONS, label="Reason")
    reason = forms.CharField(max_length=2000, label="Why (required)")

    def clean_document_ids(self) -> list[int]:
        raw = self.cleaned_data["document_ids"].replace(",", " ").split()
        ids = [bounded_int(x, lo=1) for x in raw]
        if None in ids:
            raise forms.ValidationError("document ids are numbers, comma separated")
        return sorted({x for x in ids if x is not None})

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if not data.get("other_group") and not data.get("document_ids"):
            raise forms.ValidationError("give a group or some document ids to merge in")
        return data


class RestoreForm(forms.Form):
    reason = forms.CharField(max_length=2000, label="Why restore (required)")


class ProposalsForm(forms.Form):
    proposal_ids = forms.TypedMultipleChoiceField(coerce=int, widget=forms.CheckboxSelectMultiple)
    verdict = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject")])
    reason = forms.CharField(max_length=2000, label="Why (required)")

    def __init__(self, *args: object, proposal_ids: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _choices(self, "proposal_ids", proposal_ids)


class AdjudicationForm(forms.Form):
    verdict = forms.ChoiceField(choices=Label.Verdict.choices, label="Final verdict")
    reason_code = forms.ChoiceField(choices=Label.ReasonCode.choices, label="Reason")
    reason = forms.CharField(max_length=2000, label="Why (required)")


class LabelImportForm(forms.Form):
    file = forms.FileField(label="Label file (CSV or JSONL, as exported)")
    format = forms.ChoiceField(
        required=False,
        choices=[("", "from the file name"), ("csv", "CSV"), ("jsonl", "JSONL")],
    )
