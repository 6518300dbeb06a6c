"""The desk's keys in a real browser never act while an input method composes (Pinyin,
Telex: the keydown carries isComposing, or keyCode 229 as Safari sends it) nor while the
editor types a note, and answer to the physical key on a non-Latin layout."""

from typing import Any

import pytest

from ingest.models import CandidatePair
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ZH = "新华社北京五月一日电，记者今天从市政府获悉，城市地铁三号线将于明年年底建成通车。" * 3

# Every click a key makes on a data-key element, and every form submission, is recorded
# and stopped (so nothing navigates away while the test looks).
WATCH = """() => {
  window.__acts = [];
  document.addEventListener('click', e => {
    const el = e.target.closest && e.target.closest('[data-key]');
    if (el && el.type !== 'radio') {
      window.__acts.push('click ' + el.dataset.key);
      e.preventDefault();
    }
  }, true);
  document.addEventListener('submit', e => {
    window.__acts.push('submit');
    e.preventDefault();
  }, true);
}"""

KEYDOWN = """([init, selector]) => {
  const target = selector ? document.querySelector(selector) : document.body;
  const event = new KeyboardEvent('keydown', {bubbles: true, cancelable: true, ...init});
  target.dispatchEvent(event);
}"""


def _pair() -> CandidatePair:
    a = factories.reviewed_document(url="https://news.example.cn/a", text=ZH, flips=0)
    b = factories.reviewed_document(url="https://portal.example.com/b", text=ZH + "。", flips=2)
    factories.find(a, b)
    return factories.pair_of(a, b)


def _state(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => ({acts: window.__acts.slice(),
                   checked: [...document.querySelectorAll('input[name=verdict]')]
                              .filter(r => r.checked).map(r => r.value),
                   dialog: document.getElementById('keys-help').open})"""
    )


def test_keys_never_fire_while_an_input_method_composes(logged_in) -> None:
    page = logged_in
    pair = _pair()
    page.goto(f"/review/pairs/{pair.id}/")
    page.wait_for_selector("form[data-label-form]")
    page.evaluate(WATCH)
    quiet = {"acts": [], "checked": [], "dialog": False}

    # Keys of a composition, as Chromium and Firefox flag them, and as Safari sends them.
    for init in (
        {"key": "1", "code": "Digit1", "isComposing": True},
        {"key": "n", "code": "KeyN", "isComposing": True},
        {"key": "s", "code": "KeyS", "isComposing": True},
        {"key": "?", "code": "Slash", "shiftKey": True, "isComposing": True},
        {"key": "Enter", "code": "Enter", "isComposing": True},
        {"key": "n", "code": "KeyN", "keyCode": 229},
        {"key": "Enter", "code": "Enter", "keyCode": 229},
        {"key": "Process", "code": "KeyJ", "keyCode": 229},
    ):
        page.evaluate(KEYDOWN, [init, None])
        assert _state(page) == quiet, init

    # Composing a Vietnamese note (Telex) in the reason field: a composition, then its keys.
    field = "form[data-label-form] input[name=reason]"
    page.focus(field)
    page.evaluate(
        f"() => document.querySelector('{field}').dispatchEvent("
        "new CompositionEvent('compositionstart', {bubbles: true, data: ''}))"
    )
    for init in (
        {"key": "1", "code": "Digit1", "isComposing": True},
        {"key": "Enter", "code": "Enter", "isComposing": True},
    ):
        page.evaluate(KEYDOWN, [init, field])
    page.evaluate(
        f"() => document.querySelector('{field}').dispatchEvent("
        "new CompositionEvent('compositionend', {bubbles: true, data: 'giống hệt'}))"
    )
    assert _state(page) == quiet
    # Typing a note with the keys' letters in it: text, not shortcuts.
    page.fill(field, "")
    page.keyboard.type("1 2 jnksu? giống hệt 中文")
    assert page.input_value(field) == "1 2 jnksu? giống hệt 中文"
    assert _state(page) == quiet
    page.keyboard.press("Escape")  # leaves the field
    assert page.evaluate("document.activeElement === document.body")

    # Once composing is over the same keys work, on a Russian layout or with a full-width
    # digit too: by the physical key.
    page.evaluate(KEYDOWN, [{"key": "１", "code": "Digit1"}, None])
    assert _state(page)["checked"] == ["duplicate"]
    page.keyboard.press("Escape")
    page.evaluate(KEYDOWN, [{"key": "ы", "code": "KeyS"}, None])
    assert _state(page)["acts"] == ["click s"]
    page.evaluate(KEYDOWN, [{"key": "т", "code": "KeyN"}, None])
    assert _state(page)["acts"] == ["click s", "click j n"]
    page.evaluate(KEYDOWN, [{"key": ",", "code": "Slash", "shiftKey": True}, None])
    assert _state(page)["dialog"] is True
