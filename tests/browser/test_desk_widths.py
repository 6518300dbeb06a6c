"""Every desk page at a phone (390 px), a tablet (768 px) and a laptop (1440 px) width,
with Chinese and Vietnamese crawl text in it (long unbroken lines, long URLs): the page
never scrolls sideways, the header's links stay inside the dark bar, the label form never
covers the diff (whose columns keep a readable width) and no table header wraps letter
by letter."""

from typing import Any

import pytest

from ingest.models import CandidatePair, CrawlBatch, Document
from reviews.labels import labelling
from tests import factories
from tests.factories import find, group_of, reviewed_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (390, 768, 1440)

# One Chinese line with no space and no punctuation for 300 characters, then sentences.
ZH_LINE = "城市地铁三号线工程总投资约一百二十亿元建设期间将尽量减少对周边道路的影响" * 8
ZH = (
    ZH_LINE + "。新华社北京五月一日电，记者今天从市政府获悉，城市地铁三号线将于明年年底建成通车。"
    "专家认为，这一项目将明显改善东部地区居民的出行条件。\n\n"
    "详见 https://news.example.cn/" + "城市交通" * 30 + "?ref=" + "x" * 120
)
VI = (
    "Thủ tướng Chính phủ yêu cầu các bộ, ngành khẩn trương hoàn thiện hồ sơ dự án đường sắt "
    "tốc độ cao trên trục Bắc – Nam, bảo đảm tiến độ khởi công trước năm 2027. "
    "Theo Bộ Giao thông vận tải, tổng mức đầu tư dự kiến khoảng 67 tỷ USD.\n\n"
    "Nguồn: https://baomoi.example.vn/"
    + "duong-sat-toc-do-cao-bac-nam-khoi-cong-truoc-nam-2027-" * 8
    + "c45678901.epi"
)
LONG_URL = "https://tin-tuc.example.vn/" + "thời-sự/" * 12 + "%E4%B8%AD%E6%96%87" * 20
LONG_REASON = (
    "正文完全一致，只是转载网站加了页脚版权声明和导航栏" * 4
    + " — nội dung giống hệt, chỉ khác phần chân trang "
    + "https://portal.example.com/"
    + "b" * 150
)

# What the page reports about itself at the current width.
MEASURE = """() => {
  const out = {scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
               outside: [], letterWrap: [], overlap: null, narrowColumns: []};
  const bar = document.querySelector('header.topbar');
  if (bar) {
    const b = bar.getBoundingClientRect();
    for (const el of bar.querySelectorAll('a, button, span')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 ||
          r.bottom > b.bottom + 0.5) out.outside.push(el.textContent.trim());
    }
  }
  // Lines of text in an element: its text boxes grouped where they overlap vertically
  // (a <kbd> or <b> sits a little higher or lower on the same line).
  const lines = el => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const rects = [...range.getClientRects()].filter(r => r.width > 0);
    rects.sort((a, b) => a.top - b.top);
    let n = 0, bottom = -Infinity;
    for (const r of rects) {
      if (r.top >= bottom - 1) { n++; bottom = r.bottom; } else bottom = Math.max(bottom, r.bottom);
    }
    return n;
  };
  const wrapped = 'main th, main h1, main h2, main h3, main button, header a';
  for (const el of document.querySelectorAll(wrapped)) {
    const words = el.textContent.trim().split(/[\\s\\-\u2013/]+/).filter(Boolean);
    if (!words.length || el.getClientRects().length === 0) continue;
    const n = lines(el);
    if (n > words.length) out.letterWrap.push(el.textContent.trim() + ' (' + n + ' lines)');
  }
  const form = document.querySelector('#label-panel');
  const diff = document.querySelector('#diff-panel');
  if (form && diff) {
    const f = form.getBoundingClientRect(), d = diff.getBoundingClientRect();
    const x = Math.min(f.right, d.right) - Math.max(f.left, d.left);
    const y = Math.min(f.bottom, d.bottom) - Math.max(f.top, d.top);
    out.overlap = x > 0 && y > 0 ? [x, y] : null;
  }
  for (const col of document.querySelectorAll('#diff-panel .sides > *, #diff-panel td.code')) {
    const w = col.getBoundingClientRect().width;
    if (w > 0 && w < Math.min(160, window.innerWidth / 3)) out.narrowColumns.push(Math.round(w));
  }
  // The outermost elements that reach past the window, to name in a failure.
  out.wide = [];
  if (out.scroll > out.inner) {
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      const p = el.parentElement && el.parentElement.getBoundingClientRect();
      const clips = p && getComputedStyle(el.parentElement).overflowX !== 'visible';
      if (r.right > out.inner + 0.5 && p && p.right <= out.inner + 0.5 && !clips &&
          out.wide.length < 5)
        out.wide.push(el.tagName.toLowerCase() + '.' + el.className + ' ' + Math.round(r.right));
    }
  }
  return out;
}"""


def _desk() -> dict[str, Any]:
    """A Chinese pair and a Vietnamese group, labels with long mixed reasons, a batch with
    a long source; returns the ids the pages need."""
    editor = factories.user_create(username="wide", password="pw-wide-123")
    editor.is_superuser = editor.is_staff = True
    editor.save()
    CrawlBatch.objects.create(
        source="/srv/crawls/" + "thu-thap-tin-tuc-viet-nam-" * 8 + "中文新闻抓取" * 10 + ".warc.gz",
        format="warc",
        status="done",
    )
    zh_b = ZH.replace("年底", "年初").replace("明显改善", "显著改善")
    a = reviewed_document(url=LONG_URL + "/a", text=ZH, title=ZH_LINE[:80])
    b = reviewed_document(url="https://portal.example.com/" + "b" * 300, text=zh_b, flips=1)
    v1 = reviewed_document(url=LONG_URL + "/v1", text=VI + " một", base=0x0F0F0F0F0F0F0F0F)
    v2 = reviewed_document(url=LONG_URL + "/v2", text=VI + " hai", flips=1, base=0x0F0F0F0F0F0F0F0F)
    v3 = reviewed_document(url=LONG_URL + "/v3", text=VI + " ba", flips=2, base=0x0F0F0F0F0F0F0F0F)
    find(a, b, v1, v2, v3)
    pair = factories.pair_of(a, b)
    for verdict, code in (("near_duplicate", "cosmetic"), ("duplicate", "same_text")):
        labelling.label_record(
            pair=pair,
            editor=editor,
            verdict=verdict,
            reason_code=code,
            reason=LONG_REASON,
            region="body",
        )
    group = group_of(v1)
    assert group is not None
    return {"pair": pair.id, "group": group.pk, "document": a.pk}


def _pages(ids: dict[str, Any]) -> list[str]:
    pair, group, doc = ids["pair"], ids["group"], ids["document"]
    return [
        "/",
        f"/documents/{doc}/",
        "/batches/",
        "/review/",
        f"/review/pairs/{pair}/",
        f"/review/pairs/{pair}/?view=full",
        f"/review/pairs/{pair}/?view=aligned",
        f"/review/pairs/{pair}/?view=html",
        f"/review/pairs/{pair}/?view=source",
        f"/review/groups/{group}/",
        "/review/calibration/",
        "/review/calibration/sample/",
        "/review/metrics/",
        "/review/methods/",
        "/review/audit/",
        "/review/approvals/",
        "/review/crawl-quality/",
        "/review/agreement/",
        "/review/labels/import",
        "/review/search?q=城市地铁",
        "/?q=thời-sự",
    ]


def _problems(page: Any, url: str, width: int) -> list[str]:
    m = page.evaluate(MEASURE)
    problems = []
    if m["scroll"] > m["inner"]:
        problems.append(
            f"{url}: the page is {m['scroll']} px wide in a {width} px window: {m['wide']}"
        )
    if m["outside"]:
        problems.append(f"{url}: header items outside the bar: {m['outside']}")
    if m["letterWrap"]:
        problems.append(
            f"{url}: headers, headings or buttons wrapped letter by letter: {m['letterWrap']}"
        )
    if m["overlap"]:
        problems.append(f"{url}: the label form covers the diff by {m['overlap']} px")
    if m["narrowColumns"]:
        problems.append(f"{url}: diff columns shrunk to {m['narrowColumns']} px")
    return problems


@pytest.mark.parametrize("width", WIDTHS)
def test_every_desk_page_fits_the_window(browser, live_server, width: int) -> None:
    ids = _desk()
    assert Document.objects.count() == 5 and CandidatePair.objects.exists()
    viewport = {"width": width, "height": 900}
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(30_000)
    problems: list[str] = []
    page.goto("/accounts/login/")
    problems += _problems(page, "/accounts/login/", width)
    page.fill("input[name=username]", "wide")
    page.fill("input[name=password]", "pw-wide-123")
    page.click("form.login button")  # the header holds the language switcher's form too
    page.wait_for_url(f"{live_server.url}/")
    for url in _pages(ids):
        response = page.goto(url)
        assert response is not None and response.ok, (url, response and response.status)
        page.wait_for_load_state("load")
        problems += _problems(page, url, width)
    context.close()
    assert not problems, "\n".join(problems)
