"""The language benchmark's transformations (bench/transform_zh_vi.py)."""

import random
import sys
from collections import Counter
from pathlib import Path

import lxml.html
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import transform_zh_vi as T  # noqa: E402

from tests.bench.pages import ZH_SENTENCES, article_html, write_data  # noqa: E402

PARAS = [f"第{i}段。" + s for i, s in enumerate(ZH_SENTENCES * 2)]


def _texts(body: bytes) -> tuple[str, list[str], list[str]]:
    doc = lxml.html.document_fromstring(body)
    return (
        doc.findtext(".//title"),
        [p.text_content() for p in doc.iter("p")],
        [a.text_content() for a in doc.iter("a")],
    )


def test_transplant_replaces_the_article_and_keeps_the_template():
    body = T.transplant(article_html("zh", 1, 7), "新标题", ["第一段文字。", "第二段文字。"])
    title, paras, links = _texts(body)
    assert title == "新标题"
    assert "第一段文字。" in paras and "第二段文字。" in paras
    assert not any("7-" in p for p in paras)  # the template's own article is gone
    assert "首页1" in links and "Hot 1" in links  # menu and sidebar stay
    assert b'<meta charset="utf-8">' in body
    assert b"<h1>\xe6\x96\xb0" in body  # the heading is the new title


def test_transplant_without_a_container_raises():
    with pytest.raises(ValueError):
        T.transplant("<html><body><p>x</p></body></html>", "t", ["a"])


def test_source_lines_name_a_source():
    rng = random.Random(1)
    zh = T.source_line(PARAS, "zh", rng)
    extra = [p for p in zh if p not in PARAS]
    assert len(zh) == len(PARAS) + 1 and ("来源" in extra[0] or "转载" in extra[0])
    assert "版权" in extra[0] or "出处" in extra[0]
    vi = T.source_line(["Một.", "Hai."], "vi", rng)
    assert vi[:2] == ["Một.", "Hai."] and vi[2].lstrip("(").startswith(("Theo", "Nguồn"))


def test_retitle_deletes_two_paragraphs_and_inserts_a_comment():
    title, paras = T.retitle_del2_comment("标题", PARAS, "zh", random.Random(2))
    assert title.endswith("标题") and title != "标题"
    assert len(paras) == len(PARAS) - 2 + 1
    assert paras[0] == PARAS[0]  # the lead stays
    assert sum(p not in PARAS for p in paras) == 1


def test_shuffle_keeps_the_paragraphs_in_another_order():
    out = T.shuffle(PARAS, "zh", random.Random(3))
    assert Counter(out) == Counter(PARAS) and out != PARAS


def test_shuffle_of_one_block_shuffles_its_sentences():
    block = ["".join(ZH_SENTENCES)]
    out = T.shuffle(block, "zh", random.Random(3))
    assert len(out) == len(ZH_SENTENCES) and sorted(out) == sorted(ZH_SENTENCES)


@pytest.mark.parametrize("seed", range(5))
def test_excerpt_is_contiguous_and_near_half(seed):
    paras = [f"{i:02d}" + "字" * 48 for i in range(20)]
    out = T.excerpt(paras, "zh", random.Random(seed))
    start = paras.index(out[0])
    assert out == paras[start : start + len(out)]
    assert 0.35 <= sum(map(len, out)) / sum(map(len, paras)) <= 0.65


def test_price_change_in_yuan_and_dong():
    before, after = T.price_pair(
        ["这款手机售价1,299元，今天开售。", "其他内容。"], "zh", random.Random(4)
    )
    assert before[0] != after[0] and "1,299元" in before[0] and "元" in after[0]
    assert before[1:] == after[1:]
    before, after = T.price_pair(["Giá 1.250.000 đồng một chiếc."], "vi", random.Random(4))
    assert "1.250.000 đồng" in before[0] and "1.250.000" not in after[0]
    assert T._VI_PRICE.search(after[0])


def test_price_change_inserts_a_price_where_the_text_has_none():
    before, after = T.price_pair(PARAS, "zh", random.Random(5))
    assert len(before) == len(after) == len(PARAS) + 1
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert len(changed) == 1 and "元" in changed[0][0] and "元" in changed[0][1]


def test_script_convert_both_ways():
    pytest.importorskip("opencc")
    assert T.script_convert("国家发展改革委员会") == "國家發展改革委員會"
    assert T.script_convert("國家發展改革委員會") == "国家发展改革委员会"


def test_menu_change_keeps_the_article():
    html = article_html("zh", 2, 3)
    body = T.menu_changed(html, random.Random(6), "zh")
    _, paras, links = _texts(body)
    _, old_paras, old_links = _texts(html.encode())
    assert paras == old_paras
    assert links != old_links and len(links) == len(old_links) + 1


def _corpus(tmp_path, seed=29):
    data = write_data(tmp_path / "data")
    pages = T.load_pages(data)

    def text_of(p):
        doc = lxml.html.document_fromstring(p.html)
        article = doc.find_class("article")[0]
        return doc.findtext(".//h1"), "\n".join(x.text_content() for x in article.iter("p"))

    arts = T.articles(pages, text_of)
    temps = T.templates(pages, lambda p: True)
    return T.build(arts, temps, per_kind=3, seed=seed)


def test_build_makes_every_kind_per_language_deterministically(tmp_path):
    pytest.importorskip("opencc")
    one, two = _corpus(tmp_path), _corpus(tmp_path)
    assert one.digest() == two.digest()
    assert _corpus(tmp_path, seed=30).digest() != one.digest()
    kinds = Counter((p.lang, p.kind) for p in one.pairs if p.kind != "hard_negative")
    for lang, names in T.KINDS.items():
        for kind in names:
            assert kinds[(lang, kind)] == 3
    pages = {p.key: p for p in one.pages}
    for pair in one.pairs:
        if pair.kind == "hard_negative":
            a, b = pages[pair.a], pages[pair.b]
            assert a.template == b.template and a.source != b.source
        elif pair.kind not in ("menu_only_change", "price_change"):
            b = pages[pair.b]
            assert b.source == pair.a and b.template != pair.a
    assert any(p.kind == "hard_negative" for p in one.pairs)


def test_fixtures_are_one_page_at_many_urls(tmp_path):
    pytest.importorskip("opencc")
    corpus = _corpus(tmp_path)
    pages = {p.key: p for p in corpus.pages}
    for kind in ("login_wall", "js_shell"):
        keys = corpus.fixtures[kind]
        assert len(keys) == 30
        for lang in ("zh", "vi", "en"):
            mine = [pages[k] for k in keys if k.startswith(lang + ":")]
            assert len({p.body for p in mine}) == 1 and len({p.url for p in mine}) == 10
    assert (
        "请登录" in T.login_wall("zh").decode()
        and "Vui lòng đăng nhập" in T.login_wall("vi").decode()
    )


def test_article_of_reads_the_article_container():
    title, paras = T.article_of(article_html("vi", 0, 4))
    assert title == "Site 0 article 4"
    assert len(paras) == 12 and paras[0].endswith("4-0") and not any("Hot" in p for p in paras)


_FOOTER = "违法和不良信息举报电话：010-00000000 客服电话：010-00000001 传真：010-00000002 " * 3


def _footer_page(n: int, host: str = "news.example-zh.test") -> T.DevPage:
    """An article page whose footer block outscores its short article container."""
    paras = "".join(f"<p>{s}{n}</p>" for s in ZH_SENTENCES[:3])
    html = (
        f'<html><head><meta charset="utf-8"><title>标题{n}</title></head><body>'
        f'<h1>标题{n}</h1><div class="art">{paras}</div><div class="foot">{_FOOTER}</div>'
        "</body></html>"
    )
    return T.DevPage(
        f"zh-r-{n:04d}", f"https://{host}/{n}.html", html, "zh", "real", None, None, None
    )


def _first_words(arts: dict[str, list[T.Article]]) -> dict[str, str]:
    return {a.page.id: "".join(a.paras)[:10] for a in arts["zh"]}


def test_articles_skip_a_container_the_extractor_drops():
    pages = [_footer_page(1)]

    def article_only(p: T.DevPage) -> tuple[str, str]:
        return "", "\n".join(f"{s}1" for s in ZH_SENTENCES[:3])

    def footer_too(p: T.DevPage) -> tuple[str, str]:
        return "", "\n".join([*(f"{s}1" for s in ZH_SENTENCES[:3]), _FOOTER])

    assert _first_words(T.articles(pages, article_only, min_chars=50)) == {
        "zh-r-0001": ZH_SENTENCES[0][:10]
    }
    # An extractor that keeps the footer too lets the highest-scoring container stand.
    assert _first_words(T.articles(pages, footer_too, min_chars=50)) == {"zh-r-0001": _FOOTER[:10]}


def test_articles_skip_a_container_its_site_repeats():
    def everything(p: T.DevPage) -> tuple[str, str]:
        doc = lxml.html.document_fromstring(p.html)
        return "", doc.text_content()

    one_site = [_footer_page(n) for n in range(1, 6)]
    picked = _first_words(T.articles(one_site, everything, min_chars=50))
    assert picked == {p.id: ZH_SENTENCES[0][:10] for p in one_site}
    # Spread over five sites, the footer is no site's repeated line.
    spread = [_footer_page(n, f"site{n}.example-zh.test") for n in range(1, 6)]
    assert set(_first_words(T.articles(spread, everything, min_chars=50)).values()) == {
        _FOOTER[:10]
    }
