"""The passage channel end to end on the configured database (SQLite by default,
PostgreSQL under DATABASE_URL): index, template passages, multi-channel pairs, groups."""

from typing import Any

import pytest
from django.conf import settings

from ingest import candidates, passages
from ingest.core import channels
from ingest.models import (
    BoilerplateDrop,
    CandidatePair,
    Document,
    DoNotMatch,
    GroupMember,
    PassageSet,
    PassageTemplate,
)
from tests import factories

pytestmark = pytest.mark.django_db

ARTICLE = factories.article_text(101, words=500)
WORDS = ARTICLE.split()


def _doc(path: str, text: str, site: str = "p.example.com", **kw: Any) -> Document:
    value = factories.simhash_of(text)
    return factories.indexed_document(
        url=f"https://{site}/{path}", text=text, simhash=value, site=site, **kw
    )


def _find(*docs) -> None:
    candidates.candidates_find(document_ids=[d.pk for d in docs])


def _excerpt(start: float, share: float) -> str:
    a = int(len(WORDS) * start)
    return " ".join(WORDS[a : a + int(len(WORDS) * share)])


def _pair(x, y) -> CandidatePair:
    a, b = sorted((x.pk, y.pk))
    return CandidatePair.objects.get(a_id=a, b_id=b)


def test_an_excerpt_is_paired_by_the_passage_channel_alone() -> None:
    intro = factories.article_text(7, words=60)
    article = _doc("full", ARTICLE)
    excerpt = _doc("teaser", intro + "\n\n" + _excerpt(0.2, 0.4), site="q.example.com")
    _find(article)
    _find(excerpt)
    pair = _pair(article, excerpt)
    assert pair.channel_names == ["passages"]  # far in SimHash bits, not the same text
    assert pair.distance > 3
    # B (the excerpt, created later) holds 40% of A; A holds all of B but its intro.
    assert pair.a_in_b < 0.6
    assert pair.b_in_a > 0.7
    assert pair.shared_passages >= settings.PASSAGE_SHARED_MIN
    evidence = pair.evidence["passages"]
    assert evidence["shared"] == pair.shared_passages
    assert evidence["passages_b"] * pair.b_in_a == pytest.approx(pair.shared_passages)
    # Stored once: what the pair's columns give is not in its stored JSON.
    assert not {"shared", "a_in_b", "runs"} & set((pair.evidence_kept or {}).get("passages", {}))
    assert pair.evidence["simhash"]["distance"] == pair.distance
    assert not pair.below_floor  # the containment exemption covers passage pairs
    assert PassageSet.objects.count() == 2


def test_a_near_copy_records_every_channel_once() -> None:
    a = _doc("a", ARTICLE)
    b = _doc("b", ARTICLE.replace(WORDS[10], "changed", 1), site="q.example.com")
    _find(a, b)
    _find(a, b)  # idempotent: one pair per document pair and method
    assert CandidatePair.objects.count() == 1
    pair = _pair(a, b)
    assert set(pair.channel_names) == {"simhash", "passages"}
    assert pair.channels & channels.SIMHASH and pair.channels & channels.PASSAGES
    # Its columns give every entry of its evidence: no JSON is stored (docs/scaling.md).
    assert pair.evidence_kept is None
    assert pair.evidence["passages"]["shared"] == pair.shared_passages


def test_unrelated_articles_are_not_paired() -> None:
    a = _doc("a", ARTICLE)
    b = _doc("b", factories.article_text(202, words=500))
    _find(a, b)
    assert not CandidatePair.objects.exists()


def test_template_passages_are_counted_per_site_and_ignored(settings) -> None:
    # The first three pages count the footer (from the fourth on, it is also the site's
    # boilerplate line and is no longer read).
    settings.PASSAGE_TEMPLATE_DF = 3
    boiler = factories.article_text(999, words=160)  # a long leaked footer
    for i in range(5):  # each page searched as it arrives
        _find(_doc(f"t{i}", factories.article_text(300 + i, words=100) + "\n\n" + boiler))
    assert PassageTemplate.objects.filter(site__host="p.example.com").exists()
    templates = {t for t in PassageTemplate.objects.values_list("hash", flat=True)}
    # The footer is half of every page; once counted, it is evidence of nothing.
    late = _doc("late", factories.article_text(400, words=100) + "\n\n" + boiler)
    _find(late)
    for pair in CandidatePair.objects.filter(b_id=late.pk):
        assert "passages" not in pair.channel_names
        assert pair.a_in_b < 0.2 and pair.b_in_a < 0.2
    # By then the footer is also the site's boilerplate: dropped from what the late page's
    # passages are read from, and recorded.
    stored = set(PassageSet.objects.get(document=late).hashes)
    assert not stored & templates
    (drop,) = BoilerplateDrop.objects.filter(document=late)
    assert drop.learned_from == 5
    assert [line for line in boiler.split("\n") if line.strip()] == drop.lines


def test_do_not_match_holds_for_passage_pairs() -> None:
    article = _doc("full", ARTICLE)
    excerpt = _doc("teaser", _excerpt(0.1, 0.5), site="q.example.com")
    a, b = sorted((article.pk, excerpt.pk))
    DoNotMatch.objects.create(a_id=a, b_id=b, source="label", actor="person:x")
    _find(article, excerpt)
    assert not CandidatePair.objects.exists()


def test_two_excerpts_group_with_their_article_as_representative() -> None:
    article = _doc("full", ARTICLE, site="r.example.com")
    first = _doc("one", _excerpt(0.0, 0.35), site="q.example.com", priority=5)
    second = _doc("two", _excerpt(0.6, 0.35), site="s.example.com")
    _find(first)
    _find(second)
    _find(article)
    group = GroupMember.objects.get(document=article).group
    members = set(group.members.values_list("document_id", flat=True))
    assert members == {article.pk, first.pk, second.pk}
    assert group.representative_id == article.pk
    assert "most complete version" in group.representative_reason
    assert not group.chained  # excerpts are far in bits from their article by nature
    # The two excerpts share nothing: they join through the article.
    assert not CandidatePair.objects.filter(
        a_id=min(first.pk, second.pk), b_id=max(first.pk, second.pk)
    ).exists()


def test_the_index_answers_like_brute_force() -> None:
    docs = [_doc(f"d{i}", _excerpt(i / 10, 0.3)) for i in range(8)]
    _find(*docs)
    from ingest.core import passages as core

    method = passages.method_for(settings.ACTIVE_METHOD)  # what candidates_find stored
    ps = core.passages(ARTICLE, method=passages.METHODS[method])
    fast = {(h.document_id, h.shared) for h in passages.query(passages=ps, method=method)}
    slow = {(h.document_id, h.shared) for h in passages.brute_force(passages=ps, method=method)}
    assert fast == slow and fast


def test_the_recall_check_covers_the_passage_index() -> None:
    import io

    from django.core.management import call_command

    docs = [_doc(f"d{i}", _excerpt(i / 10, 0.35)) for i in range(6)]
    _find(*docs)
    out = io.StringIO()
    call_command("candidates", "--recall-check", stdout=out)
    text = out.getvalue()
    assert "passage recall: 1.000" in text
    by_index = int(text.split("found by the passage index:")[1].split()[0])
    by_brute = int(text.split("passage recall")[0].split("found by brute force:")[-1].split()[0])
    assert by_index == by_brute > 0


def test_check_api_finds_an_excerpt_by_passages_and_skips_the_page_itself(
    client, api_token
) -> None:
    article = _doc("full", ARTICLE)
    _find(article)
    auth = {"Authorization": f"Bearer {api_token}"}

    def ask(**payload: object) -> dict:
        r = client.post("/api/v1/check", payload, content_type="application/json", headers=auth)
        assert r.status_code == 200, r.content
        return r.json()

    teaser = ask(text=_excerpt(0.3, 0.4), url="https://other.example.com/teaser")
    assert teaser["verdict"] == "near"
    assert teaser["channels"] == ["passages"]
    match = teaser["matches"][0]
    assert match["document_id"] == article.pk
    assert match["channels"] == ["passages"]
    assert match["checked_in_match"] > 0.9 and match["match_in_checked"] < 0.6

    itself = ask(text=ARTICLE, url=article.url)
    assert all(m["document_id"] != article.pk for m in itself["matches"])
    assert itself["verdict"] == "new"
    elsewhere = ask(text=ARTICLE, url="https://mirror.example.com/x")
    assert elsewhere["verdict"] == "exact"
    assert elsewhere["channels"] == ["exact", "simhash", "passages"]
