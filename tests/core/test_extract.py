"""extract: two text branches, title, language and a status; never a raise."""

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.extract import EXTRACTOR_VERSION, STATUSES, extract, guess_language
from ingest.core.methods import EXTRACTOR, EXTRACTOR_V1, REFERENCE_KEY, fingerprint_text
from ingest.core.normalize import tokens_words

MENU = (
    "<header><nav><ul><li><a href='/'>Home</a></li><li><a href='/world'>World</a></li>"
    "<li><a href='/sport'>Sport</a></li><li><a href='/login'>Log in</a></li></ul></nav></header>"
)
FOOTER = "<footer><p>Copyright 2024 Example Media Group. All rights reserved.</p></footer>"
EN_PARAGRAPHS = [
    "The city council met on Tuesday evening to debate next year's budget, which has grown "
    "by four percent after a long dispute over road repairs and school funding.",
    "Council members spent more than three hours questioning the finance director about "
    "the cost of the new tram line, which is now expected to open in the spring of 2026.",
    "Residents who attended the meeting asked for more money for public libraries and for "
    "longer opening hours at the swimming pools during the summer holidays.",
    "The final vote took place shortly before midnight, and the budget passed with eleven "
    "votes in favour, four against and two abstentions from the opposition benches.",
]
VI_PARAGRAPHS = [
    "Hà Nội những ngày đầu đông thời tiết se lạnh, nhiệt độ buổi sáng xuống dưới mười lăm "
    "độ, nhiều người dân đã phải mặc áo ấm khi ra đường đi làm.",
    "Theo trung tâm dự báo khí tượng thủy văn quốc gia, không khí lạnh sẽ tiếp tục tăng "
    "cường trong tuần tới và có thể gây mưa nhỏ ở nhiều tỉnh miền Bắc.",
    "Các bác sĩ khuyên người già và trẻ nhỏ nên giữ ấm cơ thể, uống đủ nước và hạn chế ra "
    "ngoài vào sáng sớm để phòng tránh các bệnh về đường hô hấp.",
]
ZH_PARAGRAPHS = [
    "北京今年冬天比往年更冷，气象台连续发布寒潮预警，最低气温降到零下十五度，很多市民选择在家休息。",
    "据市交通部门介绍，为了应对降雪天气，全市地铁将延长运营时间，公交车也增加了班次，方便市民出行。",
    "专家提醒，老人和儿童要注意保暖，出门时最好戴上帽子和手套，同时多喝热水，避免感冒和其他疾病。",
]

# Fragments hypothesis glues together into broken HTML.
HTML_PIECES = [
    *("<p>", "</p>", "<div", ">", "<", "</", "<html>", "<body>", "&amp;", "&#0;", "<nav>"),
    *("<script>", "<!--", "-->", "<title>", "<svg>", "<?xml ?>", "]]>", "<![CDATA["),
    *("<input type=password>", "words here", "中文", "tiếng", "\x00", "\ud800"),
]


def _page(paragraphs: list[str], *, title: str = "", lang: str = "", extra: str = "") -> str:
    lang_attr = f' lang="{lang}"' if lang else ""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!DOCTYPE html><html{lang_attr}><head><meta charset='utf-8'><title>{title}</title>"
        "<style>body { color: red }</style><script>var tracking = 'secret';</script></head>"
        f"<body>{MENU}<main><article><h1>{title}</h1>{body}</article></main>{extra}{FOOTER}"
        "</body></html>"
    )


def test_extractor_version_is_the_methods_constant() -> None:
    assert EXTRACTOR_VERSION == EXTRACTOR


def test_article_main_text_excludes_menu_and_footer_full_text_includes_them() -> None:
    html = _page(EN_PARAGRAPHS, title="Council passes budget after late vote")

    result = extract(html, url="https://example.com/news/budget")

    assert result.status == "ok"
    assert result.title == "Council passes budget after late vote"
    assert "eleven votes in favour" in result.main_text
    assert "Sport" not in result.main_text
    assert "Copyright 2024" not in result.main_text
    assert "Sport" in result.full_text
    assert "Copyright 2024 Example Media Group. All rights reserved." in result.full_text
    assert "tracking" not in result.full_text
    assert "color: red" not in result.full_text
    assert result.main_tokens < result.full_tokens
    assert result.language == "en"


def test_long_article_with_a_log_in_link_stays_ok() -> None:
    html = _page(EN_PARAGRAPHS * 3, title="Budget")

    result = extract(html)

    assert "Log in" in result.full_text
    assert result.status == "ok"


def test_main_text_keeps_paragraph_breaks() -> None:
    result = extract(_page(EN_PARAGRAPHS, title="Budget"))

    lines = result.main_text.split("\n")
    assert EN_PARAGRAPHS[0] in lines
    assert EN_PARAGRAPHS[3] in lines


def test_full_text_is_one_folded_block_per_line() -> None:
    html = (
        "<html><body><div>  first\n\t block  </div><p>second <b>bold</b>\u00a0block</p>"
        "<ul><li>item one</li><li>item two</li></ul>"
        "<table><tr><td>cell a</td><td>cell b</td></tr></table>"
        "<div hidden>hidden text</div><span style='display: none'>gone</span>tail</body></html>"
    )

    result = extract(html)

    assert result.full_text.split("\n") == [
        "first block",
        "second bold block",
        "item one",
        "item two",
        "cell a",
        "cell b",
        "tail",
    ]


def test_login_wall_is_blocked() -> None:
    html = (
        "<html><head><title>Sign in</title></head><body>"
        "<h1>Members only</h1><p>Please log in to continue reading this story.</p>"
        "<form><input name='user'><input type='password' name='pw'><button>Sign in</button>"
        "</form></body></html>"
    )

    result = extract(html)

    assert result.status == "blocked"
    assert result.message.startswith("login wall")


def test_short_page_with_a_password_field_is_blocked() -> None:
    html = (
        "<html><body><h1>Welcome back</h1><form><input name='user'>"
        "<input type='password' name='pw'><button>Go</button></form></body></html>"
    )

    result = extract(html)

    assert result.status == "blocked"
    assert "password" in result.message


@pytest.mark.parametrize(
    "phrase",
    [
        "Verify you are human",
        "vui lòng đăng nhập để xem bài viết",
        "请登录后查看全文",
        "访问被拒绝",
    ],
)
def test_challenge_and_login_phrases_in_three_languages(phrase: str) -> None:
    result = extract(f"<html><body><div><p>{phrase}</p></div></body></html>")

    assert result.status == "blocked"


@pytest.mark.parametrize("status", [401, 403, 407, 429, 451])
def test_blocking_http_status(status: int) -> None:
    result = extract(_page(EN_PARAGRAPHS, title="Budget"), http_status=status)

    assert result.status == "blocked"
    assert result.message == f"HTTP {status}"


def test_503_challenge_page_is_blocked_but_plain_503_is_not() -> None:
    challenge = "<html><head><title>Just a moment...</title></head><body>Checking</body></html>"

    assert extract(challenge, http_status=503).status == "blocked"
    assert extract(_page(EN_PARAGRAPHS), http_status=503).status == "ok"


@pytest.mark.parametrize(
    "html",
    [
        "",
        "   \n ",
        "<html><head><title>x</title></head><body></body></html>",
        "<html><body>" + MENU + "</body></html>",
    ],
)
def test_nothing_to_read_is_empty(html: str) -> None:
    result = extract(html)

    assert result.status == "empty"
    assert result.main_text == ""
    assert result.main_tokens == 0


def test_three_words_is_too_short() -> None:
    result = extract("<html><body><article><p>Hello small world</p></article></body></html>")

    assert result.status == "too_short"
    assert result.main_tokens == 3


def test_min_tokens_is_the_threshold() -> None:
    html = "<html><body><article><p>Hello small world</p></article></body></html>"

    assert extract(html, min_tokens=3).status == "ok"


def test_vietnamese_page() -> None:
    result = extract(_page(VI_PARAGRAPHS, title="Hà Nội trở lạnh"))

    assert result.status == "ok"
    assert result.language == "vi"
    assert "không khí lạnh" in result.main_text


def test_chinese_page() -> None:
    result = extract(_page(ZH_PARAGRAPHS, title="北京寒潮"))

    assert result.status == "ok"
    assert result.language == "zh"
    assert "地铁将延长运营时间" in result.main_text


def test_html_lang_wins_over_the_heuristic() -> None:
    result = extract(_page(EN_PARAGRAPHS, lang="fr-CA"))

    assert result.language == "fr"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (" ".join(EN_PARAGRAPHS), "en"),
        (" ".join(VI_PARAGRAPHS), "vi"),
        ("".join(ZH_PARAGRAPHS), "zh"),
        ("Привет, как дела? Сегодня хорошая погода в Москве.", "und"),
        ("ok", "und"),
    ],
)
def test_language_heuristic(text: str, language: str) -> None:
    assert guess_language(text) == language


def test_title_falls_back_to_h1() -> None:
    result = extract("<html><body><h1>  Only   heading </h1><p>text</p></body></html>")

    assert result.title == "Only heading"


def test_xml_declaration_and_nul_bytes_are_handled() -> None:
    html = "<?xml version='1.0' encoding='utf-8'?>" + _page(EN_PARAGRAPHS).replace("<p>", "<p>\x00")

    result = extract(html)

    assert result.status == "ok"


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    result = extract(text)

    assert result.status in STATUSES


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(HTML_PIECES),
        max_size=40,
    ),
    st.sampled_from([None, 200, 403, 503]),
)
def test_malformed_html_never_raises(parts: list[str], status: int | None) -> None:
    result = extract("".join(parts), http_status=status)

    assert result.status in STATUSES
    assert result.main_tokens == len(tokens_words(result.main_text))
    assert result.full_tokens == len(tokens_words(result.full_text))


# --- real-page shapes the fast extractor got wrong ---------------------------------------

COUNCIL = [
    "The city council met on Tuesday evening to debate next year's budget, which has grown "
    "by four percent after a long dispute over road repairs and school funding.",
    "Council members spent more than three hours questioning the finance director about the "
    "cost of the new tram line, which is now expected to open in the spring.",
    "Residents who attended the meeting asked for more money for public libraries and for "
    "longer opening hours at the swimming pools during the summer holidays.",
    "The final vote took place shortly before midnight, and the budget passed with eleven "
    "votes in favour, four against and two abstentions from the opposition benches.",
    "The mayor said after the vote that the city would now ask the regional government for "
    "a loan to cover the rising cost of the tram line and the new bridge.",
    "Opposition leaders said they would keep pressing for an independent audit of the tram "
    "project, which is already two years late and well over its budget.",
]
TEASER = (
    "Also today: the harbour festival returns this weekend with music, food stalls and "
    "fireworks over the water, and organisers expect more than forty thousand visitors over "
    "the three days, with extra buses and ferries laid on from the station."
)
# Long enough that the menu alone passes for a text (over 250 characters).
SECTIONS = (
    "Home World Business Sport Culture Science Health Travel Opinion Weather Jobs Cars Homes Music"
)


def _old_layout(side: str) -> str:
    """A 2008-style page: a side column, then the story as <br>-separated lines."""
    story = "<font size=2>" + "<br><br>".join(COUNCIL) + "</font>"
    return (
        "<html><head><title>Council passes budget - Daily Courier</title></head><body>"
        f"<div id='left'>{side}</div><div id='right'>{story}</div>"
        "<div class='footer'>Copyright 2008 Daily Courier Ltd.</div></body></html>"
    )


@pytest.mark.parametrize(
    ("side", "side_text"),
    [
        (
            '<div class="post-content"><ul>'
            + "".join(f"<li><span>{s} section news</span></li>" for s in SECTIONS.split())
            + "</ul></div>",
            "Business section news",
        ),
        (f"<article><p>{TEASER}</p></article>", "harbour festival"),
    ],
    ids=["menu", "teaser"],
)
def test_old_layout_page_keeps_the_story_not_only_the_menu_or_teaser(
    side: str, side_text: str
) -> None:
    result = extract(_old_layout(side))

    assert result.status == "ok"
    for paragraph in COUNCIL:
        assert paragraph in result.main_text
    # The story is most of the main text (the side column may come along with it).
    story_tokens = len(tokens_words(" ".join(COUNCIL)))
    assert story_tokens >= 0.75 * result.main_tokens
    assert side_text in result.full_text


def test_article_laid_out_inside_a_nav_is_kept() -> None:
    html = (
        "<html><head><title>Budget</title></head><body><nav class='layout'><div class='wrap'>"
        "<ul><li><a href='/'>Home</a></li></ul><div class='main'><h1>Council passes budget</h1>"
        + "".join(f"<p>{p}</p>" for p in COUNCIL[:3])
        + "</div></div></nav></body></html>"
    )

    result = extract(html)

    assert result.status == "ok"
    for paragraph in COUNCIL[:3]:
        assert paragraph in result.main_text


def test_the_previous_extractor_version_is_still_available() -> None:
    html = (
        "<html><body><nav><div>"
        + "".join(f"<p>{p}</p>" for p in COUNCIL[:3])
        + "</div></nav></body></html>"
    )

    assert extract(html, version=EXTRACTOR_V1).status == "empty"
    assert extract(html).status == "ok"
    with pytest.raises(ValueError, match="unknown extractor version"):
        extract(html, version="nope")


def test_token_counts_are_what_the_reference_fingerprint_counts() -> None:
    # Soft hyphens and zero-width spaces split words in the raw text, not after the
    # reference normalization; decomposed accents are composed by it.
    words = " ".join(COUNCIL).split()
    raw = " ".join(w[:3] + "\u00ad" + w[3:] if len(w) > 6 else w for w in words)
    raw = raw.replace(" the ", " the\u200b ") + " " + unicodedata.normalize("NFD", VI_PARAGRAPHS[0])
    html = f"<html><body><article><p>{raw}</p></article></body></html>"

    result = extract(html)

    assert result.main_tokens == fingerprint_text(REFERENCE_KEY, result.main_text).token_count
    assert result.main_tokens == len(tokens_words(" ".join(COUNCIL + VI_PARAGRAPHS[:1])))
    assert result.full_tokens == fingerprint_text(REFERENCE_KEY, result.full_text).token_count


# --- pages nested deeper than the parser goes ---------------------------------------------


@pytest.mark.parametrize("tag", ["div", "span", "font", "table"])
def test_100000_deep_nesting_keeps_the_text_and_says_so(tag: str) -> None:
    words = " ".join(COUNCIL)
    html = (
        "<html><head><title>Deep</title></head><body><p>A short introduction.</p>"
        + f"<{tag}>" * 100_000
        + words
        + f"</{tag}>" * 100_000
        + "</body></html>"
    )

    result = extract(html)

    assert COUNCIL[-1] in result.main_text
    assert COUNCIL[-1] in result.full_text
    assert result.status == "ok"
    assert "nested deeper than" in result.message


def test_too_deep_even_without_layout_tags_is_an_error_with_the_page_text() -> None:
    words = " ".join(COUNCIL)
    html = "<html><body>" + "<ruby>" * 100_000 + words + "</ruby>" * 100_000 + "</body></html>"

    result = extract(html)

    assert result.status == "error"
    assert "nested deeper than" in result.message
    assert COUNCIL[-1] in result.full_text
    assert result.main_text == ""


# --- crawl-quality pages: what a blocked page is -------------------------------------


def test_a_login_wall_says_it_is_one() -> None:
    html = (
        "<html><body><h1>Members only</h1><p>Please log in to continue reading.</p></body></html>"
    )
    result = extract(html)
    assert (result.status, result.quality) == ("blocked", "login_wall")


@pytest.mark.parametrize(
    ("phrase", "quality"),
    [
        ("登录后查看完整内容", "login_wall"),
        ("Đăng nhập để xem toàn bộ bài viết", "login_wall"),
        ("请输入验证码", "bot_challenge"),
        ("Mã xác nhận không đúng", "bot_challenge"),
        ("Truy cập bị từ chối", "access_denied"),
        ("Bạn không có quyền truy cập trang này", "access_denied"),
        ("禁止访问", "access_denied"),
        ("請先登入", "login_wall"),
    ],
)
def test_what_a_blocked_page_is_in_chinese_and_vietnamese(phrase: str, quality: str) -> None:
    result = extract(f"<html><body><div><p>{phrase}</p></div></body></html>")
    assert (result.status, result.quality) == ("blocked", quality)


@pytest.mark.parametrize(
    ("status", "quality"),
    [(401, "login_wall"), (403, "access_denied"), (429, "rate_limited"), (451, "access_denied")],
)
def test_the_http_status_says_what_a_blocked_page_is(status: int, quality: str) -> None:
    assert extract(_page(EN_PARAGRAPHS, title="Budget"), http_status=status).quality == quality


def _menu(items: list[str]) -> str:
    links = "".join(f'<li><a href="/{i}">{item}</a></li>' for i, item in enumerate(items))
    return f'<div class="menu"><ul>{links}</ul></div>'


SHELL_MENUS = {
    "en": ["Home", "World", "Politics", "Business", "Sport", "Culture", "Travel", "Video"],
    "zh": ["首页", "国内", "国际", "财经", "科技", "体育", "娱乐", "汽车"],
    "vi": ["Trang chủ", "Thời sự", "Thế giới", "Kinh doanh", "Thể thao", "Giải trí", "Xe"],
}


@pytest.mark.parametrize("lang", sorted(SHELL_MENUS))
def test_a_page_whose_main_text_is_only_the_menu_is_a_navigation_shell(lang: str) -> None:
    html = (
        f"<html lang='{lang}'><head><title>Live</title></head><body>"
        f"{_menu(SHELL_MENUS[lang])}<div id='app'></div><script src='/app.js'></script>"
        "</body></html>"
    )
    result = extract(html)
    assert (result.status, result.quality) == ("blocked", "nav_shell")
    assert result.message.startswith("navigation shell")
    assert result.main_text  # the text is kept, only kept out of the index


def test_a_list_of_headlines_is_not_a_navigation_shell() -> None:
    headlines = [
        "Council passes next year's budget after a three hour debate",
        "Tram line to open in the spring of 2026, the finance director says",
        "Libraries ask for longer opening hours during the summer holidays",
        "Swimming pools to stay open late in July and August this year",
    ]
    result = extract(f"<html><body>{_menu(headlines)}</body></html>")
    assert result.status != "blocked"


def test_an_article_with_a_menu_is_not_a_navigation_shell() -> None:
    html = _page(EN_PARAGRAPHS, title="Budget", extra=_menu(SHELL_MENUS["en"]))
    assert (extract(html).status, extract(html).quality) == ("ok", "")


def test_the_doc_type_the_page_declares_comes_with_the_extraction() -> None:
    html = _page(EN_PARAGRAPHS, title="Budget").replace(
        "<title>", '<meta property="og:type" content="article"><title>'
    )
    guess = extract(html).doc_type
    assert (guess.doc_type, guess.rule) == ("article", "og:type")


# --- per doc type: a forum thread keeps its replies -------------------------------------

REPLIES = [
    "I bought the wider lens last spring and never looked back: the corners are sharp even "
    "wide open, and the autofocus is quiet enough for video in a small room.",
    "Mine came with a loose mount ring, so check yours before the return window closes; the "
    "shop replaced it within a week and the second copy has been flawless.",
    "For what it is worth, the older version is half the price second hand and the optics "
    "are the same; only the weather sealing and the coating were changed.",
]


def _thread(head: str) -> str:
    replies = "".join(
        f"<div class='comment' id='comment-{i}'><p class='comment-author'>user{i}</p>"
        f"<p>{text}</p></div>"
        for i, text in enumerate(REPLIES)
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>{head}"
        "<title>Which lens for indoor sports?</title></head>"
        f"<body>{MENU}<main><article><h1>Which lens for indoor sports?</h1>"
        + "".join(f"<p>{p}</p>" for p in EN_PARAGRAPHS[:2])
        + f"</article><section id='comments' class='comments'>{replies}</section></main>"
        f"{FOOTER}</body></html>"
    )


FORUM_HEAD = "<meta name='generator' content='phpBB'>"
ARTICLE_HEAD = "<meta property='og:type' content='article'>"


def test_a_forum_thread_keeps_its_replies_under_the_current_extractor() -> None:
    result = extract(_thread(FORUM_HEAD))
    assert result.doc_type.doc_type == "forum"
    for reply in REPLIES:
        assert reply.split(":")[0] in result.main_text
    assert EN_PARAGRAPHS[0] in result.main_text
    # The previous extractor dropped them: two threads that differ in their replies
    # looked identical.
    old = extract(_thread(FORUM_HEAD), version="trafilatura-2-v2")
    assert not any(reply.split(":")[0] in old.main_text for reply in REPLIES)


@pytest.mark.parametrize(("head", "doc_type"), [(ARTICLE_HEAD, "article"), ("", "other")])
def test_an_article_or_an_undeclared_page_still_drops_its_comments(
    head: str, doc_type: str
) -> None:
    result = extract(_thread(head))
    assert result.doc_type.doc_type == doc_type
    assert EN_PARAGRAPHS[0] in result.main_text
    assert not any(reply.split(":")[0] in result.main_text for reply in REPLIES)


FOURTH_REPLY = (
    "Rent both for a weekend before buying: the gym lights where you shoot matter more "
    "than any chart, and one evening of real games will settle the question."
)


def _thread_of_posts(head: str) -> str:
    """A thread whose question is followed by four reply blocks, as forum software
    lays them out (trafilatura takes them for comments)."""
    replies = "".join(
        f"<div class='comment' id='comment-{i}'><div class='comment-author'>user{i}</div>"
        f"<p>{text}</p></div>"
        for i, text in enumerate([*REPLIES, FOURTH_REPLY])
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>{head}"
        "<title>Which lens for indoor sports?</title></head>"
        f"<body>{MENU}<main><article><h1>Which lens for indoor sports?</h1>"
        + "".join(f"<p>{p}</p>" for p in EN_PARAGRAPHS[:2])
        + f"</article><section id='comments' class='comments'>{replies}</section></main>"
        f"{FOOTER}</body></html>"
    )


def test_a_thread_declared_an_article_keeps_its_replies_at_a_thread_url() -> None:
    html = _thread_of_posts(ARTICLE_HEAD)
    result = extract(html, url="https://forum.example.org/threads/which-lens.4711/")
    # The declaration is kept; the extraction follows the thread markup.
    assert result.doc_type.doc_type == "article"
    assert EN_PARAGRAPHS[0] in result.main_text
    for reply in [*REPLIES, FOURTH_REPLY]:
        assert reply.split(":")[0] in result.main_text
    # The same page elsewhere than at a thread URL is an article with its comments dropped.
    elsewhere = extract(html, url="https://example.com/blog/which-lens")
    assert not any(reply.split(":")[0] in elsewhere.main_text for reply in REPLIES)
    # trafilatura-2-v2 is unchanged.
    old = extract(
        html, url="https://forum.example.org/threads/which-lens.4711/", version="trafilatura-2-v2"
    )
    assert old.main_text == extract(html, version="trafilatura-2-v2").main_text


def test_two_threads_that_differ_only_in_their_replies_differ_in_main_text() -> None:
    a = _thread(FORUM_HEAD)
    b = a.replace(REPLIES[1], "Completely different advice about a telephoto zoom and a monopod.")
    ka = fingerprint_text(REFERENCE_KEY, extract(a).main_text)
    kb = fingerprint_text(REFERENCE_KEY, extract(b).main_text)
    assert ka.text_sha256 != kb.text_sha256
