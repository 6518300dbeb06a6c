"""Stock phrases of Chinese and Vietnamese crawls (本文来源…, 责任编辑…, 更多精彩请关注…,
"Theo …", "Nguồn: …") on a small multi-site corpus, PostgreSQL: once such a line recurs on
PASSAGE_COMMON_DF pages of several sites its passages are stock phrases, two different
articles that share only it are not paired, and the pair view shows it as a stock phrase."""

import random

import pytest
from django.conf import settings

from ingest import candidates, passages
from ingest.core import passages as core
from ingest.core.methods import DEFAULT_KEY, fingerprint_text
from ingest.models import CandidatePair, PassageCommon
from reviews.pair.passage_panel import pair_passages
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

HAN = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过"
    "子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体"
    "制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内"
)
STOCK_ZH = (
    "本文来源：新华网　责任编辑：王伟　版权归原作者所有，如有侵权请联系本站删除。"
    "更多精彩请关注本站微信公众号，获取第一手资讯。"
)
VI_TEXT = (
    "người dân thành phố cho biết năm nay kinh tế phát triển nhanh chóng nhiều doanh nghiệp "
    "mới được thành lập trong khu vực công nghiệp phía bắc tỉnh đã đầu tư xây dựng đường "
    "giao thông trường học bệnh viện và các công trình phúc lợi xã hội khác"
)
VI_SYLLABLES = VI_TEXT.split()
STOCK_VI = (
    "Theo Thông tấn xã Việt Nam. Nguồn: Báo Tin Tức, bản quyền thuộc về tác giả, vui lòng "
    "ghi rõ nguồn khi đăng lại bài viết này từ trang của chúng tôi và các trang đối tác khác "
    "trên toàn quốc."
)


def _chinese_article(seed: int, paragraphs: int = 8) -> str:
    rng = random.Random(seed)
    out = []
    for _ in range(paragraphs):
        clauses = ["".join(rng.choice(HAN) for _ in range(rng.randint(8, 20))) for _ in range(4)]
        out.append("，".join(clauses) + "。")
    return "\n\n".join(out)


def _vietnamese_article(seed: int, paragraphs: int = 6) -> str:
    rng = random.Random(seed)
    return "\n\n".join(
        " ".join(rng.choice(VI_SYLLABLES) for _ in range(40)).capitalize() + "."
        for _ in range(paragraphs)
    )


def _doc(site: str, path: str, text: str):
    value = fingerprint_text(settings.ACTIVE_METHOD, text).simhash
    return factories.indexed_document(
        url=f"https://{site}/{path}", text=text, simhash=value or 0, site=site
    )


@pytest.fixture
def corpus(settings):
    """Eight different Chinese and eight different Vietnamese articles on eight sites
    (eight registrable domains), each ending in its language's stock lines."""
    assert settings.ACTIVE_METHOD == DEFAULT_KEY
    settings.PASSAGE_COMMON_DF = 4
    settings.PASSAGE_TEMPLATE_DF = 100  # no site has enough pages for a template
    docs = {}
    for i in range(8):
        zh = _doc(f"zh{i}-example.cn", "a", _chinese_article(i) + "\n\n" + STOCK_ZH)
        vi = _doc(f"vi{i}-example.vn", "a", _vietnamese_article(i) + "\n\n" + STOCK_VI)
        candidates.candidates_find(document_ids=[zh.pk, vi.pk])
        docs[f"zh{i}"], docs[f"vi{i}"] = zh, vi
    return docs


def _stock_passages(line: str, method: int) -> set[int]:
    name = passages.METHODS[method]
    return {core.to_signed(h) for h in core.hash_set(core.passages(line, method=name))}


def test_recurring_stock_lines_become_stock_phrases_and_pair_nothing(corpus) -> None:
    number = passages.method_for(DEFAULT_KEY)
    common = set(PassageCommon.objects.filter(method=number).values_list("hash", flat=True))
    assert _stock_passages(STOCK_ZH, number) & common
    assert _stock_passages(STOCK_VI, number) & common
    # Different articles sharing only their stock lines are never a candidate pair.
    assert not CandidatePair.objects.filter(method__key=DEFAULT_KEY).exists()


def test_the_pair_view_shows_the_stock_line_of_a_chinese_repost_as_such(corpus) -> None:
    body = _chinese_article(0)
    repost = _doc("zh9-example.cn", "repost", "转载自新华网\n\n" + body + "\n\n" + STOCK_ZH)
    candidates.candidates_find(document_ids=[repost.pk])
    a, b = sorted((corpus["zh0"].pk, repost.pk))
    pair = CandidatePair.objects.get(method__key=DEFAULT_KEY, a_id=a, b_id=b)
    view = pair_passages(pair=pair)
    assert view.stock_a and view.stock_b
    stock_text = "".join(s.text for s in view.b_segments if s.kind == "stock")
    assert stock_text and stock_text in STOCK_ZH
    shared_text = "".join(s.text for s in view.a_segments if s.kind == "shared")
    assert len(shared_text) > len(body) / 2  # the article itself is the shared part
