"""Calibration page: server time at 1,000 and 10,000 labels over 100,000 candidate pairs
on PostgreSQL (target: median under one second at 10,000 labels).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dedup_bench \\
        .venv/bin/python bench/calibration_page_bench.py \\
        [--pairs 100000] [--labels 1000,10000] [--runs 10] [--keep | --reuse] [--no-figures]

Builds a throw-away test database (test_<name>) with the queue bench's corpus (documents
with fingerprints, candidate pairs with random distances and doc types, groups), gives
half the pairs a cosine, stores the pre-label distributions (as the beat task does),
then for each label count adds labels by ten editors (some pairs labelled twice, a share
disagreeing, 30 % non-duplicate verdicts) and a calibration sample, runs the
calibration recompute (the beat task's work, timed once) and times the Django test
client's GET of the calibration page, unfiltered and filtered by doc type, at first render
(the cache emptied before each GET, as in a fresh process after a recompute) and cached,
then every section the page fetches when opened (the slowest of each kind). Prints the
median and p95 wall time, the median CPU time of the server's Python, the query count and
the HTML size, with the machine noted. A script, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")  # settings refuse none with DEBUG off
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _labels_add(upto: int, seed: int) -> None:
    """Add labels until there are ``upto``: three in four on a pair of their own, the
    rest a second editor's label on a pair already labelled."""
    from django.conf import settings

    from ingest.core.extract import EXTRACTOR_VERSION
    from ingest.models import CandidatePair
    from reviews.models import Label
    from reviews.queue.pair_states import pair_states_rebuild
    from tests import factories

    have = Label.objects.count()
    if have >= upto:
        return
    rng = random.Random(seed + upto)
    editors = []
    for i in range(10):
        from django.contrib.auth.models import User

        user = User.objects.filter(username=f"editor{i}").first()
        editors.append(user or factories.user_create(username=f"editor{i}", role="editor"))
    taken = set(Label.objects.values_list("pair_id", flat=True))
    free = [p for p in CandidatePair.objects.values_list("id", flat=True) if p not in taken]
    n = upto - have
    fresh = rng.sample(free, min(len(free), n * 3 // 4))
    seconds = rng.choices(sorted(taken | set(fresh)), k=n - len(fresh))
    # One current label per editor and pair of documents (the database's constraint):
    # a repeated draw, or a pair of documents an editor already labelled, is skipped.
    subject = {
        p: (min(a, b), max(a, b))
        for p, a, b in CandidatePair.objects.values_list("id", "a_id", "b_id")
    }
    seen = {
        (e, subject[p])
        for e, p in Label.objects.filter(superseded_by=None).values_list("editor_id", "pair_id")
    }
    labels = []
    for i, pair_id in enumerate(fresh + seconds):
        editor = editors[(i + (0 if i < len(fresh) else 5)) % 10]
        if (editor.pk, subject[pair_id]) in seen:
            continue
        seen.add((editor.pk, subject[pair_id]))
        verdict = rng.choice(["distinct", "near_duplicate", "revision", "unsure"])
        if rng.random() >= 0.3:
            verdict = "duplicate"
        labels.append(
            Label(
                pair_id=pair_id,
                editor=editor,
                verdict=verdict,
                reason_code="same_text",
                reason="bench",
                region="body",
                method_key=settings.ACTIVE_METHOD,
                extractor_version=EXTRACTOR_VERSION,
            )
        )
    Label.objects.bulk_create(labels, batch_size=5000)
    pair_states_rebuild()


def _time(
    client, url: str, query: dict[str, str], runs: int, *, first: bool = False, htmx: bool = False
):  # type: ignore[no-untyped-def]
    """Median and p95 wall time, median CPU time and the query count of ``runs`` GETs
    (after one warm-up). ``first``: the cache is emptied before each GET, so each one is
    the first render after a recompute in a fresh process."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, cpus = [], []
    queries = 0
    headers = {"HX-Request": "true"} if htmx else {}
    for i in range(runs + 1):
        if first:
            cache.clear()
        with CaptureQueriesContext(connection) as ctx:
            t0, c0 = time.perf_counter(), time.process_time()
            r = client.get(url, query, headers=headers)
            elapsed, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        assert r.status_code == 200, r.status_code
        queries = len(ctx.captured_queries)
        if i >= 1:  # warm-up
            times.append(elapsed)
            cpus.append(cpu)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    return statistics.median(times), p95, statistics.median(cpus), queries, len(r.content)


def _section_urls(html: str) -> list[str]:
    """The sections the page fetches when an auditor opens them (none on a page that
    renders everything at once)."""
    import html as html_lib
    import re

    return [
        html_lib.unescape(u) for u in re.findall(r'hx-get="([^"]*/calibration/section[^"]*)"', html)
    ]


def _report(name: str, figures) -> None:  # type: ignore[no-untyped-def]
    median, p95, cpu, queries, size = figures
    print(
        f"  {name:<34} median {median:8.1f} ms   p95 {p95:8.1f} ms   "
        f"cpu {cpu:8.1f} ms   {queries:3} queries   {size / 1024:6.0f} KB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--labels", default="1000,10000", help="label counts, ascending")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="leave test_<name> in place")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time against test_<name> as a previous --keep run left it (no fill)",
    )
    parser.add_argument(
        "--no-figures",
        action="store_true",
        help="time the page without stored figures (computed per request, as before)",
    )
    args = parser.parse_args()
    counts = sorted(int(x) for x in args.labels.split(","))

    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from queue_bench import _fill, bench_database_open  # the same directory

    from ingest.models import CandidatePair
    from reviews.calibration import prelabel, stored_figures, sweeps
    from reviews.models import CalibrationFigures, Label
    from tests import factories

    old_name = bench_database_open(reuse=args.reuse)
    try:
        t0 = time.perf_counter()
        if not args.reuse:
            _fill(args.pairs, 0, args.seed)
            with connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE ingest_candidatepair SET cosine = 0.5 + random() / 2 WHERE id % 2 = 0"
                )
            prelabel.prelabel_compute()
        print(
            f"calibration page bench · {connection.vendor} {connection.pg_version} · "
            f"{platform.python_implementation()} {platform.python_version()} · "
            f"{platform.machine()} · {os.cpu_count()} CPUs · load {os.getloadavg()[0]:.1f}"
        )
        filled = time.perf_counter() - t0
        print(f"{CandidatePair.objects.count()} candidate pairs (filled in {filled:.0f} s)")
        from django.contrib.auth.models import User

        User.objects.filter(username="bench").delete()
        user = factories.user_create(username="bench", role="editor")
        client = Client()
        client.force_login(user)
        for count in counts:
            _labels_add(count, args.seed)
            sweeps.calibration_sample_make(per_band=20, seed=count)
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")  # as autovacuum leaves a table in use
            if args.no_figures:
                CalibrationFigures.objects.all().delete()
                print(f"{Label.objects.count()} labels, no stored figures")
            else:
                t0, c0 = time.perf_counter(), time.process_time()
                stored_figures.figures_recompute()
                print(
                    f"{Label.objects.count()} labels: recompute (the beat task) "
                    f"{time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU"
                )
            for name, query in (
                ("calibration page", {}),
                ("doc type: article", {"doc_type": "article"}),
            ):
                url = "/review/calibration/"
                _report(f"{name}, first render", _time(client, url, query, args.runs, first=True))
                _report(f"{name}, cached", _time(client, url, query, args.runs))
            page = client.get("/review/calibration/").content.decode()
            sections = _section_urls(page)
            print(f"  {len(sections)} sections on the page")
            worst: dict[str, tuple] = {}  # type: ignore[type-arg]
            for section in sections:
                part = section.split("part=")[1].split("&")[0]
                for mode, first in (("first render", True), ("cached", False)):
                    got = _time(client, section, {}, max(3, args.runs // 2), first=first, htmx=True)
                    key = f"section {part}, {mode}"
                    if key not in worst or got[0] > worst[key][0]:
                        worst[key] = got
            for key in sorted(worst):
                _report(f"{key} (slowest)", worst[key])
    finally:
        if not (args.keep or args.reuse):
            connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
