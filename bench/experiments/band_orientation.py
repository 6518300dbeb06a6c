"""Which half a k=6 band lookup should probe within 3 bits (and the other within 2).

Six differing bits over two 32-bit halves leave one half within 2 bits or the other
within 3, and equally one within 3 or the other within 2: both radii (2, 3) and (3, 2)
find every pair. The scheme computes (2, 3) for every query. Real SimHash bits are
biased, so the half keys are crowded unevenly, and the radius-3 ball of a crowded half
nominates most of a lookup's rows. This counts, in numpy over the real-distribution
fingerprints (bench/corpus.py), the band entries a k=6 lookup reads under (2, 3), under
(3, 2), under the better of the two for each query (the oracle), and under a choice
made from the crowding of each half's radius-1 ball (the 33 keys next to the query's:
what a cheap first probe could read), or from a histogram of each half's top 16 bits.

    python bench/experiments/band_orientation.py --size 10000000 --queries 2000

The product tried it (commits cde21be to ef5f11e, reverted): on the 10M scale-bench
database the oriented lookup read half the entries at p95 but was no faster, its own
count costing about what the entries saved (p50 9.18 against 8.12 ms, p95 13.67 against
13.20, 500 lookups each, alternating; ``--database`` at ef5f11e timed them). At 10M a k=6
lookup's time is its 6,018 probes more than the entries it reads: the fixed radii stay.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

from corpus import real_looking_fingerprints  # noqa: E402

from ingest.core.bands import B32X2, _mask_array  # noqa: E402


def halves(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    high = (values >> np.uint64(32)).astype(np.uint32)
    low = (values & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return np.sort(high), np.sort(low)


def ball_count(sorted_keys: np.ndarray, key: int, r: int) -> int:
    """Entries whose half key lies within r bits of `key`."""
    probes = (np.uint64(key) ^ _mask_array(32, r)).astype(np.uint32)
    return int(
        (
            np.searchsorted(sorted_keys, probes, side="right")
            - np.searchsorted(sorted_keys, probes, side="left")
        ).sum()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--base", type=int, default=0, help="corpus generated (default size)")
    parser.add_argument("--queries", type=int, default=2000)
    args = parser.parse_args()
    values = np.asarray(real_looking_fingerprints(args.base or args.size, 1), dtype=np.uint64)[
        : args.size
    ]
    high, low = halves(values)
    assert B32X2.radii(6) in ((2, 3), (3, 2))
    rng = np.random.default_rng(7)
    picks = rng.choice(len(values), size=args.queries, replace=False)
    rows: dict[str, list[int]] = {
        "fixed (2, 3)": [],
        "fixed (3, 2)": [],
        "oracle": [],
        "radius-1 crowding": [],
        "16-bit prefix histogram": [],
    }
    # Per half, entries by the top 16 bits of the half key: what a worker could count
    # when it warms the band btrees, and estimate a ball's entries from.
    hist = [np.bincount(high >> 16, minlength=1 << 16), np.bincount(low >> 16, minlength=1 << 16)]

    def estimate(half: int, key: int, r: int) -> float:
        probes = (np.uint64(key) ^ _mask_array(32, r)) >> np.uint64(16)
        return float(hist[half][probes.astype(np.int64)].sum()) / (1 << 16)

    for p in picks:
        v = int(values[p]) ^ (1 << int(rng.integers(0, 64))) ^ (1 << int(rng.integers(0, 64)))
        h, lo = v >> 32, v & 0xFFFFFFFF
        a = ball_count(high, h, 2) + ball_count(low, lo, 3)
        b = ball_count(high, h, 3) + ball_count(low, lo, 2)
        rows["fixed (2, 3)"].append(a)
        rows["fixed (3, 2)"].append(b)
        rows["oracle"].append(min(a, b))
        # The half whose near keys are more crowded gets the smaller radius.
        rows["radius-1 crowding"].append(
            b if ball_count(low, lo, 1) >= ball_count(high, h, 1) else a
        )
        est_a = estimate(0, h, 2) + estimate(1, lo, 3)
        est_b = estimate(0, h, 3) + estimate(1, lo, 2)
        rows["16-bit prefix histogram"].append(a if est_a <= est_b else b)
    print(
        f"{args.size:,} fingerprints, {args.queries} k=6 lookups (a stored value, 2 bits flipped)"
    )
    print("| radii | entries read p50 | p95 | p99 | mean |")
    print("| --- | --- | --- | --- | --- |")
    for name, counts in rows.items():
        c = np.asarray(counts)
        print(
            f"| {name} | {np.percentile(c, 50):,.0f} | {np.percentile(c, 95):,.0f} "
            f"| {np.percentile(c, 99):,.0f} | {c.mean():,.0f} |"
        )


if __name__ == "__main__":
    main()
