"""What pages declare about their source: publication time, own name, credits."""

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from ingest.core.provenance import (
    credits_name,
    credits_read,
    names_of,
    parse_time,
    provenance_read,
)


def test_article_published_time_meta_wins() -> None:
    html = (
        '<html><head><meta property="article:published_time" content="2024-03-05T08:30:00+08:00">'
        '<meta property="og:site_name" content="新华网"></head><body></body></html>'
    )
    p = provenance_read(html, "")
    assert p.published_at == datetime(2024, 3, 5, 0, 30, tzinfo=UTC)
    assert p.published_by == "meta:article:published_time"
    assert p.site_name == "新华网"


def test_json_ld_date_published() -> None:
    html = (
        '<script type="application/ld+json">{"@graph": [{"@type": "NewsArticle", '
        '"datePublished": "2023-11-20"}]}</script>'
    )
    assert provenance_read(html, "").published_at == datetime(2023, 11, 20, tzinfo=UTC)


def test_chinese_publication_time_in_the_text() -> None:
    text = "标题\n发布时间：2024年1月2日 10:05 来源：人民网\n正文……"
    p = provenance_read("<html></html>", text)
    assert p.published_at == datetime(2024, 1, 2, 10, 5, tzinfo=UTC)
    assert p.published_by == "text"


def test_credit_lines_in_three_languages() -> None:
    text = "\n".join(
        [
            "第一段正文，很长很长的一段话，讲述了事情的经过。",
            "本文来源：新华网 版权归原作者所有",
            "(Theo VnExpress)",
            "Nguồn: Tuổi Trẻ Online",
            "Source: Reuters",
        ]
    )
    assert credits_read(text) == ("新华网", "VnExpress", "Tuổi Trẻ Online", "Reuters")


def test_a_long_line_mentioning_a_source_is_not_a_credit() -> None:
    line = "Theo " + "các chuyên gia kinh tế cho biết thị trường " * 5
    assert credits_read(line) == ()


def test_a_credit_names_a_site_by_name_or_host() -> None:
    assert credits_name(("新华网",), names_of("新华网", "www.news.cn"))
    assert credits_name(("VnExpress",), names_of("", "vnexpress.net"))
    assert credits_name(("vnexpress.net",), names_of("", "www.vnexpress.net"))
    assert credits_name(("Tuổi Trẻ",), names_of("", "tuoitre.vn"))  # without its marks
    assert not credits_name(("Reuters",), names_of("Tuổi Trẻ", "tuoitre.vn"))


def test_times_outside_the_plausible_years_are_ignored() -> None:
    assert parse_time("0001-01-01T00:00:00Z") is None
    assert parse_time("not a date") is None
    assert parse_time("2024-02-30") is None


@given(st.text(max_size=3000), st.text(max_size=3000))
def test_never_raises(html: str, text: str) -> None:
    p = provenance_read(html, text)
    assert p.published_at is None or p.published_at.tzinfo is not None
