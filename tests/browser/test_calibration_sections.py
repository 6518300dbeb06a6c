"""The calibration page in a real browser: a section loads when an auditor opens it,
under the site's CSP (no inline script or style)."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from reviews.calibration import stored_figures
from reviews.labels import labelling
from tests.factories import TEXT, find, pair_of, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_section_loads_when_opened(logged_in) -> None:
    page = logged_in
    editor = User.objects.get(username="eve")
    a = reviewed_document(url="https://wire.example.com/a", text=TEXT)
    b = reviewed_document(url="https://copy.example.com/b", text=TEXT + " more", flips=1)
    find(a, b)
    labelling.label_record(
        pair=pair_of(a, b),
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="r",
        region="body",
    )
    stored_figures.figures_recompute()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto("/review/calibration/")
    expect(page.locator("#report-1 table.recommendations")).to_be_visible()
    sweep = page.locator("#sweep-1-more")
    expect(sweep.locator("table.sweep")).to_have_count(0)
    sweep.locator("summary").click()
    expect(sweep.locator("table.sweep")).to_be_visible()
    expect(sweep.locator("svg").first).to_be_visible()
    assert errors == []
