"""Cost of the calibration maths on synthetic data (pure core, no services).

    .venv/bin/python bench/calibration_bench.py [--docs N] [--labels N] [--repeat N]

- Errors per action: ``reviews.core.actions_math.action_sweep`` over N documents in clusters
  of 2–40 (members 0–3 bits apart, a few clusters chained by a 4–6-bit link), every
  cluster with labelled pairs, for thresholds 0..16 under both grouping rules.
- Pre-label: ``stratified_document_pairs`` (2,000 draws over N documents on 50 sites, one
  site holding half the documents) and ``suggest`` on the SimHash histogram.

Prints medians of ``--repeat`` runs (perf_counter) and the machine load.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ingest.core import grouping  # noqa: E402
from reviews.core.actions_math import DocFacts, LabelledLink, ScoredPair, action_sweep  # noqa: E402
from reviews.core.prelabel_math import histogram, stratified_document_pairs, suggest  # noqa: E402
from reviews.core.scores import SIMHASH_DISTANCE  # noqa: E402

POLICY = ("site_priority", "extraction_complete", "newest", "canonical_url")


def corpus(
    n_docs: int, n_labels: int, seed: int = 1
) -> tuple[list[ScoredPair], list[LabelledLink], dict[int, DocFacts]]:
    rng = random.Random(seed)
    pairs: list[ScoredPair] = []
    clusters: list[list[int]] = []
    d = 0
    while d < n_docs:
        size = min(rng.randint(2, 40), n_docs - d)
        members = list(range(d, d + size))
        d += size
        clusters.append(members)
        for m in members[1:]:
            pairs.append(ScoredPair(members[0], m, rng.randint(0, 3)))
    for a, b in zip(clusters, clusters[1:], strict=False):
        if rng.random() < 0.1:  # a chaining link between two clusters
            x, y = rng.choice(a), rng.choice(b)
            pairs.append(ScoredPair(min(x, y), max(x, y), rng.randint(4, 6)))
    labels: list[LabelledLink] = []
    by_score = {(p.a, p.b): p.score for p in pairs}
    keys = list(by_score)
    for a, b in rng.sample(keys, min(n_labels, len(keys))):
        labels.append(LabelledLink(a, b, positive=rng.random() < 0.8, score=by_score[(a, b)]))
    when = datetime(2026, 5, 1, tzinfo=UTC)
    facts = {
        i: DocFacts(
            grouping.Candidate(i, rng.choice([0, 5, 10]), True, 100, when, f"https://s/{i}"),
            "article",
        )
        for i in range(n_docs)
    }
    return pairs, labels, facts


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--labels", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    pairs, labels, facts = corpus(args.docs, args.labels)
    thresholds = [float(t) for t in range(17)]
    print(f"{args.docs} documents, {len(pairs)} pairs, {len(labels)} labels, 17 thresholds")
    for rule in (grouping.CONNECTED, grouping.CENTRED):
        rows: list = []

        def run(rule: str = rule, rows: list = rows) -> None:
            rows[:] = action_sweep(
                SIMHASH_DISTANCE,
                thresholds,
                pairs,
                labels,
                facts,
                rule=rule,
                policy=POLICY,
                cost_false_merge=10,
                cost_missed=1,
            )

        seconds = median_seconds(run, args.repeat)
        at3 = rows[3]
        print(
            f"action_sweep {rule}: {seconds * 1000:.0f} ms median "
            f"(at t=3: {at3.wrong_groups} wrong groups, {at3.pair_false_merges} "
            f"distinct pairs within t, {at3.hidden_wrongly} hidden wrongly)"
        )
    rng = random.Random(2)
    docs = [(i, "big" if i % 2 == 0 else f"site{rng.randint(1, 49)}") for i in range(args.docs)]
    drawn: list = []
    seconds = median_seconds(
        lambda: drawn.__setitem__(slice(None), stratified_document_pairs(docs, draws=2000, seed=1)),
        args.repeat,
    )
    big = sum(1 for p in drawn for d in p if d % 2 == 0) / (2 * len(drawn))
    print(
        f"stratified_document_pairs, 2000 draws: {seconds * 1000:.1f} ms median "
        f"(share of sides from the site holding half the documents: {big:.3f})"
    )
    sample = histogram(SIMHASH_DISTANCE, [min(64, max(0, round(rng.gauss(30, 5)))) for _ in drawn])
    cands = histogram(SIMHASH_DISTANCE, [p.score for p in pairs])
    seconds = median_seconds(lambda: suggest(SIMHASH_DISTANCE, sample, cands), args.repeat)
    print(f"suggest: {seconds * 1e6:.0f} µs median → {suggest(SIMHASH_DISTANCE, sample, cands)}")


if __name__ == "__main__":
    main()
