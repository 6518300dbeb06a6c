"""The demo crawl: deterministic, well-formed, and every promise in its answer key holds.

The `checks` are re-computed here with the extractor settings and fingerprint methods
the answer key names; this is the real test of the promises (no database)."""

import io
import itertools
import json
import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest
import trafilatura
from hypothesis import given
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from demo.crawl import (
    CHECK_KEYS,
    EXTRACTION_EXPECTATIONS,
    LABELS,
    REFERENCE,
    SHINGLE,
    DemoCase,
    DemoPage,
    build_demo_crawl,
    cp1258_form,
    expectations,
    expectations_path,
    page_html,
    write_jsonl,
    write_warc,
)
from ingest import embedder
from ingest.core import embeddings, passages
from ingest.core.methods import fingerprint_text, normalize_for, tokens_for
from ingest.core.readers import DOC_TYPES, RawRecord, record_from_json
from ingest.core.simhash import hamming

# Seed 7 is the shipped demo; the others show the promises are not luck of one seed.
SEEDS = (7, 1, 2024)
REQUIRED_CASES = {
    "verbatim_copy",
    "whitespace_only",
    "template_change",
    "price_change",
    "sentence_order",
    "syndication",
    "teaser",
    "short_texts",
    "empty_extraction",
    "blocked_pages",
    "same_template",
    "unicode_nfc_nfd",
    "fullwidth_halfwidth",
    "refetch_timestamp",
    "rewritten_story",
    "same_topic_other_story",
}
# Promises on the embeddings' cosine: checked by the test that loads the model.
SEMANTIC_KEYS = ("semantic_cosine_min", "semantic_cosine_max")
CASE_MODEL = "all-MiniLM-L6-v2"  # the model the cases' semantic figures were measured with
NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


@cache
def crawl(seed: int) -> tuple[list[DemoPage], list[DemoCase]]:
    return build_demo_crawl(seed)


@cache
def warc_bytes(seed: int) -> bytes:
    out = io.BytesIO()
    write_warc(crawl(seed)[0], out, seed=seed)
    return out.getvalue()


def pages_by_id(seed: int) -> dict[str, DemoPage]:
    return {p.id: p for p in crawl(seed)[0]}


@cache
def main_text(seed: int, page_id: str) -> str:
    html = page_html(pages_by_id(seed)[page_id])
    extracted = trafilatura.extract(
        html, fast=True, include_comments=False, include_tables=True, deduplicate=False
    )
    return extracted or ""


@cache
def full_text(seed: int, page_id: str) -> str:
    return trafilatura.html2txt(page_html(pages_by_id(seed)[page_id]), clean=False)


def number(value: object) -> int:
    assert isinstance(value, int) and not isinstance(value, bool), value
    return value


def simhash(method: str, text: str) -> int:
    result = fingerprint_text(method, text)
    assert result.simhash is not None, f"no fingerprint for {text[:60]!r}"
    return result.simhash


def main_tokens(seed: int, page_id: str) -> int:
    return len(tokens_for(REFERENCE, normalize_for(REFERENCE, main_text(seed, page_id))))


def check_pair(seed: int, case: DemoCase, a: str, b: str) -> list[str]:
    """Every pair promise of `case` for pages a and b; returns the broken ones."""
    checks = case.checks
    method = str(checks.get("method", REFERENCE))
    pages = pages_by_id(seed)
    ma, mb = main_text(seed, a), main_text(seed, b)
    broken = []

    def expect(key: str, ok: bool, got: object) -> None:
        if not ok:
            broken.append(f"{case.case} {a}/{b}: {key}={checks[key]!r}, got {got!r}")

    if "same_raw_sha256" in checks:
        same = pages[a].body == pages[b].body
        expect("same_raw_sha256", same == checks["same_raw_sha256"], same)
    if "exact_main_text" in checks:
        same = normalize_for(method, ma) == normalize_for(method, mb)
        expect("exact_main_text", same == checks["exact_main_text"], same)
    if {"main_distance_max", "main_distance_min"} & checks.keys():
        d = hamming(simhash(method, ma), simhash(method, mb))
        if "main_distance_max" in checks:
            expect("main_distance_max", d <= number(checks["main_distance_max"]), d)
        if "main_distance_min" in checks:
            expect("main_distance_min", d >= number(checks["main_distance_min"]), d)
    if {"full_distance_max", "full_distance_min"} & checks.keys():
        fa, fb = full_text(seed, a), full_text(seed, b)
        d = hamming(simhash(method, fa), simhash(method, fb))
        if "full_distance_max" in checks:
            expect("full_distance_max", d <= number(checks["full_distance_max"]), d)
        if "full_distance_min" in checks:
            expect("full_distance_min", d >= number(checks["full_distance_min"]), d)
    if "numbers_differ" in checks:
        differ = sorted(NUMBER_RE.findall(ma)) != sorted(NUMBER_RE.findall(mb))
        expect("numbers_differ", differ == checks["numbers_differ"], differ)
    if "reorder_words_distance_zero" in checks:
        words = hamming(simhash(REFERENCE, ma), simhash(REFERENCE, mb))
        shingles = hamming(simhash(SHINGLE, ma), simhash(SHINGLE, mb))
        holds = words == 0 and shingles > 0
        expect(
            "reorder_words_distance_zero",
            holds == checks["reorder_words_distance_zero"],
            (words, shingles),
        )
    if "main_text_contained" in checks:
        short, long = sorted((normalize_for(method, ma), normalize_for(method, mb)), key=len)
        contained = bool(short) and short in long
        expect("main_text_contained", contained == checks["main_text_contained"], contained)
    if {"passage_channel", "passage_containment_pct_min"} & checks.keys():
        ov = passages.overlap(passages.passages(ma), passages.passages(mb))
        if "passage_containment_pct_min" in checks:
            got = 100 * ov.containment
            want = number(checks["passage_containment_pct_min"])
            expect("passage_containment_pct_min", got >= want, got)
        if "passage_channel" in checks:
            # Without a database there are no template passages: the channel's rule alone.
            nominated = passages.nominates(ov, containment_min=0.5, shared_min=3)
            expect("passage_channel", nominated == checks["passage_channel"], nominated)
    return broken


def check_page(seed: int, case: DemoCase, page_id: str) -> list[str]:
    checks = case.checks
    page = pages_by_id(seed)[page_id]
    text = main_text(seed, page_id)
    tokens = main_tokens(seed, page_id)
    broken = []
    if "no_fingerprint" in checks:
        fp_status = fingerprint_text(str(checks.get("method", REFERENCE)), text).status
        if (fp_status == "insufficient_features") != checks["no_fingerprint"]:
            broken.append(f"{case.case} {page_id}: no_fingerprint, got {fp_status}")
    if "main_tokens_max" in checks and tokens > number(checks["main_tokens_max"]):
        broken.append(f"{case.case} {page_id}: main_tokens_max, got {tokens}")
    if "extraction_status" in checks:
        status = checks["extraction_status"]
        evidence = {
            "empty": tokens == 0,
            "too_short": 0 < tokens < 8,  # below settings.EXTRACTION_MIN_TOKENS's default
            "blocked": page.http_status in (401, 403, 429) or b'type="password"' in page.body,
            "ok": tokens >= 8,
        }[str(status)]
        if page.expect_extraction != status or not evidence:
            broken.append(f"{case.case} {page_id}: extraction_status {status}, {tokens} tokens")
    return broken


# --- determinism and shape -----------------------------------------------------------


def test_same_seed_gives_byte_identical_warc_jsonl_and_expectations() -> None:
    again_pages, again_cases = build_demo_crawl(7)
    out = io.BytesIO()
    write_warc(again_pages, out, seed=7)
    assert out.getvalue() == warc_bytes(7)

    def jsonl(pages: list[DemoPage]) -> str:
        buf = io.StringIO()
        write_jsonl(pages, buf)
        return buf.getvalue()

    assert jsonl(again_pages) == jsonl(crawl(7)[0])
    assert json.dumps(expectations(again_pages, again_cases, 7)) == json.dumps(
        expectations(*crawl(7), 7)
    )


def test_another_seed_gives_another_crawl() -> None:
    assert warc_bytes(1) != warc_bytes(7)


@pytest.mark.parametrize("seed", SEEDS)
def test_pages_are_well_formed(seed: int) -> None:
    pages, _ = crawl(seed)
    assert 60 <= len(pages) <= 120
    assert len({p.id for p in pages}) == len(pages)
    assert len({(p.url, p.fetched_at) for p in pages}) == len(pages)
    assert {p.site for p in pages} >= {
        "news.example.com",
        "shop.example.com",
        "tintuc.example.vn",
        "xinwen.example.cn",
        "wire.example.org",
        "talk.example.net",
    }
    for page in pages:
        assert page.doc_type in DOC_TYPES
        assert page.expect_extraction in EXTRACTION_EXPECTATIONS
        assert page.fetched_at.year == 2026 and page.fetched_at.tzinfo is not None
        headers = dict(page.headers)
        assert headers["Content-Type"].startswith("text/html; charset=")
        assert int(headers["Content-Length"]) == len(page.body)
        assert "Date" in headers
        page_html(page)  # decodes with its declared encoding


@pytest.mark.parametrize("seed", SEEDS)
def test_every_case_is_present_and_names_existing_pages(seed: int) -> None:
    pages, cases = crawl(seed)
    ids = {p.id for p in pages}
    assert {c.case for c in cases} >= REQUIRED_CASES
    assert len({c.case for c in cases}) == len(cases)
    for case in cases:
        assert len(case.pages) >= 2, case.case
        assert set(case.pages) <= ids, case.case
        assert case.expected_label in LABELS
        assert case.reason and case.title
        assert set(case.checks) <= set(CHECK_KEYS), case.case


def test_english_articles_are_long_enough_to_extract() -> None:
    english = [p for p in crawl(7)[0] if p.site in ("news.example.com", "wire.example.org")]
    for page in english:
        if page.doc_type == "article" and page.expect_extraction == "ok":
            assert main_tokens(7, page.id) >= 150, page.id


def test_blocked_case_has_a_login_wall_at_many_urls_and_403_and_429() -> None:
    pages = pages_by_id(7)
    case = next(c for c in crawl(7)[1] if c.case == "blocked_pages")
    blocked = [pages[i] for i in case.pages]
    logins = [p for p in blocked if p.http_status == 200]
    assert len({p.url for p in logins}) >= 6
    assert len({main_text(7, p.id) for p in logins}) == 1
    assert {403, 429} <= {p.http_status for p in blocked}


def test_refetch_and_price_change_are_the_same_url_fetched_later() -> None:
    pages = pages_by_id(7)
    for name in ("refetch_timestamp", "price_change"):
        case = next(c for c in crawl(7)[1] if c.case == name)
        first, later = (pages[i] for i in case.pages)
        assert first.url == later.url
        assert later.fetched_at > first.fetched_at


# --- encodings -----------------------------------------------------------------------


def test_gbk_pages_decode_as_gbk_and_not_as_utf8() -> None:
    gbk = [p for p in crawl(7)[0] if p.encoding == "gbk"]
    assert len(gbk) >= 5
    for page in gbk:
        assert dict(page.headers)["Content-Type"] == "text/html; charset=gbk"
        text = page.body.decode("gbk")
        assert '<meta charset="gbk">' in text
        with pytest.raises(UnicodeDecodeError):
            page.body.decode("utf-8")


def test_fullwidth_variant_differs_in_bytes_and_folds_under_nfkc() -> None:
    pages = pages_by_id(7)
    half, full = main_text(7, "cn-a1"), main_text(7, "cn-a1-fullwidth")
    assert "Ｈ" in full and "Ｈ" not in half
    assert unicodedata.normalize("NFKC", full) == unicodedata.normalize("NFKC", half)
    assert pages["cn-a1"].body != pages["cn-a1-fullwidth"].body


def test_cp1258_page_round_trips() -> None:
    page = pages_by_id(7)["vn-cp1258"]
    assert dict(page.headers)["Content-Type"] == "text/html; charset=windows-1258"
    text = page.body.decode("cp1258")
    assert text.encode("cp1258") == page.body
    assert '<meta charset="windows-1258">' in text
    with pytest.raises(UnicodeDecodeError):
        page.body.decode("utf-8")
    # Full Vietnamese after NFC, e.g. ư and a letter with two marks (ấ ầ ậ ế ệ ộ ớ ờ ợ…).
    nfc = unicodedata.normalize("NFC", text)
    assert "ư" in nfc and re.search("[ấầậếềệốồộớờợứừự]", nfc)


VIETNAMESE = "aăâbcdđeêghiklmnoôơpqrstuưvxyàáảãạằắẳẵặầấẩẫậèéẻẽẹềếểễệìíỉĩịòóỏõọồốổỗộờớởỡợ"
VIETNAMESE += "ùúủũụừứửữựỳýỷỹỵ ,."


@given(st.text(alphabet=VIETNAMESE + VIETNAMESE.upper()))
def test_cp1258_form_encodes_any_vietnamese_text_and_keeps_its_meaning(text: str) -> None:
    form = cp1258_form(text)
    assert form.encode("cp1258").decode("cp1258") == form
    assert unicodedata.normalize("NFC", form) == unicodedata.normalize("NFC", text)


def test_nfd_variant_is_decomposed() -> None:
    pages = pages_by_id(7)
    nfc, nfd = page_html(pages["vn-a1"]), page_html(pages["vn-a1-nfd"])
    assert nfc != nfd
    assert unicodedata.is_normalized("NFD", nfd)
    assert unicodedata.normalize("NFC", nfd) == nfc


# --- WARC and JSONL ------------------------------------------------------------------


def test_warc_reads_back_with_one_response_per_page() -> None:
    pages = crawl(7)[0]
    records = []
    for record in ArchiveIterator(io.BytesIO(warc_bytes(7))):
        body = record.content_stream().read()
        records.append((record.rec_type, record.rec_headers, record.http_headers, body))
    types = [r[0] for r in records]
    assert types[0] == "warcinfo"
    assert types.count("request") == 1 and types.count("revisit") == 1
    responses = [r for r in records if r[0] == "response"]
    assert len(responses) == len(pages)
    for page, (_, rec, http, body) in zip(pages, responses, strict=True):
        assert rec.get_header("WARC-Target-URI") == page.url
        assert rec.get_header("WARC-Date") == page.fetched_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert int(http.get_statuscode()) == page.http_status
        assert body == page.body
    ids = [r[1].get_header("WARC-Record-ID") for r in records]
    assert len(set(ids)) == len(ids)
    out = io.BytesIO()
    assert write_warc(pages, out, seed=7) == len(records)


def test_jsonl_lines_are_valid_records_for_the_reader() -> None:
    pages = crawl(7)[0]
    buf = io.StringIO()
    assert write_jsonl(pages, buf) == len(pages)
    lines = buf.getvalue().splitlines()
    assert len(lines) == len(pages)
    for n, (page, line) in enumerate(zip(pages, lines, strict=True), start=1):
        record = record_from_json(json.loads(line), n)
        assert isinstance(record, RawRecord), record
        assert record.url == page.url and record.http_status == page.http_status
        assert record.body.decode("utf-8") == page_html(page)


def test_expectations_are_json_and_match_the_pages() -> None:
    pages, cases = crawl(7)
    data = json.loads(json.dumps(expectations(pages, cases, 7)))
    assert data["seed"] == 7 and data["generator"] == "dedup-desk democrawl v1"
    assert [p["id"] for p in data["pages"]] == [p.id for p in pages]
    assert data["pages"][0].keys() >= {
        "id",
        "url",
        "site",
        "doc_type",
        "fetched_at",
        "encoding",
        "http_status",
        "expect_extraction",
    }
    assert {c["case"] for c in data["cases"]} >= REQUIRED_CASES


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("var/demo.warc.gz", "var/demo.expected.json"),
        ("demo.warc", "demo.expected.json"),
        ("demo.jsonl", "demo.expected.json"),
    ],
)
def test_expectations_path_sits_beside_the_crawl(out: str, expected: str) -> None:
    assert expectations_path(Path(out)) == Path(expected)


# --- the promises --------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_every_check_holds_when_recomputed(seed: int) -> None:
    broken: list[str] = []
    for case in crawl(seed)[1]:
        for a, b in itertools.combinations(case.pages, 2):
            broken += check_pair(seed, case, a, b)
        for page_id in case.pages:
            broken += check_page(seed, case, page_id)
    assert not broken, "\n".join(broken)


@pytest.mark.semantic
@pytest.mark.parametrize("seed", SEEDS)
def test_semantic_checks_hold_with_the_real_model(seed: int, semantic_on, settings) -> None:
    """The cosines of the extracted main texts, embedded as the channel embeds them: the
    rewritten story reaches the shipped article threshold, other stories on the same
    topic stay under it."""
    shipped = settings.SEMANTIC_THRESHOLDS["article"]
    broken: list[str] = []
    for case in crawl(seed)[1]:
        if not set(SEMANTIC_KEYS) & case.checks.keys():
            continue
        vectors = dict(
            zip(
                case.pages,
                embedder.embed_documents([main_text(seed, p) for p in case.pages]),
                strict=True,
            )
        )
        for a, b in itertools.combinations(case.pages, 2):
            cos = embeddings.cosine(vectors[a], vectors[b])
            low, high = (
                case.checks.get("semantic_cosine_min"),
                case.checks.get("semantic_cosine_max"),
            )
            if embedder.model_key() != CASE_MODEL:
                # The cases' own figures are that model's; any model's shipped threshold
                # must still take the rewrite and leave the other stories.
                low = -1.0 if low is not None else None
                high = 1.0 if high is not None else None
            if low is not None and not (cos >= low and cos >= shipped):  # type: ignore[operator]
                broken.append(f"{case.case} {a}/{b}: cosine {cos:.4f} under {low} or {shipped}")
            if high is not None and not (cos <= high and cos < shipped):  # type: ignore[operator]
                broken.append(f"{case.case} {a}/{b}: cosine {cos:.4f} over {high} or {shipped}")
    assert not broken, "\n".join(broken)


def test_pages_outside_the_short_empty_and_blocked_cases_extract_ok() -> None:
    for page in crawl(7)[0]:
        if page.expect_extraction == "ok":
            assert main_tokens(7, page.id) >= 8, page.id
