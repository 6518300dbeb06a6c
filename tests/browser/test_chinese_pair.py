"""A Chinese pair in a real browser: the main-text diff marks the changed characters,
not the paragraph, and the aligned view splits the paragraph at 。."""

import pytest
from playwright.sync_api import expect

from ingest.models import CandidatePair
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

A = (
    "新华社北京五月一日电，记者今天从市政府获悉，城市地铁三号线将于明年年底建成通车。"
    "专家认为，这一项目将明显改善东部地区居民的出行条件。"
    "市交通部门表示，工程总投资约一百二十亿元，建设期间将尽量减少对周边道路的影响。"
)
# The same paragraph with two characters changed: 年底 → 年初, and 明显 → 显著 (显 is kept:
# 明 is deleted before it, 著 inserted after it).
B = A.replace("年底", "年初").replace("明显改善", "显著改善")


def _pair() -> CandidatePair:
    a = factories.reviewed_document(url="https://news.example.cn/a", text=A, flips=0)
    b = factories.reviewed_document(url="https://portal.example.com/b", text=B, flips=2)
    factories.find(a, b)
    return factories.pair_of(a, b)


def test_a_chinese_pair_marks_the_changed_characters(logged_in) -> None:
    page = logged_in
    pair = _pair()
    page.goto(f"/review/pairs/{pair.id}/", timeout=30_000)
    panel = page.locator("#diff-panel")
    panel.wait_for()
    side_a, side_b = panel.locator(".text.side-a"), panel.locator(".text.side-b")
    deleted = side_a.locator("span.op-delete, span.op-replace").all_inner_texts()
    inserted = side_b.locator("span.op-insert, span.op-replace").all_inner_texts()
    assert "".join(deleted) == "底明"
    assert "".join(inserted) == "初著"
    # The rest of the paragraph is shown unmarked, and each side reads back whole.
    unchanged = "".join(side_a.locator("span.op-equal").all_inner_texts())
    assert len(unchanged) == len(A) - 2 and "城市地铁三号线将于明年年" in unchanged
    assert side_a.locator("span").evaluate_all("s => s.map(x => x.textContent).join('')") == A
    assert side_b.locator("span").evaluate_all("s => s.map(x => x.textContent).join('')") == B
    # A marked character is visibly marked (background), an unchanged one is not.
    marked = side_a.locator("span.op-delete").first
    colour = marked.evaluate("m => getComputedStyle(m).backgroundColor")
    plain = side_a.locator("span.op-equal").first.evaluate(
        "m => getComputedStyle(m).backgroundColor"
    )
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent") and colour != plain
    expect(panel).to_contain_text("3 changes")

    # Aligned sentences: the paragraph is three sentences, two of them changed.
    panel.locator("a:has-text('aligned sentences')").click()
    rows = page.locator("#diff-panel table.aligned tbody tr")
    expect(rows.first).to_be_visible()
    ops = rows.evaluate_all("rs => rs.map(r => r.className)")
    assert ops == ["op-replace", "op-replace", "op-equal"]
    # Inside a replaced sentence, only the changed characters are marked.
    first = rows.first.locator("td:nth-child(2) span.op-delete").all_inner_texts()
    assert first == ["底"]
