"""Screenshots of the review desk for the README, from a running demo (`make demo`).

    .venv/bin/python docs/screenshots/take_screenshots.py [BASE_URL] [PAIR_ID] [GROUP_ID]

Logs in as the demo editor with Debian's Chromium and saves queue.png, pair.png,
aligned.png (the sentence alignment of the same pair), group.png and crawl_quality.png
next to this file; then as the demo admin, agreement.png. Only the demo server is
contacted.
"""

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
pair_id = sys.argv[2] if len(sys.argv) > 2 else "3"
group_id = sys.argv[3] if len(sys.argv) > 3 else "1"

with sync_playwright() as pw:
    browser = pw.chromium.launch(
        executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
    )
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
