"""What pages declare about their source: publication time, own name, credits."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from ingest.core.provenance import (
    credits_name,
    credits_read,
    names_of,
    parse_time,
    provenance_read,
    vietnamese_date,
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


# --- Vietnamese dates and credits -----------------------------------------------------


def test_vietnamese_date_lines_are_read_on_vietnams_clock() -> None:
    cases = {
        "Thể thao Việt Nam | 09:15 07/02/2017": datetime(2017, 2, 7, 2, 15, tzinfo=UTC),
        "07/02/2017 09:15": datetime(2017, 2, 7, 2, 15, tzinfo=UTC),
        "Thứ năm, 9/2/2017, 10:30 (GMT+7)": datetime(2017, 2, 9, 3, 30, tzinfo=UTC),
        "Cập nhật: 07/02/2017": datetime(2017, 2, 6, 17, 0, tzinfo=UTC),
        "ngày 7 tháng 2 năm 2017": datetime(2017, 2, 6, 17, 0, tzinfo=UTC),
        "Thứ hai, 06/03/2023 - 08:05 GMT+0": datetime(2023, 3, 6, 8, 5, tzinfo=UTC),
    }
    for line, when in cases.items():
        p = provenance_read("<html></html>", f"Tiêu đề\n{line}\nNội dung bài viết …")
        assert (p.published_at, p.published_by) == (when, "text:vi"), line


def test_a_date_inside_a_sentence_is_not_a_publication_time() -> None:
    text = "Bộ Công Thương yêu cầu báo cáo chậm nhất ngày 4/2/2017.\nGiá điện tăng từ tháng 3/2019"
    assert provenance_read("<html></html>", text).published_at is None
    assert vietnamese_date("31/02/2017 10:00") is None  # no such day


def test_a_vietnamese_byline_outside_the_main_text_is_read_from_the_page() -> None:
    html = "<html><body><div class='meta'><span>Thời sự</span> | 18:40 05/01/2017</div></body>"
    p = provenance_read(html, "Nội dung không có ngày.")
    assert (p.published_at, p.published_by) == (datetime(2017, 1, 5, 11, 40, tzinfo=UTC), "page:vi")


def test_theo_credits_are_a_short_source_name_not_a_sentence() -> None:
    text = "\n".join(
        [
            "Theo Tuổi Trẻ",
            "Theo Trần Kháng/ Reatimes.vn",
            "Theo An Yên (Video: Gigadget)/VnExpress.net",
            "Theo Tào Nga (Tổng hợp) (Khám phá",
            "Theo các chuyên gia phong thủy",
            "Theo ghi nhận của PV",
            "Theo thông tin trên",
            "Theo đó, giá điện tăng",
        ]
    )
    assert credits_read(text) == ("Tuổi Trẻ", "Reatimes.vn", "VnExpress.net", "Khám phá")


@given(
    st.integers(1, 28),
    st.integers(1, 12),
    st.integers(1991, 2100),
    st.integers(0, 23),
    st.integers(0, 59),
    st.sampled_from(["{d:02d}/{m:02d}/{y} {H:02d}:{M:02d}", "{H}:{M:02d} {d}/{m}/{y}"]),
)
def test_any_vietnamese_date_line_is_its_time_less_seven_hours(
    d: int, m: int, y: int, h: int, minute: int, shape: str
) -> None:
    line = shape.format(d=d, m=m, y=y, H=h, M=minute)
    local = datetime(y, m, d, h, minute, tzinfo=UTC)
    assert vietnamese_date(line) == local - timedelta(hours=7)


@given(st.text(max_size=80))
def test_a_theo_credit_is_never_a_long_or_lowercase_phrase(rest: str) -> None:
    for credit in credits_read("Theo " + rest.replace("\n", " ")):
        assert len(credit.split()) <= 5
        assert credit[0].isupper() or credit[0].isdigit() or "." in credit.split()[0]
