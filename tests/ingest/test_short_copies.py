"""Short copies end to end: a short text copied with light edits beside another site's
text is paired by the passage channel's short-copy rule, and stays above the floor;
two short pages of one site template are not paired."""

import pytest
from django.conf import settings

from ingest import candidates
from ingest.models import CandidatePair
from tests import factories
from tests.zh_text import chinese_article_text

pytestmark = pytest.mark.django_db


def _doc(path: str, text: str, site: str):
    value = factories.simhash_of(text)
    return factories.indexed_document(
        url=f"https://{site}/{path}", text=text, simhash=value, site=site
    )


def _edited(text: str, every: int) -> str:
    words = text.split(" ")
    return " ".join("changed" if i % every == every - 1 else w for i, w in enumerate(words))


@pytest.mark.parametrize("seed", [3, 8])
def test_an_edited_wire_excerpt_beside_context_is_paired(seed: int) -> None:
    article = factories.article_text(seed, words=500)
    excerpt = " ".join(article.split(" ")[200:340])
    context = factories.article_text(500 + seed, words=100)
    original = _doc("story", article, "wire.example.com")
    copy = _doc("reprint", context + "\n\n" + _edited(excerpt, 20), "local.example.org")
    candidates.candidates_find(document_ids=[original.pk])
    candidates.candidates_find(document_ids=[copy.pk])
    pair = CandidatePair.objects.get()
    # Under the channel's containment threshold both ways: only the short-copy rule
    # nominates it.
    assert max(pair.a_in_b, pair.b_in_a) < settings.PASSAGE_CONTAINMENT_MIN
    assert "passages" in pair.channel_names
    short = pair.evidence["passages"]["short_copy"]
    assert short["shingles"] >= settings.PASSAGE_SHORT_SHINGLES_MIN
    assert not pair.below_floor


def test_short_pages_of_one_template_are_not_paired() -> None:
    footer = factories.article_text(999, words=40)
    docs = [
        _doc(f"p{i}", factories.article_text(300 + i, words=150) + "\n\n" + footer, "t.example.com")
        for i in range(4)
    ]
    for d in docs:
        candidates.candidates_find(document_ids=[d.pk])
    for pair in CandidatePair.objects.all():
        assert "passages" not in pair.channel_names


def test_the_check_api_calls_a_short_copy_near(settings) -> None:
    article = factories.article_text(8, words=500)
    original = _doc("story", article, "wire.example.com")
    candidates.candidates_find(document_ids=[original.pk])  # indexes its passages
    excerpt = " ".join(article.split(" ")[200:340])
    text = factories.article_text(508, words=100) + "\n\n" + _edited(excerpt, 20)
    result = candidates.check(text=text, doc_type="article")
    assert result.verdict == "near"
    assert result.channels == ["passages"]
    assert [m.document_id for m in result.matches] == [original.pk]


def test_a_short_chinese_excerpt_on_another_site_is_paired_by_characters() -> None:
    """A Chinese wire story's one or two sentences under another site's lead and credit
    lines share one or two passages with it: the character reading pairs them."""
    article = chinese_article_text(41, 420)
    sentences = [s + "。" for s in article.replace("\n", "").split("。") if s]
    excerpt = "".join(sentences[3:5])
    assert len(excerpt) < 120
    original = _doc("story", article, "wire.example.cn")
    copy = _doc(
        "reprint", "\n".join(["【本地新闻网讯】", excerpt, "责任编辑：小编"]), "local.example.cn"
    )
    candidates.candidates_find(document_ids=[original.pk])
    candidates.candidates_find(document_ids=[copy.pk])
    pair = CandidatePair.objects.get()
    assert pair.shared_passages < settings.PASSAGE_SHARED_MIN
    assert "passages" in pair.channel_names
    short = pair.evidence["passages"]["short_copy"]
    assert short["reading"] == "characters"
    assert short["shingles"] >= settings.PASSAGE_SHORT_CHARS_MIN
    assert not pair.below_floor


def test_two_short_chinese_pages_of_one_template_are_not_paired() -> None:
    footer = "本站郑重声明：所载文章仅供参考。版权所有，未经许可不得转载。联系电话：010-0000"
    docs = [
        _doc(f"p{i}", chinese_article_text(300 + i, 120) + "\n" + footer, "t.example.cn")
        for i in range(4)
    ]
    for d in docs:
        candidates.candidates_find(document_ids=[d.pk])
    for pair in CandidatePair.objects.all():
        assert "passages" not in pair.channel_names
