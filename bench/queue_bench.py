"""Review queue page: server time and query count at 100,000 candidate pairs and 20,000
labels on PostgreSQL (target: median ≤ 60 ms, queries independent of page size and of
the number of labels).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dedup_bench \\
        .venv/bin/python bench/queue_bench.py [--pairs 100000] [--labels 20000] [--runs 30]

Builds a throw-away test database (test_<name>), fills it with bulk inserts (documents
with fingerprints, candidate pairs with random distances, doc types and guards, groups
with members, labels by ten editors with some disputes and relabels, the per-pair review
state the label service keeps), then times the Django test client's GET of the queue
(full page, the htmx results partial, page 2, two filters) and counts its queries.
Prints medians and p95 in milliseconds with the machine noted, and per request the
median CPU time of the server's Python and the median wall time spent in database calls
(on a shared machine the CPU time moves less than the wall time). A script, not a test.
The pairs and extractions are dated a day back (a desk in steady state: the queue
counts the last QUEUE_TALLY_LAG_SECONDS of them live, the rest from its tally); the
first warm-up request builds the tally and the stored order.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")  # settings refuse none with DEBUG off
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _fill(n_pairs: int, n_labels: int, seed: int) -> None:
    from django.conf import settings
    from django.db import transaction
    from django.db.models import F

    from ingest.candidates import threshold_for
    from ingest.core.extract import EXTRACTOR_VERSION
    from ingest.models import (
        CandidateGroup,
        CandidatePair,
        Document,
        Extraction,
        Fingerprint,
        GroupMember,
        Site,
    )
    from ingest.services import methods_ensure
    from reviews.models import Label
    from reviews.queue.pair_states import pair_states_rebuild
    from reviews.queue.queue_tally import queue_sync
    from tests import factories

    rng = random.Random(seed)
    method = methods_ensure()[settings.ACTIVE_METHOD]
    sites = [Site.objects.create(host=f"s{i}.example.com") for i in range(20)]
    n_docs = max(n_pairs * 6 // 10, 100)
    base = datetime(2026, 5, 1, tzinfo=UTC)
    types = list(settings.DOC_TYPES)
    docs = []
    for i in range(n_docs):
        # One page in twenty is a re-crawl of the page before it (same URL, later).
        url = f"https://s{i % 20}.example.com/p/{i - 1 if i % 20 == 19 else i}"
        docs.append(
            Document(
                site=sites[i % 20],
                url=url,
                fetched_at=base + timedelta(minutes=i),
                raw_sha256=f"{i:064x}",
                raw_size=1000,
                doc_type=types[i % len(types)],
            )
        )
    Document.objects.bulk_create(docs, batch_size=5000)
    ids = list(Document.objects.order_by("id").values_list("id", flat=True))
    Extraction.objects.bulk_create(
        [
            Extraction(
                document_id=d,
                extractor_version=EXTRACTOR_VERSION,
                status="blocked" if d % 50 == 0 else "ok",
                main_tokens=300,
            )
            for d in ids
        ],
        batch_size=5000,
    )
    Fingerprint.objects.bulk_create(
        [
            Fingerprint(
                document_id=d,
                method=method,
                simhash=rng.getrandbits(63),
                text_sha256=f"{d:064x}",
                token_count=300,
            )
            for d in ids
        ],
        batch_size=5000,
    )
    seen: set[tuple[int, int]] = set()
    pairs = []
    while len(pairs) < n_pairs:
        x, y = rng.sample(ids, 2)
        a, b = min(x, y), max(x, y)
        if (a, b) in seen:
            continue
        seen.add((a, b))
        doc_type, distance = types[rng.randrange(len(types))], rng.randrange(0, 7)
        pairs.append(
            CandidatePair(
                method=method,
                a_id=a,
                b_id=b,
                doc_type=doc_type,
                distance=distance,
                uncertainty=abs(distance - threshold_for(doc_type)),
                xor=rng.getrandbits(63),
                band=rng.randrange(4),
                exact=rng.random() < 0.1,
                ratio=90.0,
                token_set_ratio=90.0,
                length_ratio=1.0,
                containment=0.9,
                numbers_differ=rng.random() < 0.1,
                ids_differ=rng.random() < 0.05,
                title_differs=rng.random() < 0.05,
                below_floor=rng.random() < 0.02,
            )
        )
    CandidatePair.objects.bulk_create(pairs, batch_size=5000)
    # Groups: 2–6 members each over a fifth of the documents.
    pool = rng.sample(ids, len(ids) // 5)
    groups, members = [], []
    while pool:
        size = min(rng.randrange(2, 7), len(pool))
        chunk, pool = pool[:size], pool[size:]
        if len(chunk) < 2:
            break
        groups.append((chunk, rng.random() < 0.05, rng.random() < 0.02))
    rows = CandidateGroup.objects.bulk_create(
        [
            CandidateGroup(
                method=method,
                kind="near",
                rule="connected-components-v1",
                representative_id=chunk[0],
                size=len(chunk),
                diameter=rng.randrange(0, 6),
                chained=chained,
                needs_review=flagged,
            )
            for chunk, chained, flagged in groups
        ],
        batch_size=5000,
    )
    for group, (chunk, _, _) in zip(rows, groups, strict=True):
        members += [
            GroupMember(group=group, document_id=d, method=method, added_by="rule:bench")
            for d in chunk
        ]
    GroupMember.objects.bulk_create(members, batch_size=5000)
    # Labels: ten editors; most pairs get one label, some two (a share disagree), and a
    # few editors relabel (the earlier label superseded).
    editors = [factories.user_create(username=f"editor{i}", role="editor") for i in range(10)]
    pair_ids = list(CandidatePair.objects.values_list("id", flat=True))
    labelled = rng.sample(pair_ids, min(len(pair_ids), n_labels * 3 // 4))
    verdicts = [v for v, _ in Label.Verdict.choices]
    labels: list[Label] = []
    i = 0
    while len(labels) < n_labels:
        pair_id = labelled[i % len(labelled)]
        editor = editors[(i + len(labels)) % 10 if i >= len(labelled) else i % 10]
        verdict = verdicts[rng.randrange(4)] if rng.random() < 0.3 else "duplicate"
        labels.append(
            Label(
                pair_id=pair_id,
                editor=editor,
                verdict=verdict,
                reason_code="same_text",
                reason="bench",
                region="body",
                method_key=method.key,
                extractor_version=EXTRACTOR_VERSION,
            )
        )
        i += 1
    # A relabel supersedes the editor's earlier label on the pair: one current label per
    # editor and pair of documents, which the database checks at commit.
    with transaction.atomic():
        Label.objects.bulk_create(labels, batch_size=5000)
        latest: dict[tuple[int, int], int] = {}
        for label in labels:  # in the order given, so by ascending id
            key = (label.editor_id, label.pair_id)
            if key in latest:
                Label.objects.filter(pk=latest[key]).update(superseded_by_id=label.pk)
            latest[key] = label.pk
    pair_states_rebuild()
    # A desk in steady state: the pairs and pages came in over the days before, not in
    # the last minutes (which the queue counts live, outside its tally).
    day = timedelta(days=1)
    CandidatePair.objects.update(created_at=F("created_at") - day)
    Extraction.objects.update(created_at=F("created_at") - day)
    queue_sync()  # the stored order and the tally, as the desk's earlier reads left them


def _time(client, url: str, query: dict[str, str], headers: dict[str, str], runs: int):  # type: ignore[no-untyped-def]
    """Median and p95 wall time, median CPU time of this process (the server's Python:
    steadier than the wall time on a shared machine) and median wall time inside the
    database calls, in ms; and the query count."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, cpus, dbs = [], [], []
    queries = 0
    in_db = [0.0]

    def db_timer(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            in_db[0] += time.perf_counter() - t0

    for i in range(runs + 2):
        in_db[0] = 0.0
        with CaptureQueriesContext(connection) as ctx, connection.execute_wrapper(db_timer):
            t0, c0 = time.perf_counter(), time.process_time()
            r = client.get(url, query, headers=headers)
            elapsed, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        assert r.status_code == 200, r.status_code
        queries = len(ctx.captured_queries)
        if i >= 2:  # warm-up
            times.append(elapsed)
            cpus.append(cpu)
            dbs.append(in_db[0] * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    return statistics.median(times), p95, statistics.median(cpus), statistics.median(dbs), queries


def bench_database_open(*, reuse: bool) -> str:
    """Point Django at the PostgreSQL database test_<name> as a test run would (a new one,
    or with `reuse` the one a previous --keep run left), serving the test client; the
    name to hand back to destroy_test_db."""
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment

    if connection.vendor != "postgresql":
        sys.exit("set DATABASE_URL to a PostgreSQL database (the bench uses test_<name>)")
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver", *settings.ALLOWED_HOSTS]
    settings.DEBUG = False
    if not reuse:
        return connection.creation.create_test_db(verbosity=0, autoclobber=True)
    old_name = settings.DATABASES["default"]["NAME"]
    test_name = connection.creation._get_test_db_name()
    settings.DATABASES["default"]["NAME"] = test_name
    connection.settings_dict["NAME"] = test_name
    connection.close()
    return old_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--labels", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time against test_<name> as a previous --keep run left it (no fill)",
    )
    parser.add_argument("--keep", action="store_true", help="leave test_<name> in place")
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection
    from django.test import Client

    from reviews.models import Label
    from tests import factories

    old_name = bench_database_open(reuse=args.reuse)
    try:
        t0 = time.perf_counter()
        if not args.reuse:
            _fill(args.pairs, args.labels, args.seed)
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")  # as autovacuum leaves a table in use
        fill_s = time.perf_counter() - t0
        from django.contrib.auth.models import User

        User.objects.filter(username="bench").delete()
        user = factories.user_create(username="bench", role="editor")
        client = Client()
        client.force_login(user)
        print(
            f"queue bench · {connection.vendor} {connection.pg_version} · "
            f"{platform.python_implementation()} {platform.python_version()} · "
            f"{platform.machine()} · {os.cpu_count()} CPUs · load {os.getloadavg()[0]:.1f}"
        )
        from ingest.models import CandidatePair

        print(
            f"{CandidatePair.objects.count()} candidate pairs, {Label.objects.count()} labels "
            f"(filled in {fill_s:.0f} s); {args.runs} runs each after 2 warm-ups"
        )
        hx = {"HX-Request": "true"}
        views = [
            ("queue page (needs review)", {}, {}),
            ("htmx results partial", {}, hx),
            ("page 2", {"page": "2"}, {}),
            ("page 40 (pairs 1,951–2,000)", {"page": "40"}, {}),
            ("filter: article, any guard", {"doc_type": "article", "guard": "any"}, hx),
            ("filter: disputed", {"status": "disputed"}, hx),
            ("filter: site, distance ≤ 3", {"site": "s3.example.com", "distance_max": "3"}, hx),
        ]
        medians = []
        for name, query, headers in views:
            median, p95, cpu, db, queries = _time(client, "/review/", query, headers, args.runs)
            medians.append(median)
            print(
                f"  {name:<30} median {median:7.1f} ms   p95 {p95:7.1f} ms   "
                f"cpu {cpu:6.1f} ms   in db {db:6.1f} ms   {queries} queries"
            )
        print(f"target: median ≤ 60 ms — worst median {max(medians):.1f} ms")
    finally:
        if not (args.keep or args.reuse):
            connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
