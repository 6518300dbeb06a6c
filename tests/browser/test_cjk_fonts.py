"""Chinese and Vietnamese render in the browser tests and screenshots: Chromium has a font
with their glyphs (Debian's fonts-noto-cjk, installed by .ci/run). Without one it draws
every Chinese character as the same empty box ("tofu")."""

from typing import Any

import pytest

from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ZH = "新华社北京五月一日电，记者今天从市政府获悉，城市地铁三号线将于明年年底建成通车。" * 4
VI = "Thủ tướng yêu cầu các bộ, ngành khẩn trương hoàn thiện hồ sơ dự án đường sắt. " * 4

# Each string drawn alone on a canvas in the desk's font: its pixels (as a string, to
# compare) and how many are inked. U+0378 is unassigned: whatever Chromium draws for it is
# what a missing glyph looks like.
DRAW = """(texts) => {
  const font = getComputedStyle(document.body).font;
  return texts.map(t => {
    const c = document.createElement('canvas');
    c.width = 64; c.height = 64;
    const g = c.getContext('2d');
    g.font = font.replace(/\\d+(\\.\\d+)?px/, '40px');
    g.fillStyle = '#000';
    g.textBaseline = 'top';
    g.fillText(t, 4, 4);
    const px = g.getImageData(0, 0, 64, 64).data;
    let ink = 0, sig = '';
    for (let i = 3; i < px.length; i += 4) { if (px[i] > 0) ink++; sig += px[i] > 127 ? 1 : 0; }
    return {text: t, ink, sig, width: g.measureText(t).width};
  });
}"""


def _platform_fonts(page: Any, selector: str) -> dict[str, int]:
    """The fonts Chromium actually used for the text of an element, with glyph counts."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    return {f["familyName"]: f["glyphCount"] for f in fonts}


def test_chinese_and_vietnamese_render_with_real_glyphs(logged_in) -> None:
    page = logged_in
    a = factories.reviewed_document(url="https://news.example.cn/a", text=ZH + "\n\n" + VI)
    b = factories.reviewed_document(
        url="https://news.example.vn/b", text=ZH + "。\n\n" + VI, flips=1
    )
    factories.find(a, b)
    page.goto(f"/review/pairs/{factories.pair_of(a, b).id}/")
    page.wait_for_selector("#diff-panel .text.side-a")

    zhong, wen, vi, missing = page.evaluate(DRAW, ["中", "文", "ệ", "\u0378"])
    # Two different characters draw differently (tofu boxes would be identical), with ink,
    # and neither looks like the missing-glyph drawing; a CJK glyph is about 1 em wide.
    assert zhong["ink"] > 50 and wen["ink"] > 50
    assert zhong["sig"] != wen["sig"]
    assert missing["sig"] not in (zhong["sig"], wen["sig"], vi["sig"])
    assert 30 <= zhong["width"] <= 48, zhong["width"]
    assert vi["ink"] > 20

    # The pair page's Chinese text is set in a CJK font, every glyph of it found there.
    fonts = _platform_fonts(page, "#diff-panel .text.side-a")
    cjk = {name: n for name, n in fonts.items() if "CJK" in name}
    assert cjk and sum(cjk.values()) >= len(set(ZH)) - 5, fonts
