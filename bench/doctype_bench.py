"""Doc type inferred from the page (``ingest.core.doctype``) against the data's own labels.

Reads the development pages (``bench/page_data.py``: extraction-dev articles, wcxb-dev
page types, zh-vi-dev page kinds) and prints, per dataset, a confusion table (rows: the
dataset's label, columns: the inferred doc type), the accuracy where the label names a doc
type, the rules that decided, and milliseconds per page of the inference (parse included).

    .venv/bin/python bench/doctype_bench.py [--data DIR]
    .venv/bin/python bench/doctype_bench.py --wrong 20   # list some wrong pages

No Django, no database: only ``ingest.core``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

from page_data import DATA, pages  # type: ignore[import-not-found]

from ingest.core.doctype import DOC_TYPES, infer_doc_type_html


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="development data directory")
    parser.add_argument("--wrong", type=int, default=0, help="list this many wrong pages")
    args = parser.parse_args()

    table: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    rules: dict[str, Counter[str]] = defaultdict(Counter)
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: list[str] = []
    ms: list[float] = []
    for page in pages(args.data):
        if not page.is_content:
            continue
        start = time.perf_counter()
        guess = infer_doc_type_html(page.html)
        ms.append((time.perf_counter() - start) * 1000)
        table[page.dataset][page.label][guess.doc_type] += 1
        rules[page.dataset][guess.rule] += 1
        expected = page.expected
        if expected is None:
            continue
        total[page.dataset] += 1
        if guess.doc_type == expected:
            right[page.dataset] += 1
        else:
            wrong.append(
                f"{page.dataset} {page.id} {page.label} → {guess.doc_type} "
                f"({guess.describe()}) {page.url[:80]}"
            )
    for dataset, rows in table.items():
        print(f"\n{dataset}: label \\ inferred")
        print(f"{'':>14}" + "".join(f"{t:>9}" for t in DOC_TYPES) + f"{'n':>6}")
        for label, counts in sorted(rows.items()):
            n = sum(counts.values())
            print(f"{label:>14}" + "".join(f"{counts[t]:>9}" for t in DOC_TYPES) + f"{n:>6}")
        if total[dataset]:
            share = right[dataset] / total[dataset]
            print(f"accuracy {right[dataset]}/{total[dataset]} = {share:.3f}")
        print("rules: " + ", ".join(f"{r} {n}" for r, n in rules[dataset].most_common()))
    all_right, all_total = sum(right.values()), sum(total.values())
    print(f"\nall: accuracy {all_right}/{all_total} = {all_right / all_total:.3f}")
    # Where "other" is the truth for wcxb's documentation and service pages, the useful
    # figure is also whether the typed pages are typed: precision of each inferred type.
    for t in DOC_TYPES:
        said = sum(rows[lab][t] for rows in table.values() for lab in rows)
        good = sum(
            rows[lab][t]
            for rows in table.values()
            for lab in rows
            if (lab if lab not in ("collection", "list", "home") else "listing") == t
            or (t == "other" and lab in ("documentation", "service"))
        )
        if said:
            print(f"inferred {t}: {said} pages, {good} right (precision {good / said:.3f})")
    ms.sort()
    print(
        f"ms per page (parse + inference): median {statistics.median(ms):.2f}, "
        f"p95 {ms[int(len(ms) * 0.95)]:.2f}, n={len(ms)}"
    )
    for line in wrong[: args.wrong]:
        print(line)


if __name__ == "__main__":
    main()
