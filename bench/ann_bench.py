"""The semantic channel's approximate index (ingest/core/ann.py: usearch HNSW, float16,
cosine) at corpus sizes: build time, per-query latency (one query at a time, one
thread, as a worker asks), recall@10 against exact cosine on the same float16 vectors,
memory; and, with --pg N, the cold rebuild of a worker's index from PostgreSQL (N
Embedding rows actually written, then read back by ingest.vectors.ProcessIndex).

Vectors: 384-dim float16 unit vectors drawn around clusters (centres ~ N(0, 1), members
= centre + N(0, noise²) per dimension, normalized), so that every vector has near
neighbours, plus a share of rewritten-copy twins (cosine ~0.95 with a member). Queries
are new vectors drawn the same way (a new document), not stored ones.

    .venv/bin/python bench/ann_bench.py --sizes 100000 1000000 [--queries 1000]
    DEBUG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/dedup_bench \\
        .venv/bin/python bench/ann_bench.py --sizes --pg 100000 [--snapshot]

With --snapshot (after the --pg rebuild): the rebuilt index written as a snapshot
(seconds, file size), then NEW_ROWS more rows written, and in a fresh process (a
subprocess) the snapshot loaded (seconds) and the new rows caught up (seconds): what a
cold worker does instead of the rebuild. The snapshot goes to EMBEDDING_INDEX_DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.core import ann  # noqa: E402

DIMS = 384
MODEL = "bench-random-384"
NEW_ROWS = 10_000


def vectors(
    n: int, rng: np.random.Generator, centres: npt.NDArray[np.float32], noise: float
) -> npt.NDArray[np.float16]:
    out = np.empty((n, DIMS), dtype=np.float16)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        x = centres[rng.integers(0, len(centres), m)] + rng.normal(
            scale=noise, size=(m, DIMS)
        ).astype(np.float32)
        # One in ten is a rewritten copy of the one before it (cosine ~0.95).
        twins = np.arange(1, m, 10)
        x[twins] = x[twins - 1] + rng.normal(scale=0.25 * noise, size=(len(twins), DIMS))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        out[start : start + m] = x.astype(np.float16)
    return out


def exact_top(
    data: npt.NDArray[np.float16], queries: npt.NDArray[np.float32], k: int
) -> list[list[int]]:
    best_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, len(data), 200_000):
        chunk = data[start : start + 200_000].astype(np.float32)
        scores = queries @ chunk.T
        s = np.concatenate([best_s, scores], axis=1)
        i = np.concatenate(
            [best_i, np.broadcast_to(np.arange(start, start + len(chunk)), scores.shape)], axis=1
        )
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        best_s = np.take_along_axis(s, top, axis=1)
        best_i = np.take_along_axis(i, top, axis=1)
    order = np.argsort(-best_s, axis=1)
    return np.take_along_axis(best_i, order, axis=1).tolist()


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_size(n: int, queries_n: int, k: int, seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(1, n // 200), DIMS)).astype(np.float32)
    noise = 0.75  # members: cosine ~0.8 with their centre, ~0.64 with each other
    data = vectors(n, rng, centres, noise)
    queries = vectors(queries_n, rng, centres, noise).astype(np.float32)
    rss0 = rss_mb()
    index = ann.new_index(DIMS)
    t0, c0 = time.perf_counter(), time.process_time()
    for start in range(0, n, 50_000):
        ann.add(
            index,
            list(range(start, min(n, start + 50_000))),
            data[start : start + 50_000].astype(np.float32),
        )
    build_wall, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    out: dict[str, object] = {
        "vectors": n,
        "build_wall_s": round(build_wall, 1),
        "build_cpu_s": round(build_cpu, 1),
        "index_memory_mb": round(index.memory_usage / 2**20, 1),
        "serialized_mb": round(index.serialized_length / 2**20, 1),
        "vectors_mb": round(data.nbytes / 2**20, 1),
        "rss_growth_mb": round(rss_mb() - rss0, 1),
    }
    exact = exact_top(data, queries, k)
    for expansion in (64, 128):
        index.expansion_search = expansion
        times = []
        found = []
        for q in queries:
            t = time.perf_counter()
            m = index.search(q.astype(np.float16), k, threads=1)
            times.append(time.perf_counter() - t)
            found.append([int(x) for x in m.keys])
        ms = np.array(times) * 1000
        out[f"expansion_{expansion}"] = {
            "recall_at_10": round(ann.recall_at(found, exact), 4),
            "query_ms_p50": round(float(np.percentile(ms, 50)), 3),
            "query_ms_p95": round(float(np.percentile(ms, 95)), 3),
            "query_ms_p99": round(float(np.percentile(ms, 99)), 3),
        }
    return out


def pg_rebuild(n: int, seed: int) -> tuple[object, dict[str, object]]:
    """Write n documents with their Embedding rows, then time a cold catch-up."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from ingest import vectors as store
    from ingest.models import Embedding

    call_command("migrate", verbosity=0)
    model = MODEL
    have = Embedding.objects.filter(model=model).count()
    t0 = time.perf_counter()
    if have < n:
        rows_write(have, n - have, seed)
    written = time.perf_counter() - t0
    index = store.ProcessIndex(store.Space(model))
    t1, c1 = time.perf_counter(), time.process_time()
    added = index.catch_up()
    rebuild_wall, rebuild_cpu = time.perf_counter() - t1, time.process_time() - c1
    t2 = time.perf_counter()
    again = index.catch_up()
    return index, {
        "rows": Embedding.objects.filter(model=model).count(),
        "write_s": round(written, 1),
        "rebuild_wall_s": round(rebuild_wall, 1),
        "rebuild_cpu_s": round(rebuild_cpu, 1),
        "vectors_indexed": added,
        "catch_up_when_current_ms": round((time.perf_counter() - t2) * 1000, 2),
        "caught_up_again": again,
        "vector_bytes_per_row": DIMS * 2,
    }


def rows_write(have: int, count: int, seed: int) -> None:
    """`count` more documents with their Embedding rows (numbered from `have`)."""
    from datetime import UTC, datetime, timedelta

    from ingest.core import embeddings as core
    from ingest.core.extract import EXTRACTOR_VERSION
    from ingest.models import Document, Embedding, Site

    model = MODEL
    rng = np.random.default_rng(seed + have)
    centres = rng.normal(size=(max(1, (have + count) // 200), DIMS)).astype(np.float32)
    data = vectors(count, rng, centres, 0.75)
    site, _ = Site.objects.get_or_create(host="bench.example.com")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for lo in range(0, len(data), 5000):
        chunk = data[lo : lo + 5000]
        docs = Document.objects.bulk_create(
            [
                Document(
                    site=site,
                    url=f"https://bench.example.com/{have + lo + i}",
                    fetched_at=start + timedelta(seconds=have + lo + i),
                    raw_sha256=f"{have + lo + i:064x}",
                    raw_size=0,
                )
                for i in range(len(chunk))
            ]
        )
        Embedding.objects.bulk_create(
            [
                Embedding(
                    document=d,
                    model=model,
                    text_rule=core.TEXT_RULE,
                    extractor_version=EXTRACTOR_VERSION,
                    status="covered",
                    language="en",
                    dims=DIMS,
                    vector=v.tobytes(),
                )
                for d, v in zip(docs, chunk, strict=True)
            ]
        )


def pg_snapshot(index: object, seed: int) -> dict[str, object]:
    """Write the rebuilt index as a snapshot, add NEW_ROWS rows, then load and catch up
    in a fresh process."""
    import subprocess

    from ingest.models import Embedding

    t0, c0 = time.perf_counter(), time.process_time()
    size = index.snapshot_save()  # type: ignore[attr-defined]
    save_wall, save_cpu = time.perf_counter() - t0, time.process_time() - c0
    rows_before = Embedding.objects.filter(model=MODEL).count()
    t1 = time.perf_counter()
    rows_write(rows_before, NEW_ROWS, seed)
    write_new = time.perf_counter() - t1
    fresh = subprocess.run(
        [sys.executable, __file__, "--sizes", "--fresh-load"],
        check=True,
        capture_output=True,
        text=True,
    )
    return {
        "snapshot_save_wall_s": round(save_wall, 1),
        "snapshot_save_cpu_s": round(save_cpu, 1),
        "snapshot_mb": round(size / 2**20, 1),
        "snapshot_path": str(index.snapshot_path()),  # type: ignore[attr-defined]
        "new_rows_written": NEW_ROWS,
        "new_rows_write_s": round(write_new, 1),
        "fresh_process": json.loads(fresh.stdout),
    }


def fresh_load() -> dict[str, object]:
    """In a new process: load the snapshot, then catch up (the NEW_ROWS rows)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
    import django

    django.setup()
    from ingest import vectors as store

    index = store.ProcessIndex(store.Space(MODEL))
    t0, c0 = time.perf_counter(), time.process_time()
    loaded = index.snapshot_load()
    load_wall, load_cpu = time.perf_counter() - t0, time.process_time() - c0
    vectors_loaded = len(index)
    t1, c1 = time.perf_counter(), time.process_time()
    added = index.catch_up()
    return {
        "loaded": loaded,
        "vectors_loaded": vectors_loaded,
        "load_wall_s": round(load_wall, 2),
        "load_cpu_s": round(load_cpu, 2),
        "rss_after_load_mb": round(rss_mb(), 1),
        "catch_up_added": added,
        "catch_up_wall_s": round(time.perf_counter() - t1, 2),
        "catch_up_cpu_s": round(time.process_time() - c1, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pg", type=int, default=0, help="rows for the PostgreSQL rebuild")
    parser.add_argument("--snapshot", action="store_true", help="snapshot after the rebuild")
    parser.add_argument("--fresh-load", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fresh_load:
        print(json.dumps(fresh_load()))
        return
    report: dict[str, object] = {
        "index": {
            "connectivity": ann.CONNECTIVITY,
            "expansion_add": ann.EXPANSION_ADD,
            "expansion_search_shipped": ann.EXPANSION_SEARCH,
        },
        "cpus": os.cpu_count(),
        "load_avg_before": os.getloadavg(),
    }
    sizes: list[dict[str, object]] = []
    report["sizes"] = sizes
    for n in args.sizes:
        sizes.append(one_size(n, args.queries, args.k, args.seed))
        # Each size as soon as it is measured (a 1M run takes a while on 2 cores).
        print(json.dumps(sizes[-1]), file=sys.stderr, flush=True)
    if args.pg:
        index, report["postgres_rebuild"] = pg_rebuild(args.pg, args.seed)
        print(json.dumps(report["postgres_rebuild"]), file=sys.stderr, flush=True)
        if args.snapshot:
            report["snapshot"] = pg_snapshot(index, args.seed)
    report["load_avg_after"] = os.getloadavg()
    report["at"] = time.strftime("%Y-%m-%d %H:%M:%S")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
