"""A preset is a reason: 1–5 then Enter saves; region and purpose keep their last
value; the progress counter and the saved notice work without JavaScript."""

import pytest
from django.urls import reverse

from reviews.forms import LabelForm
from reviews.labels import labelling
from reviews.models import Label
from reviews.queue import queue_counts
from reviews.queue.queue_filters import QueueFilters

pytestmark = pytest.mark.django_db


def test_a_verdict_alone_saves_with_its_default_preset() -> None:
    form = LabelForm({"verdict": "distinct", "region": "body", "purpose": "review"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["reason_code"] == "different_item"
    assert form.cleaned_data["reason"] == "different item or story"


def test_a_chosen_preset_needs_no_note() -> None:
    data = {"verdict": "duplicate", "reason_code": "syndicated", "region": "body"}
    form = LabelForm({**data, "purpose": "review"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["reason"] == Label.ReasonCode.SYNDICATED.label


def test_the_preset_other_needs_a_note() -> None:
    data = {"verdict": "unsure", "reason_code": "other", "region": "body", "purpose": "review"}
    assert not LabelForm(data).is_valid()
    assert LabelForm({**data, "reason": "both pages are half empty"}).is_valid()


def test_a_note_is_kept_as_the_reason() -> None:
    data = {"verdict": "duplicate", "reason": " same article ", "region": "body"}
    form = LabelForm({**data, "purpose": "review"})
    assert form.is_valid()
    assert form.cleaned_data["reason"] == "same article"


def test_region_and_purpose_keep_their_last_value(client, editor, pairs) -> None:
    labelling.label_record(
        pair=pairs[0],
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="x",
        region="numbers",
        purpose="calibration",
    )
    client.force_login(editor)
    form = client.get(reverse("reviews:pair-detail", args=[pairs[1].id])).context["form"]
    assert form["region"].value() == "numbers" and form["purpose"].value() == "calibration"


def test_without_javascript_the_next_page_says_saved(client, editor, pairs) -> None:
    client.force_login(editor)
    r = client.post(
        reverse("reviews:pair-label", args=[pairs[0].id]),
        {"verdict": "duplicate", "region": "body", "purpose": "review", "kind": "pair"},
        follow=True,
    )
    assert r.status_code == 200
    assert f"Saved “duplicate” (same text) on pair {pairs[0].id}." in r.content.decode()
    assert Label.objects.get().reason == "same text"


def test_the_progress_counter_counts_today_and_left(client, editor, pairs) -> None:
    labelling.label_record(
        pair=pairs[0],
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="x",
        region="body",
    )
    progress = queue_counts.progress_for(user=editor, filters=QueueFilters(kind="pair"))
    assert (progress.done_today, progress.left) == (1, 2)
    client.force_login(editor)
    # The page fetches its counter once shown.
    body = client.get(reverse("reviews:pair-detail", args=[pairs[1].id])).content.decode()
    assert f'id="progress" hx-get="{reverse("reviews:pair-progress")}"' in body
    assert "done today" not in body
    r = client.get(reverse("reviews:pair-progress"), headers={"HX-Request": "true"})
    assert r.content.decode().startswith('<p class="progress" id="progress">')
    assert "<b>1</b> done today · <b>2</b> left" in r.content.decode()


def test_the_progress_counter_is_for_editors(client, auditor, pairs) -> None:
    client.force_login(auditor)
    body = client.get(reverse("reviews:pair-detail", args=[pairs[1].id])).content.decode()
    assert 'id="progress"' not in body
    assert client.get(reverse("reviews:pair-progress")).status_code == 403
