"""Main-text extraction and decoding measured on real pages.

Runs the product's own ``decode_html`` + ``extract`` on the raw bytes of the
extraction-dev pages (``../shared/data/extraction-dev/``, see its README) and prints,
per set: F1, precision and recall with the Article Extraction Benchmark's metric (word
4-gram shingles as multisets, sums over all pages), the same for plain
``trafilatura.extract`` with default options on the same bytes, the pages where the
product is worse than plain trafilatura by more than 0.2 F1 (with the reason), the pages
garbled by decoding (U+FFFD in more than 0.5% of the characters, or mojibake sequences)
against plain decoding by the declared charset, and milliseconds per page (median, p95).

    .venv/bin/python bench/extraction_bench.py
    .venv/bin/python bench/extraction_bench.py --variants     # the options compared
    .venv/bin/python bench/extraction_bench.py --versions     # every extractor version
    .venv/bin/python bench/extraction_bench.py --json out.json

No Django, no database: only ``ingest.core``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trafilatura

ROOT = Path(__file__).resolve().parent.parent
# The code under test: this checkout, or an export of a commit (bench.py --rev).
PROJECT = Path(os.environ.get("BENCH_PROJECT_ROOT") or ROOT).resolve()
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

from ingest.core.encoding import charset_codec, decode_html, meta_charset  # noqa: E402
from ingest.core.extract import (  # noqa: E402
    EXTRACTOR_VERSION,
    EXTRACTORS,
    extract,
    extractor_main_text,
)
from ingest.core.methods import EXTRACTOR_V2  # noqa: E402
from ingest.core.normalize import recent_clear  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "extraction-dev"
_TOKEN_RE = re.compile(r"\w+")
# Classic mojibake: UTF-8 sequences read as windows-1252 ("Ã©", "â€™", "ä¸Š"): a lead
# byte's character followed by characters of continuation bytes 0x80-0xBF.
_CONT = re.escape("".join(bytes([b]).decode("cp1252", "ignore") for b in range(0x80, 0xC0)))
_MOJIBAKE_RE = re.compile(f"[\u00c2-\u00df][{_CONT}]|[\u00e0-\u00ef][{_CONT}]{{2}}")


@dataclass
class Page:
    id: str
    set: str
    url: str
    body: bytes
    gold: str


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: tuple[int, int, int]) -> None:
        self.tp += other[0]
        self.fp += other[1]
        self.fn += other[2]

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    """The benchmark's shingles: ``\\w+`` tokens, n-grams (a shorter text is one shingle)."""
    tokens = _TOKEN_RE.findall(text or "")
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def match(gold: str, pred: str) -> tuple[int, int, int]:
    g, p = shingles(gold), shingles(pred)
    return sum((g & p).values()), sum((p - g).values()), sum((g - p).values())


def page_f1(gold: str, pred: str) -> float:
    s = Score()
    s.add(match(gold, pred))
    return s.f1


def garbled(text: str) -> bool:
    if not text:
        return False
    return text.count("\ufffd") > 0.005 * len(text) or len(_MOJIBAKE_RE.findall(text)) >= 3


def load(data: Path, limit: int | None) -> list[Page]:
    pages = []
    with open(data / "manifest.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            body = gzip.decompress((data / row["file"]).read_bytes())
            url = row["url"] or ""
            pages.append(Page(row["id"], row["set"], url, body, row["gold_text"]))
    return pages[:limit] if limit else pages


def plain_declared(body: bytes) -> str:
    """Plain decoding by the declared charset (utf-8 when none), bad bytes replaced."""
    codec = charset_codec(meta_charset(body)) or "utf-8"
    return body.decode(codec, errors="replace")


def product(page: Page) -> tuple[str, str, str]:
    decoded = decode_html(page.body, content_type=None)
    result = extract(decoded.text, url=page.url)
    return result.main_text, decoded.used, result.status


def plain(page: Page) -> str:
    return trafilatura.extract(page.body, url=page.url or None) or ""


@dataclass
class SetResult:
    product: Score = field(default_factory=Score)
    plain: Score = field(default_factory=Score)
    product_ms: list[float] = field(default_factory=list)
    plain_ms: list[float] = field(default_factory=list)
    worse: list[str] = field(default_factory=list)
    garbled_product: list[str] = field(default_factory=list)
    garbled_declared: list[str] = field(default_factory=list)


def _reason(page: Page, ours: str, theirs: str, used: str, status: str) -> str:
    if not ours:
        return f"product empty (status {status})"
    o, t = Score(), Score()
    o.add(match(page.gold, ours))
    t.add(match(page.gold, theirs))
    declared = charset_codec(meta_charset(page.body))
    if declared and used != declared:
        return f"decoded as {used}, page declares {declared}"
    if o.precision < t.precision - 0.2:
        return f"kept boilerplate (precision {o.precision:.2f} vs {t.precision:.2f})"
    return f"missed text (recall {o.recall:.2f} vs {t.recall:.2f})"


TIMINGS = 3  # timings of each page each way (the fastest counts)


def _as_new() -> None:
    """Forget what the last runs kept of a page's text (trafilatura's cleaned lines,
    the product's recent normalized texts), so that every timing sees it as new."""
    trafilatura.utils.line_processing.cache_clear()
    trafilatura.utils.trim.cache_clear()
    recent_clear()


def run_main(pages: list[Page]) -> dict[str, SetResult]:
    results: dict[str, SetResult] = {}
    for page in pages:
        r = results.setdefault(page.set, SetResult())
        # Each page is timed TIMINGS times each way, the two taking turns to go first,
        # each time as a new page (_as_new), and the fastest time of each counts: with
        # one timing each, product first, plain found the lines trafilatura had just
        # cleaned for the product in its caches and looked faster; and one timing of a
        # page moves with whatever else the machine does.
        product_ms: list[float] = []
        plain_ms: list[float] = []
        for turn in range(TIMINGS):
            for who in ("product", "plain") if turn % 2 == 0 else ("plain", "product"):
                _as_new()
                t0 = time.perf_counter()
                if who == "product":
                    ours, used, status = product(page)
                    product_ms.append((time.perf_counter() - t0) * 1000)
                else:
                    theirs = plain(page)
                    plain_ms.append((time.perf_counter() - t0) * 1000)
        r.product_ms.append(min(product_ms))
        r.plain_ms.append(min(plain_ms))
        r.product.add(match(page.gold, ours))
        r.plain.add(match(page.gold, theirs))
        f_ours, f_theirs = page_f1(page.gold, ours), page_f1(page.gold, theirs)
        if f_ours < f_theirs - 0.2:
            reason = _reason(page, ours, theirs, used, status)
            r.worse.append(f"{page.id} F1 {f_ours:.2f} vs {f_theirs:.2f}: {reason}")
        if garbled(ours):
            r.garbled_product.append(f"{page.id} ({used})")
        declared_text = extract(plain_declared(page.body), url=page.url).main_text
        if garbled(declared_text):
            r.garbled_declared.append(page.id)
    return results


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(results: dict[str, SetResult]) -> dict[str, object]:
    out: dict[str, object] = {"extractor": EXTRACTOR_VERSION}
    print(f"extractor {EXTRACTOR_VERSION}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'set':<12}{'who':<10}{'pages':>6}{'F1':>8}{'P':>8}{'R':>8}{'ms med':>9}{'ms p95':>9}")
    for name, r in sorted(results.items()):
        n = len(r.product_ms)
        for who, score, ms in (
            ("product", r.product, r.product_ms),
            ("plain", r.plain, r.plain_ms),
        ):
            print(
                f"{name:<12}{who:<10}{n:>6}{score.f1:>8.3f}{score.precision:>8.3f}"
                f"{score.recall:>8.3f}{statistics.median(ms):>9.1f}{_pct(ms, 0.95):>9.1f}"
            )
        ratio = statistics.median(r.product_ms) / statistics.median(r.plain_ms)
        # The two medians may come from different pages; the per-page ratio compares
        # each page with itself.
        per_page = statistics.median(
            p / q for p, q in zip(r.product_ms, r.plain_ms, strict=True) if q > 0
        )
        print(
            f"{name:<12}speed: product / plain median ms per page = {ratio:.2f}; "
            f"median of the per-page ratios = {per_page:.2f}"
        )
        print(
            f"{name:<12}garbled pages: product {len(r.garbled_product)}, "
            f"plain decoding by declared charset {len(r.garbled_declared)}"
        )
        for line in r.garbled_product:
            print(f"    garbled: {line}")
        print(f"{name:<12}pages where product F1 < plain F1 - 0.2: {len(r.worse)}")
        for line in r.worse:
            print(f"    {line}")
        out[name] = {
            "pages": n,
            "product": {
                "f1": r.product.f1,
                "precision": r.product.precision,
                "recall": r.product.recall,
            },
            "plain": {"f1": r.plain.f1, "precision": r.plain.precision, "recall": r.plain.recall},
            "product_ms_median": statistics.median(r.product_ms),
            "product_ms_p95": _pct(r.product_ms, 0.95),
            "plain_ms_median": statistics.median(r.plain_ms),
            "plain_ms_p95": _pct(r.plain_ms, 0.95),
            "speed_ratio": ratio,
            "speed_ratio_per_page_median": per_page,
            "garbled_product": len(r.garbled_product),
            "garbled_declared": len(r.garbled_declared),
            "worse": r.worse,
        }
    return out


# --- the options compared before choosing ------------------------------------------------


def _variants() -> dict[str, Callable[[Page], str]]:
    def traf(**options: object) -> Callable[[Page], str]:
        def run(page: Page) -> str:
            text = decode_html(page.body, content_type=None).text
            return trafilatura.extract(text, url=page.url or None, **options) or ""

        return run

    common = {"include_comments": False, "include_tables": True, "deduplicate": False}
    variants: dict[str, Callable[[Page], str]] = {
        "plain default (bytes)": plain,
        "fast + prune //nav (v1)": traf(fast=True, prune_xpath="//nav", **common),
        "fast": traf(fast=True, **common),
        "default + prune //nav": traf(prune_xpath="//nav", **common),
        "default": traf(**common),
        "product": lambda page: product(page)[0],
    }
    try:
        from resiliparse.parse.encoding import bytes_to_str, detect_encoding

        def resili(page: Page) -> str:
            text = bytes_to_str(page.body, detect_encoding(page.body))
            return extractor_main_text(text, page.url)

        variants["resiliparse decode + product extract"] = resili
    except ImportError:
        pass
    try:
        import rs_trafilatura

        def rs(page: Page) -> str:
            text = decode_html(page.body, content_type=None).text
            result = rs_trafilatura.extract(text, url=page.url or None)
            return getattr(result, "main_content", None) or getattr(result, "text", "") or ""

        variants["rs-trafilatura"] = rs
    except ImportError:
        pass
    return variants


def run_variants(pages: list[Page]) -> None:
    print(f"{'variant':<40}{'set':<12}{'F1':>7}{'P':>7}{'R':>7}{'<0.2':>6}{'ms med':>8}")
    for name, fn in _variants().items():
        by_set: dict[str, tuple[Score, list[float], list[int]]] = {}
        for page in pages:
            score, ms, bad = by_set.setdefault(page.set, (Score(), [], [0]))
            t0 = time.perf_counter()
            try:
                text = fn(page)
            except Exception as exc:  # a variant that fails on a page scores zero there
                print(f"  {name} failed on {page.id}: {exc!r}")
                text = ""
            ms.append((time.perf_counter() - t0) * 1000)
            m = match(page.gold, text)
            score.add(m)
            if page_f1(page.gold, text) < 0.2:
                bad[0] += 1
        for set_name, (score, ms, bad) in sorted(by_set.items()):
            print(
                f"{name:<40}{set_name:<12}{score.f1:>7.3f}{score.precision:>7.3f}"
                f"{score.recall:>7.3f}{bad[0]:>6}{statistics.median(ms):>8.1f}"
            )


def run_versions(pages: list[Page]) -> None:
    """F1 / P / R per set of every extractor version (no timings), and the pages where
    the current version's text differs from the previous one's."""
    versions = sorted(EXTRACTORS)
    scores: dict[tuple[str, str], Score] = {}
    changed: dict[str, list[str]] = {}
    for page in pages:
        text = decode_html(page.body, content_type=None).text
        outs = {v: extract(text, url=page.url, version=v).main_text for v in versions}
        for v, out in outs.items():
            scores.setdefault((v, page.set), Score()).add(match(page.gold, out))
        if outs[EXTRACTOR_VERSION] != outs[EXTRACTOR_V2]:
            changed.setdefault(page.set, []).append(
                f"{page.id} {page_f1(page.gold, outs[EXTRACTOR_V2]):.3f}"
                f" -> {page_f1(page.gold, outs[EXTRACTOR_VERSION]):.3f}"
            )
    print(f"{'version':<28}{'set':<12}{'F1':>7}{'P':>7}{'R':>7}")
    for (v, set_name), score in sorted(scores.items()):
        print(f"{v:<28}{set_name:<12}{score.f1:>7.3f}{score.precision:>7.3f}{score.recall:>7.3f}")
    for set_name, ids in sorted(changed.items()):
        print(f"{set_name}: {len(ids)} pages extracted differently by {EXTRACTOR_VERSION}")
        for line in ids:
            print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--variants", action="store_true", help="compare extractor options")
    parser.add_argument("--versions", action="store_true", help="every extractor version")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if not (args.data / "manifest.jsonl").exists():
        sys.exit(f"no extraction-dev data at {args.data}")
    pages = load(args.data, args.limit)
    if args.variants:
        run_variants(pages)
        return
    if args.versions:
        run_versions(pages)
        return
    out = report(run_main(pages))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
