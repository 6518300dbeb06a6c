"""Crawled HTML is hostile, in a real browser: a hostile crawled page runs no script and fetches
nothing, neither in the pair view nor in its sandboxed frame."""

import pytest
from playwright.sync_api import Dialog, expect

from tests.factories import find, pair_of, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXTERNAL = "http://203.0.113.9"
HOSTILE = f"""<!doctype html><html><head><title>Hostile</title>
<meta http-equiv="refresh" content="1;url={EXTERNAL}/refresh">
<link rel="stylesheet" href="{EXTERNAL}/style.css">
<script>document.documentElement.setAttribute('data-pwned', 'script');
  window.parent.__pwned = 'script'; new Image().src = '/pwned-script';</script>
</head><body>
<h1>Lamp offer</h1>
<p>Cheap lamps here <img src="x" onerror="document.documentElement.setAttribute('data-pwned',
 'onerror'); window.parent.__pwned = 'onerror'; fetch('/pwned-onerror')"></p>
<img id="external" src="{EXTERNAL}/x.png">
<p><a id="jslink" href="javascript:document.documentElement.setAttribute('data-pwned','js');
  window.parent.__pwned='js'">click me</a></p>
</body></html>"""
TEXT = (
    "Lamp offer <script>window.__pwned='text'</script> <img src=x "
    "onerror=\"window.__pwned='text-onerror'\"> "
    f'<a href="javascript:window.__pwned=1">link</a> <img src="{EXTERNAL}/y.png"> '
) * 10


def test_the_hostile_page_does_run_without_the_sandbox(browser) -> None:
    """Control: outside the desk's sandbox the same page does run its scripts, so the
    test below would notice."""
    context = browser.new_context()
    context.route("**/*", lambda r: r.abort())
    page = context.new_page()
    page.set_content(HOSTILE.replace('<meta http-equiv="refresh"', '<meta name="x"'))
    page.wait_for_function("document.documentElement.dataset.pwned")
    context.close()


def test_a_hostile_page_runs_nothing_and_fetches_nothing(logged_in, live_server) -> None:
    page = logged_in
    a = reviewed_document(url="https://evil.example.com/1", text=TEXT, html=HOSTILE)
    b = reviewed_document(
        url="https://evil.example.com/2", text=TEXT + " more", html=HOSTILE, flips=1
    )
    find(a, b)
    pair = pair_of(a, b)

    requests: list[str] = []
    blocked: list[str] = []

    def route(r) -> None:
        if r.request.url.startswith(live_server.url):
            r.continue_()
        else:  # never contact any other host
            blocked.append(r.request.url)
            r.abort()

    page.context.route("**/*", route)
    page.on("request", lambda req: requests.append(req.url))
    finished: list[str] = []
    page.on("requestfinished", lambda req: finished.append(req.url))
    failed: dict[str, str | None] = {}
    page.on("requestfailed", lambda req: failed.__setitem__(req.url, req.failure))
    consoles: list[str] = []
    page.on("console", lambda m: consoles.append(m.text))
    dialogs: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)

    page.goto(f"/review/pairs/{pair.id}/")
    # The hostile text is shown as text.
    expect(page.locator("#diff-panel")).to_contain_text("<script>window.__pwned='text'</script>")
    page.click("a:has-text('source rendered')")
    page.wait_for_selector("iframe[sandbox]")
    frames = page.locator("iframe[sandbox]")
    assert frames.count() == 2
    for i in range(2):
        assert frames.nth(i).get_attribute("sandbox") == ""
    page.wait_for_function(
        "() => [...document.querySelectorAll('iframe[sandbox]')].every("
        "f => f.contentDocument === null)"  # opaque origin: the desk cannot reach in either
    )
    _poll(page, lambda: len(page.frames) == 3, "both frames attached")
    children = [f for f in page.frames if f != page.main_frame]
    assert len(children) == 2
    for frame in children:
        frame.wait_for_load_state()
        expect(frame.locator("h1")).to_contain_text("Lamp offer")
        frame.click("#jslink")  # a javascript: link does nothing under the sandbox
    # Each frame's meta refresh is refused, not just delayed: the sandbox forbids it
    # (Chromium says so on the console), so no later navigation can come.
    _poll(
        page,
        lambda: sum("Refused to execute the redirect" in c for c in consoles) >= 2,
        "both frames' meta refresh refused",
    )

    for frame in [f for f in page.frames if f != page.main_frame]:
        assert frame.url.startswith(f"{live_server.url}/review/documents/")
        assert frame.locator("html").get_attribute("data-pwned") is None
    assert page.locator("html").get_attribute("data-pwned") is None
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    assert not [u for u in requests if "pwned" in u]
    # Chromium reports the external URLs the page asked for, then fails them on the
    # frame's policy before any connection: none reached the network (the route sees
    # every request that would), none finished.
    assert blocked == []
    assert [u for u in finished if not u.startswith(live_server.url)] == []
    _poll(page, lambda: any(not u.startswith(live_server.url) for u in failed), "CSP reports")
    external = [u for u in requests if not u.startswith(live_server.url)]
    assert external and all(u.startswith(EXTERNAL) for u in external)
    assert all(failed.get(u) == "csp" for u in external), failed


def _poll(page, check, what: str, timeout_ms: int = 10_000) -> None:
    """Wait on the browser's clock (events are delivered while it waits) until `check`."""
    waited = 0
    while not check():
        if waited >= timeout_ms:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(100)
        waited += 100
