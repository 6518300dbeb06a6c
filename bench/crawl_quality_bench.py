"""Crawl-quality statuses on real pages: how many real content pages are called blocked.

Runs the product's ``extract`` on every development page (``bench/page_data.py``:
extraction-dev articles, wcxb-dev forums/listings/products/docs/service pages, zh-vi-dev
articles and lists) and prints, per dataset and label, the extraction statuses, the
blocked pages with their reason (each one is a false "blocked": these pages are all
content), and how zh-vi-dev's client-rendered shells (no article in the HTML) come out.

    .venv/bin/python bench/crawl_quality_bench.py [--data DIR]

No Django, no database: only ``ingest.core``. About a minute per 1,000 pages on one core.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

from page_data import DATA, pages  # type: ignore[import-not-found]

from ingest.core.extract import extract


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="development data directory")
    args = parser.parse_args()
    statuses: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    false_blocked: list[str] = []
    shells: list[str] = []
    content = 0
    for page in pages(args.data):
        result = extract(page.html, url=page.url)
        statuses[(page.dataset, page.label)][result.status] += 1
        line = (
            f"{page.dataset} {page.id} {page.label}: {result.status} {result.quality} "
            f"{result.message[:100]}"
        )
        if page.is_content:
            content += 1
            if result.status == "blocked":
                false_blocked.append(line)
        else:
            shells.append(line)
    print(f"{'dataset':>15} {'label':>14}  statuses")
    for (dataset, label), counts in sorted(statuses.items()):
        counted = ", ".join(f"{s} {n}" for s, n in counts.most_common())
        print(f"{dataset:>15} {label:>14}  {counted}")
    print(f"\ncontent pages called blocked: {len(false_blocked)} of {content}")
    for line in false_blocked:
        print("  " + line)
    print(f"\nshells (not content, should be blocked or empty): {len(shells)}")
    for line in shells:
        print("  " + line)


if __name__ == "__main__":
    main()
