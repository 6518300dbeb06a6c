"""The passage index's storage on the configured database (SQLite by default,
PostgreSQL under DATABASE_URL): a new database stores the coarse sets, a database of the
old storage keeps it until it is rebuilt, and a short excerpt of a long stored article
still finds it through one stored passage."""

import io
from typing import Any

import pytest
from django.core.management import call_command

from ingest import candidates, passages
from ingest.core import passages as core
from ingest.models import CandidatePair, Document, PassageSet
from tests import factories

pytestmark = pytest.mark.django_db

ARTICLE = factories.article_text(211, words=1400)
WORDS = ARTICLE.split()


def _doc(path: str, text: str, site: str = "p.example.com", **kw: Any) -> Document:
    return factories.indexed_document(
        url=f"https://{site}/{path}", text=text, simhash=factories.simhash_of(text), site=site, **kw
    )


def _find(*docs: Document) -> None:
    candidates.candidates_find(document_ids=[d.pk for d in docs])


def _pair(x: Document, y: Document) -> CandidatePair | None:
    a, b = sorted((x.pk, y.pk))
    return CandidatePair.objects.filter(a_id=a, b_id=b).first()


def test_a_new_database_stores_the_coarse_sets() -> None:
    article = _doc("full", ARTICLE)
    _find(article)
    row = PassageSet.objects.get(document=article)
    assert passages.STORAGES[row.method] == core.COARSE
    found = core.passages(ARTICLE, method=passages.METHODS[row.method])
    assert len(core.hash_set(found)) > core.COARSE.whole_max
    assert sorted(core.to_unsigned(h) for h in row.hashes) == core.COARSE.stored(found)
    # About one passage in four of a long text is kept.
    assert len(row.hashes) < len(core.hash_set(found)) / 2


def test_a_short_excerpt_of_a_long_stored_article_finds_it() -> None:
    article = _doc("full", ARTICLE)
    _find(article)
    stored = {core.to_unsigned(h) for h in PassageSet.objects.get(document=article).hashes}
    # An excerpt of 200 words around one of the stored passages, under another intro.
    pick = next(p for p in core.passages(ARTICLE) if p.hash in stored and 100 < p.start < 1100)
    excerpt = " ".join(WORDS[pick.start - 90 : pick.start + 110])
    intro = factories.article_text(5, words=40)
    teaser = _doc("teaser", intro + "\n\n" + excerpt, site="q.example.com")
    _find(teaser)
    pair = _pair(article, teaser)
    assert pair is not None and "passages" in pair.channel_names
    # The index found it through fewer stored passages than the channel's minimum;
    # the pair was nominated on the two texts' whole passage sets.
    shared_stored = stored & core.hash_set(core.passages(excerpt))
    assert 1 <= len(shared_stored) < 3 <= pair.shared_passages


def test_a_database_of_the_old_storage_keeps_it_until_rebuilt(settings) -> None:
    settings.PASSAGE_STORAGE = core.WHOLE.key
    article = _doc("full", ARTICLE)
    copy = _doc("copy", ARTICLE.replace(WORDS[30], "changed", 1), site="q.example.com")
    _find(article, copy)
    assert set(PassageSet.objects.values_list("method", flat=True)) == {
        passages.WHOLE_MIXED_METHOD_ID
    }
    # The new code's default reads the database as it is.
    settings.PASSAGE_STORAGE = ""
    assert passages.storage_in_use() == core.WHOLE
    assert passages.method_for(settings.ACTIVE_METHOD) == passages.WHOLE_MIXED_METHOD_ID
    hits = passages.query(
        passages=core.passages(ARTICLE, method=core.MIXED_METHOD),
        method=passages.WHOLE_MIXED_METHOD_ID,
    )
    assert {h.document_id for h in hits} == {article.pk, copy.pk}
    # The rebuild under the new storage writes its sets beside the old ones; from then
    # on the database is read under it.
    settings.PASSAGE_STORAGE = core.COARSE.key
    call_command("candidates", "--rebuild", stdout=io.StringIO())
    settings.PASSAGE_STORAGE = ""
    assert passages.storage_in_use() == core.COARSE
    assert PassageSet.objects.filter(method=passages.MIXED_METHOD_ID).count() == 2
    assert PassageSet.objects.filter(method=passages.WHOLE_MIXED_METHOD_ID).count() == 2
    out = io.StringIO()
    call_command("candidates", "--recall-check", stdout=out)
    assert "coarse-w150-whole24-v1" in out.getvalue()
    assert "passage recall: 1.000" in out.getvalue()
