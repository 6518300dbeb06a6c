"""Main-text extraction on pages that are not articles (forums, listings, collections,
products, documentation, service pages): the product's extractor versions beside plain
trafilatura, with WCXB's own metric.

Data: ``wcxb-dev`` (``../shared/data/wcxb-dev``, see its README): 647 pages of the dev
split of the Web Content Extraction Benchmark with reviewed ground truth
(``main_content``). Metric (WCXB's): per page, the bag of lower-cased ``\\w+`` words of
the ground truth and of the prediction, precision and recall of their multiset
intersection, F1; averaged over the pages of a page type (a page with an empty
prediction scores 0).

Compared, on the same raw bytes:

- plain trafilatura: ``trafilatura.extract(body)`` with the installed version's
  defaults (comments kept, tables kept, not ``fast``);
- the product: ``decode_html`` then ``extract`` under each extractor version
  (``ingest.core.extract.EXTRACTORS``; the fast-mode one only with ``--variants``),
  whose main text depends on the page's inferred doc type from
  ``trafilatura-2-doctype-v3`` on.

``--variants`` adds trafilatura option sets (the product's decoding) to see what each
option does per page type.

    .venv/bin/python bench/page_types_bench.py [--data DIR] [--limit N] [--variants]
        [--json OUT] [--part I/N]
    .venv/bin/python bench/page_types_bench.py --merge OUT1 OUT2 ...   # parts together

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
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trafilatura

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Path(os.environ.get("BENCH_PROJECT_ROOT") or ROOT).resolve()
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

from ingest.core.encoding import decode_html  # noqa: E402
from ingest.core.extract import EXTRACTORS, extract  # noqa: E402
from ingest.core.methods import EXTRACTOR_V1  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "wcxb-dev"
_WORD_RE = re.compile(r"\w+")
MIN_PAGES = 30  # page types with fewer pages are reported, not judged


def word_f1(gold: str, pred: str) -> float:
    """WCXB's page score: F1 of the bags of lower-cased words."""
    g = Counter(_WORD_RE.findall(gold.lower()))
    p = Counter(_WORD_RE.findall(pred.lower()))
    tp = sum((g & p).values())
    if not tp:
        return 1.0 if not g and not p else 0.0
    precision, recall = tp / sum(p.values()), tp / sum(g.values())
    return 2 * precision * recall / (precision + recall)


def load(data: Path, limit: int | None, part: str = "1/1") -> list[dict[str, object]]:
    """The pages (the first ``limit``), every n-th from the i-th for ``part`` "i/n"."""
    i, n = (int(x) for x in part.split("/"))
    with open(data / "manifest.jsonl") as f:
        rows = [json.loads(line) for line in f][:limit][i - 1 :: n]
    for row in rows:
        row["body"] = gzip.decompress((data / str(row["file"])).read_bytes())
    return rows


def _product(version: str) -> Callable[[dict[str, object]], tuple[str, str]]:
    def run(row: dict[str, object]) -> tuple[str, str]:
        text = decode_html(row["body"], content_type=None).text  # type: ignore[arg-type]
        result = extract(text, url=str(row.get("url") or ""), version=version)
        return result.main_text, result.doc_type.doc_type

    return run


def _plain(row: dict[str, object]) -> tuple[str, str]:
    return trafilatura.extract(row["body"]) or "", ""  # type: ignore[arg-type]


def _options(**options: object) -> Callable[[dict[str, object]], tuple[str, str]]:
    def run(row: dict[str, object]) -> tuple[str, str]:
        text = decode_html(row["body"], content_type=None).text  # type: ignore[arg-type]
        return trafilatura.extract(text, url=str(row.get("url") or "") or None, **options) or "", ""

    return run


def variants(extra: bool) -> dict[str, Callable[[dict[str, object]], tuple[str, str]]]:
    out: dict[str, Callable[[dict[str, object]], tuple[str, str]]] = {
        f"plain trafilatura {trafilatura.__version__}": _plain
    }
    # The fast-mode extractor (v1) only with --variants: it is not what pages get.
    for version in sorted(EXTRACTORS - ({EXTRACTOR_V1} if not extra else set())):
        out[f"product {version}"] = _product(version)
    if extra:
        base = {"include_tables": True, "deduplicate": False, "prune_xpath": "//nav[not(.//p)]"}
        out["comments"] = _options(include_comments=True, **base)
        out["comments + favor_recall"] = _options(include_comments=True, favor_recall=True, **base)
        out["no comments + favor_recall"] = _options(
            include_comments=False, favor_recall=True, **base
        )
        out["comments + favor_precision"] = _options(
            include_comments=True, favor_precision=True, **base
        )
    return out


def run(rows: list[dict[str, object]], extra: bool) -> dict[str, object]:
    runs = variants(extra)
    scores: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in runs}
    inferred: dict[str, Counter[str]] = defaultdict(Counter)
    by_inferred: dict[str, dict[tuple[str, str], list[float]]] = {
        name: defaultdict(list) for name in runs
    }
    ms: dict[str, list[float]] = defaultdict(list)
    doc_types: dict[str, str] = {}
    for i, row in enumerate(rows):
        if i % 50 == 0:
            print(f"  {i}/{len(rows)} pages", file=sys.stderr, flush=True)
        gold = str(row["main_content"])
        kind = str(row["page_type"])
        for name, fn in runs.items():
            t0 = time.perf_counter()
            try:
                text, doc_type = fn(row)
            except Exception as exc:  # a variant failing on a page scores zero there
                print(f"  {name} failed on {row['id']}: {exc!r}", file=sys.stderr)
                text, doc_type = "", ""
            ms[name].append((time.perf_counter() - t0) * 1000)
            if doc_type:
                doc_types[str(row["id"])] = doc_type
            scores[name][kind].append(word_f1(gold, text))
        doc_type = doc_types.get(str(row["id"]), "")
        inferred[kind][doc_type] += 1
        for name in runs:
            by_inferred[name][(kind, doc_type)].append(scores[name][kind][-1])
    kinds = sorted({str(r["page_type"]) for r in rows})
    return summary(scores, ms, inferred, by_inferred, kinds, len(rows))


def summary(
    scores: dict[str, dict[str, list[float]]],
    ms: dict[str, list[float]],
    inferred: dict[str, Counter[str]],
    by_inferred: dict[str, dict[tuple[str, str], list[float]]],
    kinds: list[str],
    pages: int,
) -> dict[str, object]:
    runs = list(scores)
    return {
        "raw": {
            "scores": scores,
            "ms": ms,
            "inferred": inferred,
            "by_inferred": {
                name: {f"{k}\t{t}": v for (k, t), v in d.items()} for name, d in by_inferred.items()
            },
        },
        "pages": pages,
        "trafilatura": trafilatura.__version__,
        "counts": {k: len(scores[next(iter(runs))][k]) for k in kinds},
        "word_f1": {
            name: {k: round(statistics.mean(v[k]), 4) for k in kinds if v[k]}
            for name, v in scores.items()
        },
        "word_f1_all": {
            name: round(statistics.mean([s for k in kinds for s in v[k]]), 4)
            for name, v in scores.items()
        },
        "inferred_doc_types": {k: dict(c) for k, c in inferred.items()},
        "word_f1_by_inferred": {
            name: {
                f"{k}/{t or '-'}": [len(s), round(statistics.mean(s), 4)] for (k, t), s in v.items()
            }
            for name, v in by_inferred.items()
        },
        "ms_median": {name: round(statistics.median(v), 1) for name, v in ms.items()},
    }


def merge(parts: list[dict[str, Any]]) -> dict[str, object]:
    """One summary of the parts' raw scores."""
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    ms: dict[str, list[float]] = defaultdict(list)
    inferred: dict[str, Counter[str]] = defaultdict(Counter)
    by_inferred: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for part in parts:
        raw = part["raw"]
        for name, d in raw["scores"].items():
            for k, v in d.items():
                scores[name][k].extend(v)
        for name, v in raw["ms"].items():
            ms[name].extend(v)
        for k, c in raw["inferred"].items():
            inferred[k].update(c)
        for name, d in raw["by_inferred"].items():
            for key, v in d.items():
                kind, doc_type = key.split("\t")
                by_inferred[name][(kind, doc_type)].extend(v)
    kinds = sorted({k for d in scores.values() for k in d})
    pages = sum(int(p["pages"]) for p in parts)
    return summary(scores, ms, inferred, by_inferred, kinds, pages)


def report(out: dict[str, object]) -> None:
    counts: dict[str, int] = out["counts"]  # type: ignore[assignment]
    f1: dict[str, dict[str, float]] = out["word_f1"]  # type: ignore[assignment]
    kinds = list(counts)
    print(f"| extractor | {' | '.join(f'{k} ({counts[k]})' for k in kinds)} | all | ms median |")
    print(f"| --- |{' --- |' * (len(kinds) + 2)}")
    for name, row in f1.items():
        cells = " | ".join(f"{row[k]:.3f}" for k in kinds)
        print(f"| {name} | {cells} | {out['word_f1_all'][name]:.3f} | {out['ms_median'][name]} |")  # type: ignore[index]
    plain = next(iter(f1))
    for name, row in f1.items():
        if name.startswith("product"):
            behind = [k for k in kinds if counts[k] >= MIN_PAGES and row[k] < f1[plain][k]]
            print(
                f"{name}: below plain trafilatura on {behind or 'no page type'}"
                f" (page types of {MIN_PAGES} pages or more)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--variants", action="store_true", help="trafilatura option sets too")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--part", default="1/1", help="i/n: every n-th page from the i-th (runs side by side)"
    )
    parser.add_argument(
        "--merge", type=Path, nargs="+", help="report the --json files of the parts together"
    )
    args = parser.parse_args()
    if args.merge:
        report(merge([json.loads(p.read_text()) for p in args.merge]))
        return
    if not (args.data / "manifest.jsonl").exists():
        sys.exit(f"no wcxb-dev data at {args.data}")
    out = run(load(args.data, args.limit, args.part), args.variants)
    report(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
