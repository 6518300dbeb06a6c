"""The gold crawl through the real pipeline: every promise of every case's answer key
(`DemoCase.checks`, see demo/crawl.CHECK_KEYS) holds on what the pipeline
STORED — Document, Extraction, Fingerprint and CandidatePair rows — not on a fresh
computation. tests/demo/test_crawl.py checks the same promises without a database."""

import itertools

import pytest
from django.core.management import call_command

from demo import crawl as democrawl
from demo.crawl import CHECK_KEYS, DemoCase
from ingest import embedder
from ingest.core import embeddings
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.methods import DEFAULT_KEY, method_key, normalize_for, tokens_for
from ingest.core.normalize import has_cjk
from ingest.core.simhash import hamming
from ingest.models import BranchPrint, CandidatePair, Document, Extraction, Fingerprint, IndexEntry
from tests import factories

# The demo cases name fingerprint recipes; the stored methods are those recipes over the
# current extractor's text.
REFERENCE = method_key(democrawl.REFERENCE)
SHINGLE = method_key(democrawl.SHINGLE)

NUMBERS = ("numbers_a", "numbers_b")


@pytest.fixture(scope="module")
def gold(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        ids, cases, pages = factories.gold_crawl_ingest()
    yield ids, cases
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


def _print(doc: int, method: str, branch: str = "main") -> BranchPrint:
    row = Fingerprint.objects.get(document_id=doc, method__key=method)
    return row.main if branch == "main" else row.full


def _distance(x: int, y: int, method: str, branch: str = "main") -> int:
    a, b = _print(x, method, branch).value, _print(y, method, branch).value
    assert a is not None and b is not None, f"no {branch} fingerprint under {method}"
    return hamming(a, b)


def _extraction(doc: int) -> Extraction:
    return Extraction.objects.get(document_id=doc, extractor_version=EXTRACTOR_VERSION)


# The pipeline stores the pairs of the active method, the mixed-script default: on pages
# without CJK its fingerprints are the reference's (test below), so the promises the cases
# make of the reference's stored pairs are checked on its pairs.
STORED_AS = {REFERENCE: DEFAULT_KEY}


def _stored_pair(x: int, y: int, method: str) -> CandidatePair | None:
    a, b = sorted((x, y))
    key = STORED_AS.get(method, method)
    return CandidatePair.objects.filter(method__key=key, a_id=a, b_id=b).first()


@pytest.mark.django_db
def test_the_default_methods_stored_prints_are_the_references_on_pages_without_cjk(
    gold,
) -> None:
    ids, _ = gold
    compared = 0
    for doc in ids.values():
        for branch in ("main", "full"):
            rows = dict(
                Fingerprint.objects.filter(
                    document_id=doc, method__key__in=[REFERENCE, DEFAULT_KEY]
                ).values_list("method__key", "simhash" if branch == "main" else "full_simhash")
            )
            text = _extraction(doc).main_text if branch == "main" else _extraction(doc).full_text
            if len(rows) == 2 and not has_cjk(text):
                assert rows[REFERENCE] == rows[DEFAULT_KEY], (doc, branch)
                compared += 1
    assert compared > 50


def check_pair(case: DemoCase, x: int, y: int) -> list[str]:
    checks = case.checks
    method = method_key(str(checks.get("method", democrawl.REFERENCE)))
    broken: list[str] = []

    def expect(key: str, ok: bool, got: object) -> None:
        if not ok:
            broken.append(f"{case.case} {x}/{y}: {key}={checks[key]!r}, got {got!r}")

    dx, dy = Document.objects.get(pk=x), Document.objects.get(pk=y)
    if "same_raw_sha256" in checks:
        same = dx.raw_sha256 == dy.raw_sha256
        expect("same_raw_sha256", same == checks["same_raw_sha256"], same)
    if "exact_main_text" in checks:
        # The stored SHA-256 is of the method's normalized main text.
        same = _print(x, method).text_sha256 == _print(y, method).text_sha256
        expect("exact_main_text", same == checks["exact_main_text"], same)
    if {"main_distance_max", "main_distance_min"} & checks.keys():
        d = _distance(x, y, method)
        if "main_distance_max" in checks:
            expect("main_distance_max", d <= checks["main_distance_max"], d)  # type: ignore[operator]
        if "main_distance_min" in checks:
            expect("main_distance_min", d >= checks["main_distance_min"], d)  # type: ignore[operator]
        pair = _stored_pair(x, y, method)
        if pair is not None:
            expect("main_distance_max", pair.distance == d, ("stored pair", pair.distance))
    if {"full_distance_max", "full_distance_min"} & checks.keys():
        d = _distance(x, y, method, "full")
        if "full_distance_max" in checks:
            expect("full_distance_max", d <= checks["full_distance_max"], d)  # type: ignore[operator]
        if "full_distance_min" in checks:
            expect("full_distance_min", d >= checks["full_distance_min"], d)  # type: ignore[operator]
    if "numbers_differ" in checks:
        # The guard on the stored candidate pair is the promise (guards annotate, labels decide).
        pair = _stored_pair(x, y, method)
        got = None if pair is None else pair.numbers_differ
        expect("numbers_differ", got == checks["numbers_differ"], got)
    if "reorder_words_distance_zero" in checks:
        words, shingles = _distance(x, y, REFERENCE), _distance(x, y, SHINGLE)
        holds = words == 0 and shingles > 0
        key = "reorder_words_distance_zero"
        expect(key, holds == checks[key], (words, shingles))
    if "main_text_contained" in checks:
        texts = (normalize_for(method, _extraction(d).main_text) for d in (x, y))
        short, long = sorted(texts, key=len)
        contained = bool(short) and short in long
        expect("main_text_contained", contained == checks["main_text_contained"], contained)
    if {"passage_channel", "passage_containment_pct_min"} & checks.keys():
        pair = _stored_pair(x, y, method)
        if "passage_channel" in checks:
            listed = pair is not None and "passages" in pair.channel_names
            expect("passage_channel", listed == checks["passage_channel"], listed)
        if "passage_containment_pct_min" in checks:
            pct = None if pair is None else 100 * pair.passage_containment
            ok = pct is not None and pct >= checks["passage_containment_pct_min"]  # type: ignore[operator]
            expect("passage_containment_pct_min", ok, pct)
    return broken


def check_page(case: DemoCase, doc: int) -> list[str]:
    checks = case.checks
    method = method_key(str(checks.get("method", democrawl.REFERENCE)))
    extraction = _extraction(doc)
    broken = []
    if "extraction_status" in checks and extraction.status != checks["extraction_status"]:
        broken.append(f"{case.case} {doc}: extraction_status, got {extraction.status}")
    if "no_fingerprint" in checks:
        fp = _print(doc, method)
        indexed = IndexEntry.objects.filter(document_id=doc).exists()
        if (fp.status == Fingerprint.Status.INSUFFICIENT and not indexed) != checks[
            "no_fingerprint"
        ]:
            broken.append(f"{case.case} {doc}: no_fingerprint, got {fp.status}, indexed={indexed}")
    if "main_tokens_max" in checks:
        tokens = len(tokens_for(REFERENCE, normalize_for(REFERENCE, extraction.main_text)))
        if tokens > checks["main_tokens_max"]:  # type: ignore[operator]
            broken.append(f"{case.case} {doc}: main_tokens_max, got {tokens}")
    return broken


PAIR_KEYS = set(CHECK_KEYS) - {"no_fingerprint", "extraction_status", "main_tokens_max", "method"}


@pytest.mark.django_db
def test_every_case_keeps_its_promises_on_the_stored_results(gold) -> None:
    ids, cases = gold
    broken: list[str] = []
    for case in cases.values():
        docs = [ids[p] for p in case.pages]
        for doc in docs:
            broken += check_page(case, doc)
        if PAIR_KEYS & case.checks.keys():
            for x, y in itertools.combinations(docs, 2):
                broken += check_pair(case, x, y)
    assert broken == []


@pytest.mark.django_db
def test_empty_pages_get_no_fingerprint_and_never_pair(gold) -> None:
    ids, cases = gold
    for page in cases["empty_extraction"].pages:
        doc = ids[page]
        assert _extraction(doc).status == "empty"
        assert not Fingerprint.objects.filter(document_id=doc, simhash__isnull=False).exists()
        assert not IndexEntry.objects.filter(document_id=doc).exists()
        assert not CandidatePair.objects.filter(a_id=doc).exists()
        assert not CandidatePair.objects.filter(b_id=doc).exists()


@pytest.mark.django_db
def test_a_price_change_fires_the_guard_on_the_stored_pair(gold) -> None:
    ids, cases = gold
    x, y = (ids[p] for p in cases["price_change"].pages)
    pair = _stored_pair(x, y, REFERENCE)
    assert pair is not None and pair.numbers_differ
    details = pair.guard_details
    assert details is not None and details[NUMBERS[0]] != details[NUMBERS[1]]


@pytest.mark.django_db
def test_reordered_sentences_are_distance_zero_for_words_only(gold) -> None:
    ids, cases = gold
    x, y = (ids[p] for p in cases["sentence_order"].pages)
    assert _distance(x, y, REFERENCE) == 0
    assert _distance(x, y, SHINGLE) > 0
    pair = _stored_pair(x, y, REFERENCE)
    assert pair is not None and pair.distance == 0


@pytest.mark.django_db
def test_template_only_pages_are_far_apart_on_main_text_closer_on_full_page(gold) -> None:
    ids, cases = gold
    x, y = (ids[p] for p in cases["same_template"].pages)
    main = _distance(x, y, SHINGLE)
    full = _distance(x, y, SHINGLE, "full")
    assert main >= 16
    # The shared menus, footers and related blocks pull the full-page texts together.
    assert full < main, (main, full)
    assert _stored_pair(x, y, REFERENCE) is None or _stored_pair(x, y, REFERENCE).below_floor  # type: ignore[union-attr]


@pytest.mark.django_db
def test_partial_copies_are_stored_pairs_of_the_passage_channel_alone(gold) -> None:
    ids, cases = gold
    for name in ("excerpt", "intro_outro"):
        x, y = (ids[p] for p in cases[name].pages)
        pair = _stored_pair(x, y, REFERENCE)
        assert pair is not None, name
        assert "passages" in pair.channel_names, (name, pair.channel_names)
        assert not pair.below_floor, name
    x, y = (ids[p] for p in cases["excerpt"].pages)
    excerpt = _stored_pair(x, y, REFERENCE)
    assert excerpt is not None
    assert excerpt.channel_names == ["passages"]  # SimHash alone would miss it
    assert excerpt.distance > 3
    assert min(excerpt.a_in_b, excerpt.b_in_a) < 0.7  # directional: a part of the story


@pytest.mark.django_db
def test_cosmetic_cases_are_stored_pairs_at_distance_zero(gold) -> None:
    ids, cases = gold
    for name in ("verbatim_copy", "whitespace_only", "template_change", "refetch_timestamp"):
        x, y = (ids[p] for p in cases[name].pages)
        pair = _stored_pair(x, y, REFERENCE)
        assert pair is not None and pair.distance == 0, name


# --- rewritten copies: the semantic channel's cases --------------------------------

CASE_MODEL = "all-MiniLM-L6-v2"
SEMANTIC_CASES = ("rewritten_story", "same_topic_other_story")


@pytest.mark.django_db
def test_rewritten_copies_are_not_nominated_without_the_semantic_channel(gold) -> None:
    """With the channel off, neither SimHash nor shared passages pair a rewritten story
    with its original, nor other stories on its topic: no pair is stored."""
    ids, cases = gold
    for name in SEMANTIC_CASES:
        for x, y in itertools.combinations((ids[p] for p in cases[name].pages), 2):
            assert _stored_pair(x, y, REFERENCE) is None, name


@pytest.mark.semantic
@pytest.mark.django_db
def test_the_rewritten_story_reaches_the_shipped_threshold_and_other_stories_do_not(
    gold, semantic_on, settings
) -> None:
    """The stored main texts embedded as the channel embeds them: the rewrite's cosine
    is at or above SEMANTIC_THRESHOLDS["article"] (and its promise), the other stories'
    under it."""
    ids, cases = gold
    shipped = settings.SEMANTIC_THRESHOLDS["article"]
    seen: dict[str, list[float]] = {}
    for name in SEMANTIC_CASES:
        case = cases[name]
        docs = [ids[p] for p in case.pages]
        vectors = dict(
            zip(
                docs,
                embedder.embed_documents([_extraction(d).main_text for d in docs]),
                strict=True,
            )
        )
        seen[name] = [
            embeddings.cosine(vectors[x], vectors[y]) for x, y in itertools.combinations(docs, 2)
        ]
    rewritten, others = seen["rewritten_story"], seen["same_topic_other_story"]
    assert min(rewritten) >= shipped, (rewritten, shipped)
    assert max(others) < shipped, (others, shipped)
    if embedder.model_key() == CASE_MODEL:  # the cases' own figures are that model's
        assert min(rewritten) >= cases["rewritten_story"].checks["semantic_cosine_min"]
        assert max(others) <= cases["same_topic_other_story"].checks["semantic_cosine_max"]
