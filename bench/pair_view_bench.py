"""Pair view server time on two ~300 KB pages (target: 60 ms median on PostgreSQL).

    .venv/bin/python bench/pair_view_bench.py                      # SQLite (in memory)
    .venv/bin/python bench/pair_view_bench.py --script zh          # Chinese pages
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dedup \\
        .venv/bin/python bench/pair_view_bench.py --runs 50         # PostgreSQL (test_ db)

Builds a throw-away test database, stores two near-duplicate pages of about 300 KB of
HTML each (their extracted texts about 250 KB), and times the Django test client's GET
of the pair view (the default main-text diff) as a first view (nothing derived from the
two extractions kept yet) and as a view again (what the page derives from the texts
is kept by extraction, reviews.pair.passage_panel), of each toggle, and of the passage panel
the page fetches once shown (reviews:pair-panel, first and again; a tree without that view
has no such rows), then the main-text word diff alone (cold) and its share of the pair
view. Prints wall and CPU (this process's) median and p95 in milliseconds with the machine
noted. A script, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")  # settings refuse none with DEBUG off


def _chinese_pages(target_bytes: int) -> tuple[str, str, str, str]:
    from tests import factories
    from tests.zh_text import chinese_article_text

    text = chinese_article_text(31, chars=target_bytes // 3)
    html = factories.article_html("大页面", text).replace("</p>", "</p>\n")
    # B: a character changed and a price added in every eighth paragraph.
    parts = text.split("\n\n")
    for i in range(0, len(parts), max(len(parts) // 8, 1)):
        k = len(parts[i]) // 2
        swap = "乙" if parts[i][k] != "乙" else "甲"
        parts[i] = parts[i][:k] + swap + parts[i][k + 1 :] + "现价14.99元。"
    text_b = "\n\n".join(parts)
    html_b = factories.article_html("大页面", text_b).replace("</p>", "</p>\n")
    return text, html, text_b, html_b


def _pages(target_bytes: int) -> tuple[str, str, str, str]:
    from tests import factories

    words = 1000
    while True:
        text = factories.article_text(31, words=words)
        html = factories.article_html("Big page", text).replace("</p>", "</p>\n")
        if len(html.encode()) >= target_bytes:
            break
        words = int(words * target_bytes / max(len(html.encode()), 1)) + 100
    # B: the same page with a few edits spread through it (a price, a sentence, a word).
    parts = text.split("\n\n")
    for i in range(0, len(parts), max(len(parts) // 8, 1)):
        parts[i] = parts[i].replace("river", "stream", 1) + " Now 14.99 EUR."
    text_b = "\n\n".join(parts)
    html_b = factories.article_html("Big page", text_b).replace("</p>", "</p>\n")
    return text, html, text_b, html_b


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def _row(
    name: str,
    client: object,
    url: str,
    query: dict[str, str],
    headers: dict[str, str],
    runs: int,
    before: object = None,
) -> float:
    """Time `runs` GETs after 2 warm-up ones (`before()` ahead of each); print the wall
    and CPU (this process's, the database server's left out) median and p95; return the
    wall median."""
    times: list[float] = []
    cpu: list[float] = []
    size = 0
    for i in range(runs + 2):
        if callable(before):
            before()
        t0, c0 = time.perf_counter(), time.process_time()
        r = client.get(url, query, headers=headers)  # type: ignore[attr-defined]
        elapsed = (time.perf_counter() - t0) * 1000
        assert r.status_code == 200, r.status_code
        size = len(r.content)
        if i >= 2:  # warm-up
            times.append(elapsed)
            cpu.append((time.process_time() - c0) * 1000)
    print(
        f"  {name:<32} median {statistics.median(times):7.1f} ms   p95 {_p95(times):7.1f} ms"
        f"   ({size / 1000:.0f} KB response)   CPU median {statistics.median(cpu):7.1f} ms"
        f"   CPU p95 {_p95(cpu):7.1f} ms"
    )
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--size", type=int, default=300_000, help="bytes of HTML per page")
    parser.add_argument(
        "--script", choices=("en", "zh"), default="en", help="English or Chinese pages"
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import NoReverseMatch, reverse

    from ingest.models import CandidatePair, DocumentBody
    from ingest.services import methods_ensure
    from tests import factories

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver", *settings.ALLOWED_HOSTS]
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        methods_ensure()
        build = _chinese_pages if args.script == "zh" else _pages
        text_a, html_a, text_b, html_b = build(args.size)
        docs = []
        for i, (text, html) in enumerate(((text_a, html_a), (text_b, html_b))):
            doc = factories.indexed_document(
                url=f"https://big.example.com/{i}", text=text, simhash=0x0F0F << i
            )
            DocumentBody.objects.create(document=doc, data=DocumentBody.pack(html.encode()))
            docs.append(doc)
        a, b = docs
        pair = CandidatePair.objects.create(
            method=a.fingerprints.first().method,
            a=a,
            b=b,
            doc_type="article",
            distance=2,
            full_distance=2,
            xor=0x0F0F ^ (0x0F0F << 1),
            band=0,
            exact=False,
            ratio=99.0,
            token_set_ratio=99.0,
            length_ratio=1.0,
            containment=0.99,
            numbers_differ=True,
            ids_differ=False,
            title_differs=False,
            guard_details={"numbers_a": [], "numbers_b": ["14.99"], "ids_a": [], "ids_b": []},
            below_floor=False,
        )
        user = factories.user_create(username="bench", role="editor")
        client = Client()
        client.force_login(user)
        url = f"/review/pairs/{pair.id}/"

        print(
            f"pair view bench · {connection.vendor} · {platform.python_implementation()} "
            f"{platform.python_version()} · {platform.machine()} · {os.cpu_count()} CPUs · "
            f"{platform.node()}"
        )
        print(
            f"pages: {len(html_a.encode()) / 1000:.0f} KB and {len(html_b.encode()) / 1000:.0f}"
            f" KB of HTML; main texts {len(text_a) / 1000:.0f} KB and "
            f"{len(text_b) / 1000:.0f} KB ({len(text_a.split())} words); diff cap "
            f"{settings.REVIEW_DIFF_MAX_WORDS} words, {settings.REVIEW_SOURCE_MAX_LINES} lines"
        )
        views = [
            ("pair view, again", {}, {}),
            ("toggle: full-page text diff", {"view": "full"}, {"HX-Target": "diff-panel"}),
            ("toggle: HTML source diff", {"view": "html"}, {"HX-Target": "diff-panel"}),
            ("toggle: source frames", {"view": "source"}, {"HX-Target": "diff-panel"}),
        ]
        from ingest.core import passages as passages_core
        from reviews.pair import passage_panel

        # A pair's first view: nothing derived from its extractions is kept yet.
        def clear() -> None:
            passage_panel.cache_clear()
            passages_core.cache_clear()

        _row("pair view, first view", client, url, {}, {}, args.runs, before=clear)
        medians = {}
        for name, query, headers in views:
            if headers:
                headers = {"HX-Request": "true", **headers}
            medians[name] = _row(name, client, url, query, headers, args.runs)
        # The passage panel, fetched by the page once shown (reviews:pair-panel; a tree
        # without it builds the panel with the page).
        try:
            panel_url = reverse("reviews:pair-panel", args=[pair.id, "passages"])
        except NoReverseMatch:
            panel_url = None
        if panel_url is not None:
            htmx = {"HX-Request": "true"}
            _row("passage panel, first", client, panel_url, {}, htmx, args.runs, before=clear)
            _row("passage panel, again", client, panel_url, {}, htmx, args.runs)
        # The main-text word diff alone, and its share of the pair view.
        from reviews.pair import pair_reads, text_diffs

        pair_view = pair_reads.pair_view(pair=pair, user=user)
        times = []
        for i in range(args.runs + 2):
            passage_panel.cache_clear()
            t0 = time.perf_counter()
            text_diffs.pair_text_diff(view=pair_view, branch="main")
            if i >= 2:
                times.append((time.perf_counter() - t0) * 1000)
        diff_median = statistics.median(times)
        share = diff_median / medians["pair view, again"]
        print(
            f"  {'main-text word diff alone (cold)':<32} median {diff_median:7.1f} ms"
            f"   ({share:.0%})"
        )
        print("target: pair view, first view: CPU median <= 60 ms (PostgreSQL, English)")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
