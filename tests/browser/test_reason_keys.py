"""Reasons have keys too: an editor picks a preset other than the verdict's without the
mouse, and each preset shows its key."""

import pytest
from playwright.sync_api import expect

from reviews.forms import REASON_KEYS
from reviews.models import Label
from tests.factories import TEXT, find, pair_of, reviewed_document, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_reason_keys_are_one_letter_each_and_meet_no_other_key() -> None:
    keys = list(REASON_KEYS.values())
    assert len(set(keys)) == len(keys) == len(Label.ReasonCode.choices)
    taken = set("12345jnksua?")
    assert not taken & set(keys)


def test_a_reason_is_chosen_with_its_key(logged_in) -> None:
    page = logged_in
    a = reviewed_document(url="https://wire.example.com/a", text=TEXT)
    b = reviewed_document(url="https://copy.example.com/b", text=TEXT + " more", flips=1)
    find(a, b)
    pair = pair_of(a, b)
    page.goto(f"/review/pairs/{pair.id}/")
    option = page.locator("select[name=reason_code] option[value=syndicated]")
    expect(option).to_have_text("y · syndicated copy (new headline or byline)")
    expect(page.locator("#keys-help")).to_contain_text("choose the reason")
    page.keyboard.press("1")  # duplicate; the cursor goes to the note
    page.keyboard.press("Escape")
    page.keyboard.press("y")  # syndicated copy, not the preset "same text"
    expect(page.locator("select[name=reason_code]")).to_have_value("syndicated")
    page.keyboard.press("Enter")
    wait_until(lambda: Label.objects.filter(pair=pair).exists(), 10, "the label")
    label = Label.objects.get(pair=pair)
    assert (label.verdict, label.reason_code) == ("duplicate", "syndicated")
