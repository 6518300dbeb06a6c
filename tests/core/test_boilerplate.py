"""Site boilerplate lines (ingest/core/boilerplate.py) and registrable domains
(ingest/core/domains.py): no database."""

from hypothesis import given
from hypothesis import strategies as st

from ingest.core import boilerplate
from ingest.core.domains import registrable_domain

FOOTER = "Browse | Feedback | About us … (c) 2008 Earthtimes.org"
lines = st.lists(st.text(alphabet="ab cdé中文\t", min_size=0, max_size=30), max_size=12)


def test_hosts_of_one_publisher_have_one_registrable_domain() -> None:
    assert registrable_domain("entertainment.timesonline.co.uk") == "timesonline.co.uk"
    assert registrable_domain("WWW.timesonline.co.uk.") == "timesonline.co.uk"
    assert registrable_domain("news.sina.com.cn") == "sina.com.cn"
    # Private suffixes count: two blogs on one host service are two sites.
    assert registrable_domain("alice.github.io") != registrable_domain("bob.github.io")


def test_addresses_and_bare_names_are_their_own_domain() -> None:
    assert registrable_domain("127.0.0.1") == "127.0.0.1"
    assert registrable_domain("localhost") == "localhost"
    assert registrable_domain("unknown") == "unknown"


def test_a_line_needs_some_words_to_have_a_key() -> None:
    assert boilerplate.line_key("| 1 |") is None
    assert boilerplate.line_key("首页") is not None
    assert boilerplate.line_key(FOOTER) is not None
    # Spacing, case and compatibility forms do not make another line.
    assert boilerplate.line_key("  browse |  FEEDBACK | About us … (c) 2008 Earthtimes.org ") == (
        boilerplate.line_key(FOOTER)
    )


def _key(line: str) -> int:
    key = boilerplate.line_key(line)
    assert key is not None
    return key


def test_nothing_is_learned_until_the_site_has_a_few_other_pages() -> None:
    page = {_key(FOOTER)}
    assert boilerplate.learn([page] * (boilerplate.MIN_PAGES - 1)) == set()
    assert boilerplate.learn([page] * boilerplate.MIN_PAGES) == page


def test_a_line_on_a_few_pages_of_a_large_site_is_not_its_boilerplate() -> None:
    """An article republished at three URLs of an aggregator is not its template."""
    story = {_key("A story told three times on one large site")}
    others = [story] * 3 + [set()] * 20
    assert boilerplate.learn(others) == set()
    assert boilerplate.pages_needed(23) == 7


def test_strip_drops_whole_lines_only_and_says_which() -> None:
    text = f"First paragraph of the story, long enough.\n{FOOTER}\nLast words of the story here."
    out = boilerplate.strip(text, {boilerplate.line_key(FOOTER)})  # type: ignore[arg-type]
    assert out.dropped == [FOOTER]
    assert out.text == "First paragraph of the story, long enough.\nLast words of the story here."


@given(lines, lines)
def test_a_recorded_drop_applied_again_gives_the_same_text(
    body: list[str], extra: list[str]
) -> None:
    text = "\n".join(body + extra)
    keys = {k for k in map(boilerplate.line_key, extra) if k is not None}
    out = boilerplate.strip(text, keys)
    assert boilerplate.strip_lines(text, out.dropped) == out.text
    assert boilerplate.strip_lines(out.text, out.dropped) == out.text
    # Every line kept or dropped, none changed.
    every = text.split("\n")
    kept = out.text.split("\n") if len(out.dropped) < len(every) else []
    assert sorted(kept + out.dropped) == sorted(every)


def test_a_list_item_is_its_block_without_the_marker() -> None:
    """The extractor writes a list item as "- item"; the full-page branch has the block."""
    item = "热点新闻 今天的头条"
    assert boilerplate.line_key(f"- {item}") == boilerplate.line_key(item)
    assert boilerplate.line_key("-- not a marker") != boilerplate.line_key("- not a marker")


def test_a_table_row_of_boilerplate_blocks_is_dropped_and_one_with_an_article_kept() -> None:
    blocks = ["添加收藏夹", "|", "设为首页", "| 关于我们", "主办单位：示例大学 版权所有"]
    blocks.append("地址：某路1号")
    keys = {k for k in map(boilerplate.line_key, blocks) if k is not None}
    article = "记者今天表示，城市政府会议决定推动项目发展。"
    text = "\n".join(
        [
            "| | 添加收藏夹 \\| 设为首页 \\| 关于我们 |",
            "| | | |",
            f"| {article} |",
            "| 主办单位：示例大学 版权所有 地址：某路1号 |",
            "| 首页 | 设为首页 |",
        ]
    )
    out = boilerplate.strip(text, keys)
    assert out.dropped == [
        "| | 添加收藏夹 \\| 设为首页 \\| 关于我们 |",
        "| 主办单位：示例大学 版权所有 地址：某路1号 |",
    ]
    # A row without a key stays (it adds no token); a row with one cell of other text too.
    assert out.text == f"| | | |\n| {article} |\n| 首页 | 设为首页 |"
    # A line that merely contains pipes is not a table row.
    assert not boilerplate.is_boilerplate("添加收藏夹 | 设为首页 | 关于我们", keys)


marked = st.lists(st.text(alphabet="ab cd中文|-\\", min_size=0, max_size=24), max_size=10)


@given(marked, marked)
def test_a_recorded_drop_of_rows_and_items_applied_again_gives_the_same_text(
    body: list[str], extra: list[str]
) -> None:
    text = "\n".join(body + extra)
    keys = {k for k in map(boilerplate.line_key, extra) if k is not None}
    out = boilerplate.strip(text, keys)
    assert boilerplate.strip_lines(text, out.dropped) == out.text
    assert boilerplate.strip_lines(out.text, out.dropped) == out.text
    every = text.split("\n")
    kept = out.text.split("\n") if len(out.dropped) < len(every) else []
    assert sorted(kept + out.dropped) == sorted(every)
