"""Screenshots of the review desk for the README, from a running demo (`make demo`).

    .venv/bin/python docs/screenshots/take_screenshots.py [BASE_URL] [PAIR_ID] [GROUP_ID]
    .venv/bin/python docs/screenshots/take_screenshots.py --widths [BASE_URL] [PAIR_ID]
    .venv/bin/python docs/screenshots/take_screenshots.py --language LANG [BASE_URL] [PAIR_ID]

Logs in as the demo editor with Debian's Chromium and saves queue.png, pair.png,
aligned.png (the sentence alignment of the same pair), group.png and crawl_quality.png
next to this file; then as the demo admin, agreement.png. With --widths, the queue and a
pair (default: the demo's Chinese pair, 1) in a phone, a tablet and a laptop window:
queue-390.png, queue-768.png, queue-1440.png, pair-390.png, … Only the demo server is
contacted. Chinese needs a CJK font (Debian's fonts-noto-cjk), else it shows as boxes.
With --language vi (or zh-hans, zh-hant), the demo editor picks that language in the
header's switcher and the queue and a pair (default: 1) are taken in it at 1440 px, the
pair at 390 px too: queue-vi.png, pair-vi.png, pair-vi-390.png; the editor's language is
set back to English at the end.
"""

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
# A phone, a tablet and a laptop window (width, height).
WINDOWS = [(390, 844), (768, 1024), (1440, 900)]
args = sys.argv[1:]
widths = "--widths" in args
args = [a for a in args if a != "--widths"]
language = ""
if "--language" in args:
    at = args.index("--language")
    language = args[at + 1]
    del args[at : at + 2]
base = args[0] if len(args) > 0 else "http://127.0.0.1:8000"
pair_id = args[1] if len(args) > 1 else ("1" if widths or language else "3")
group_id = args[2] if len(args) > 2 else "1"


def log_in(page, user: str, password: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", password)
    page.click("form.login button")
    page.wait_for_url(f"{base}/")


def at_every_width(browser) -> None:  # type: ignore[no-untyped-def]
    for width, height in WINDOWS:
        context = browser.new_context(viewport={"width": width, "height": height})
        context.route(
            "**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort()
        )
        page = context.new_page()
        log_in(page, "demo-editor", "editor-demo-pass")
        for path, name in [("/review/", "queue"), (f"/review/pairs/{pair_id}/", "pair")]:
            page.goto(base + path)
            page.screenshot(path=str(HERE / f"{name}-{width}.png"))
        context.close()


def switch_language(page, code: str) -> None:  # type: ignore[no-untyped-def]
    """Pick a language in the header's switcher, as an editor does (stored per editor)."""
    page.select_option("select[name=language]", code)
    page.click("button[data-locale-apply]")
    page.wait_for_load_state()


def in_language(browser, code: str) -> None:  # type: ignore[no-untyped-def]
    for width, height, shots in [
        (1440, 960, [("/review/", "queue"), (f"/review/pairs/{pair_id}/", "pair")]),
        (390, 844, [(f"/review/pairs/{pair_id}/", "pair")]),
    ]:
        context = browser.new_context(viewport={"width": width, "height": height})
        context.route(
            "**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort()
        )
        page = context.new_page()
        log_in(page, "demo-editor", "editor-demo-pass")
        switch_language(page, code)
        for path, name in shots:
            page.goto(base + path)
            suffix = "" if width == 1440 else f"-{width}"
            page.screenshot(path=str(HERE / f"{name}-{code}{suffix}.png"))
        switch_language(page, "en")
        context.close()


with sync_playwright() as pw:
    browser = pw.chromium.launch(
        executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
    )
    if widths or language:
        if widths:
            at_every_width(browser)
        if language:
            in_language(browser, language)
        browser.close()
        sys.exit(0)
    context = browser.new_context(viewport={"width": 1440, "height": 960})
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", "demo-editor")
    page.fill("input[name=password]", "editor-demo-pass")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{base}/")
    for path, name in [
        ("/review/", "queue"),
        (f"/review/pairs/{pair_id}/", "pair"),
        (f"/review/pairs/{pair_id}/?view=aligned", "aligned"),
        (f"/review/groups/{group_id}/", "group"),
        ("/review/crawl-quality/", "crawl_quality"),
    ]:
        page.goto(base + path)
        page.screenshot(path=str(HERE / f"{name}.png"))
    page.click("button:has-text('Log out')")
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", "demo-admin")
    page.fill("input[name=password]", "admin-demo-pass")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{base}/")
    page.goto(f"{base}/review/agreement/")
    page.screenshot(path=str(HERE / "agreement.png"))
    browser.close()
