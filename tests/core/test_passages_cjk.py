"""Passages of the mixed-script method (winnow-mixed-k5-w36-v1): character k-grams
inside CJK runs, words elsewhere; the guarantee stated in characters."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core import passages as P
from ingest.core.methods import CURRENT_REFERENCE_KEY, DEFAULT_KEY, passage_method_for
from ingest.core.normalize import _FOLD_RUN_RE

MIXED = P.MIXED_METHOD
# Common simplified characters (and their punctuation), drawn at random.
HAN = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动"
    "同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自"
    "二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日"
    "那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变"
    "条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总"
    "次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指"
    "几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器"
    "压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安"
    "场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集"
    "温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连"
    "断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精"
    "值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属"
    "圆包火住调满县局照参红细引听该铁价严"
)
han_runs = st.text(alphabet=HAN, min_size=0, max_size=200)
punct = st.sampled_from(["", "，", "。", "、", "：", "“", "”", "！", " ", "\n"])


def _clause_text(chars: str, marks: list[str]) -> str:
    """Han text with punctuation between clauses of 3–17 characters."""
    out, at = [], 0
    for i, mark in enumerate(marks):
        step = 3 + (i * 7) % 15
        out.append(chars[at : at + step] + mark)
        at += step
    return "".join(out) + chars[at:]


def test_the_mixed_passage_method_is_the_default_methods() -> None:
    assert passage_method_for(DEFAULT_KEY) == MIXED == "winnow-mixed-k5-w36-v1"
    assert passage_method_for(CURRENT_REFERENCE_KEY) == P.METHOD


def test_han_runs_are_read_a_character_at_a_time() -> None:
    w = P.words("新華社北京電　ＡＢＣ news", method=MIXED)
    assert w.tokens == ["新", "华", "社", "北", "京", "电", "abc", "news"]
    originals = ["新", "華", "社", "北", "京", "電", "ＡＢＣ", "news"]
    assert [w.text[s:e] for s, e in w.spans] == originals


@settings(max_examples=200)
@given(han_runs, han_runs, han_runs, han_runs, st.data())
def test_a_shared_run_of_guarantee_characters_shares_a_passage(
    before_a: str, after_a: str, before_b: str, after_b: str, data: st.DataObject
) -> None:
    shared = data.draw(st.text(alphabet=HAN, min_size=P.GUARANTEE, max_size=120))
    marks_a = data.draw(st.lists(punct, max_size=10))
    marks_b = data.draw(st.lists(punct, max_size=10))
    a = _clause_text(before_a, marks_a) + shared + _clause_text(after_a, marks_b)
    b = _clause_text(before_b, marks_b) + shared + _clause_text(after_b, marks_a)
    ov = P.overlap(P.passages(a, method=MIXED), P.passages(b, method=MIXED))
    assert ov.shared >= 1


@settings(max_examples=200)
@given(st.text().map(lambda t: _FOLD_RUN_RE.sub("", t)))
def test_text_without_cjk_has_the_words_methods_passages(text: str) -> None:
    assert P.passages(text, method=MIXED) == P.passages(text)
    assert P.words(text, method=MIXED) == P.words(text)


def _article(seed: int, paragraphs: int = 12) -> list[str]:
    out = []
    for p in range(paragraphs):
        chars = "".join(HAN[(seed * 131 + p * 37 + i * i * 7 + i) % len(HAN)] for i in range(60))
        out.append(chars[:20] + "，" + chars[20:45] + "；" + chars[45:] + "。")
    return out


def test_containment_both_ways_for_a_chinese_excerpt() -> None:
    whole = _article(1)
    excerpt = whole[3:8]  # five of twelve paragraphs
    pw = P.passages("\n".join(whole), method=MIXED)
    wrapped = ["编者按：以下为节选。", *excerpt, "更多精彩请关注本站。"]
    pe = P.passages("\n".join(wrapped), method=MIXED)
    ov = P.overlap(pe, pw)
    assert ov.a_in_b >= 0.8  # the excerpt lies inside the article
    assert 0.2 <= ov.b_in_a <= 0.6  # the article is only partly inside the excerpt


def test_a_traditional_repost_shares_the_passages_of_the_simplified_original() -> None:
    original = (
        "国务院新闻办公室今天举行新闻发布会，国家统计局新闻发言人介绍了前三季度国民经济运行情况。"
    )
    traditional = (
        "國務院新聞辦公室今天舉行新聞發佈會，國家統計局新聞發言人介紹了前三季度國民經濟運行情況。"
    )
    a, b = P.passages(original, method=MIXED), P.passages(traditional, method=MIXED)
    assert P.hash_set(a) == P.hash_set(b)
    # The words method saw one "word" per clause: nothing to winnow.
    assert P.overlap(P.passages(original), P.passages(traditional)).shared == 0


def test_a_shared_stock_line_of_guarantee_characters_is_all_two_articles_share() -> None:
    stock = (
        "本文来源：新华网　责任编辑：王伟　版权归原作者所有，如有侵权请联系本站删除。"
        "更多精彩请关注本站微信公众号。"
    )
    a = P.passages("\n".join([*_article(2), stock]), method=MIXED)
    b = P.passages("\n".join([*_article(3), stock]), method=MIXED)
    ov = P.overlap(a, b)
    assert ov.shared >= 1  # the stock line's passages are shared ...
    stock_hashes = P.hash_set(P.passages(stock, method=MIXED))
    assert P.overlap(a, b, ignore=stock_hashes).shared == 0  # ... and nothing else is
