"""Rough edges of the desk an editor meets in the first week, each in a real browser:
the address bar follows "Save and next" at once, no Content-Security-Policy violation
after htmx saves and the `a` key, and skipping hands the pair back to the queue."""

import random

import pytest

from ingest.models import CandidatePair
from reviews.models import Claim
from tests import factories
from tests.factories import find, group_of, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Wait until the review panel shows another pair than `old`, and answer the path the
# address bar showed when it did (read in the mutation's own task, not later).
WAIT_NEXT = """old => new Promise(resolve => {
  const seen = () => {
    const s = document.querySelector('#pair-review');
    return s && s.dataset.pair && s.dataset.pair !== old ? s.dataset.pair : null;
  };
  const now = seen();
  if (now) return resolve([now, location.pathname]);
  const watch = new MutationObserver(() => {
    const pair = seen();
    if (pair) { watch.disconnect(); resolve([pair, location.pathname]); }
  });
  watch.observe(document.body, {subtree: true, childList: true, attributes: true});
})"""


# htmx has taken over the forms of the panel swapped in (a key pressed before would
# submit a form the plain way).
SETTLED = """() => { const forms = document.querySelectorAll('#pair-review form[hx-post]');
  return forms.length > 0 && [...forms].every(f => f['htmx-internal-data'])
    && !document.querySelector('.htmx-settling, .htmx-swapping'); }"""


def _next(page, old: str) -> tuple[str, str]:
    shown, path = page.evaluate(WAIT_NEXT, old)
    page.wait_for_function(SETTLED)
    return shown, path


def _pairs(n: int, *, words: int) -> list[CandidatePair]:
    docs = []
    for i in range(n):
        text = factories.article_text(700 + i, words=words)
        base = random.Random(i).getrandbits(64)  # ~32 bits from every other pair
        a = reviewed_document(url=f"https://a.example.com/{i}", text=text, base=base)
        b = reviewed_document(
            url=f"https://b.example.com/{i}", text=text + " more", flips=1 + i % 3, base=base
        )
        docs += [a, b]
    find(*docs)
    return list(CandidatePair.objects.order_by("id"))


def _violations(page) -> list[str]:
    page.add_init_script(
        "window.__csp = [];"
        "document.addEventListener('securitypolicyviolation', e =>"
        " window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' '"
        " + (e.sample || '')));"
    )
    consoles: list[str] = []
    page.on("console", lambda m: consoles.append(m.text))
    return consoles


def test_save_and_next_shows_the_new_pairs_url_at_once(logged_in) -> None:
    pairs = _pairs(9, words=3000)  # long pages, as on a real crawl
    page = logged_in
    page.goto("/review/")
    page.keyboard.press("n")
    page.wait_for_selector("#pair-review[data-pair]")
    page.wait_for_function(SETTLED)
    for _ in range(len(pairs) - 1):
        current = page.locator("#pair-review").get_attribute("data-pair")
        assert page.evaluate("location.pathname") == f"/review/pairs/{current}/"
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        shown, path = _next(page, current)
        # The address bar names the pair shown the moment it is shown.
        assert path == f"/review/pairs/{shown}/", (shown, path)


def test_no_csp_violation_after_htmx_saves_and_the_accept_key(page, live_server) -> None:
    consoles = _violations(page)
    factories.user_create(username="eve", role="editor", password="pw-eve-123")
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "eve")
    page.fill("input[name=password]", "pw-eve-123")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{live_server.url}/")
    _pairs(3, words=120)
    page.goto("/review/")
    page.keyboard.press("n")
    page.wait_for_selector("#pair-review[data-pair]")
    page.wait_for_function(SETTLED)
    for _ in range(2):
        current = page.locator("#pair-review").get_attribute("data-pair")
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        _next(page, current)
    # The `a` key on a group page: accept the group (an htmx form too).
    text = factories.article_text(990, words=120)
    base = random.Random(99).getrandbits(64)
    x = reviewed_document(url="https://g.example.com/x", text=text, base=base)
    y = reviewed_document(url="https://h.example.com/y", text=text + " tail", flips=1, base=base)
    find(x, y)
    group = group_of(x)
    page.goto(f"/review/groups/{group.pk}/")
    page.keyboard.press("a")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    found = page.evaluate("window.__csp")
    inline = [
        c for c in consoles if "Content Security Policy" in c or "Content-Security-Policy" in c
    ]
    assert found == [] and inline == [], (found, inline)


def test_skipping_releases_the_claim_and_the_pair_does_not_come_straight_back(
    logged_in,
) -> None:
    pairs = _pairs(3, words=120)
    page = logged_in
    page.goto("/review/")
    page.keyboard.press("n")
    page.wait_for_selector("#pair-review[data-pair]")
    page.wait_for_function(SETTLED)
    first = page.locator("#pair-review").get_attribute("data-pair")
    assert first is not None
    page.keyboard.press("s")
    second, _ = _next(page, first)
    # The skipped pair is free for anyone at once, not held for the lease.
    held = Claim.objects.filter(pair_id=int(first), released_at__isnull=True)
    assert not held.exists()
    # Skipping the next one does not hand the first straight back.
    page.keyboard.press("s")
    third, _ = _next(page, second)
    assert third != first, (first, second, third)
    assert {first, second, third} == {str(p.id) for p in pairs}
