"""Ingest CPU on real pages, old and new code interleaved: where the product's own work
at ingest goes, in CPU time, for two (or more) versions of the code on the same records.

The wall-clock bench (``ingest_bench.py --real-pages``) needs an idle machine; this one
measures CPU seconds, which another job on the machine disturbs much less, and runs the
versions in turn (A B A B …) so that a change of load hits both alike. For each version
and round, on the real-page WARC of ``ingest_bench.py`` (``bench/out/ingest-real-N.warc.gz``):

1. ``ingest``: a fresh database (``BENCH_DB_NAME``, dropped and recreated, migrated),
   ``manage.py ingest FILE --no-progress`` as a subprocess with the broker pointed at an
   unused Redis database (nothing consumes the tasks; it is flushed after): the
   command's CPU (start-up included, as in the end-to-end bench) and the CPU of the
   database's PostgreSQL backends while it runs;
2. ``workers``: one process does what the two Celery workers do, in-process and in the
   same order: ``documents_process`` for each task's worth of documents
   (``PROCESS_TASK_SIZE``), then ``candidates_find`` for the same documents (Celery
   eager, so it runs when the processing commits), timing each stage in CPU time
   (``time.process_time``) by wrapping the functions it calls, with the cyclic garbage
   collector's time apart, and the CPU of its PostgreSQL backend;
3. ``extraction alone``: decode + extract of the same records in a process without
   Django (the product's own functions, as ``ingest_bench.py`` measures it).

Then it prints, per version, the medians over the rounds: CPU ms per page of the ingest
command, the worker replica, PostgreSQL, extraction alone, and the overhead
(ingest + workers + PostgreSQL) / extraction alone − 1, which is the end-to-end bench's
"in CPU" line without Celery and with every candidate search counted.

    BENCH_DB_NAME=dedup_x BENCH_REDIS_URL=redis://127.0.0.1:6379/6 \\
      .venv/bin/python bench/ingest_cpu_ab.py --rev main --rev HEAD --rounds 3 --records 1000

``--rev`` takes any commit (exported with ``git archive`` under bench/out/), ``.`` is the
working tree. The Redis database is flushed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PG = "postgres://postgres@127.0.0.1:5432"
PY = sys.executable


def _proc_cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _backends(db: str) -> dict[int, float]:
    """CPU seconds of every PostgreSQL backend connected to ``db``."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "postgres":
                continue
            words = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().split()
        except OSError:
            continue
        if len(words) >= 5 and "(" in words[4] and words[3] == db:
            out[int(entry.name)] = _proc_cpu_s(int(entry.name))
    return out


def _env(project: Path, db: str, broker: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("SECRET_KEY", "bench-only-not-secret")
    env.update(
        DATABASE_URL=f"{PG}/{db}",
        DJANGO_SETTINGS_MODULE="dedup_site.settings",
        PYTHONPATH=str(project),
        PYTHONUNBUFFERED="1",
    )
    env.pop("CELERY_BROKER_URL", None)
    if broker:
        env["CELERY_BROKER_URL"] = broker
        env["CELERY_QUEUE"] = "dedup"
    for name in ("FINGERPRINT_METHODS", "PROCESS_TASK_SIZE", "INGEST_CHUNK_SIZE"):
        env.pop(name, None)
    return env


def _recreate(db: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')


def ingest_step(project: Path, db: str, warc: Path, redis_url: str) -> dict[str, float]:
    import redis

    _recreate(db)
    env = _env(project, db, redis_url)
    subprocess.run(
        [PY, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=project, env=env, check=True
    )
    redis.Redis.from_url(redis_url).flushdb()
    pg_last: dict[int, float] = {}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        [PY, "manage.py", "ingest", str(warc), "--no-progress"],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    while proc.poll() is None:
        for pid, cpu in _backends(db).items():
            pg_last[pid] = max(cpu, pg_last.get(pid, 0.0))
        time.sleep(0.2)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    redis.Redis.from_url(redis_url).flushdb()
    if proc.returncode != 0:
        raise RuntimeError(f"ingest failed: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    return {
        "ingest_cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "ingest_pg_cpu_s": sum(pg_last.values()),
    }


# --- the worker replica (runs in its own process, Django set up on the database) -----


def _cpu_timed(table: dict[str, float], key: str, fn: Callable) -> Callable:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            table[key] += time.process_time() - start

    return wrapper


def workers_replica(db: str) -> dict[str, Any]:
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from ingest import candidates, services
    from ingest.channels import passages as passage_channel
    from ingest.core import extract as extract_mod
    from ingest.core import passages as passages_core
    from ingest.models import Document, RawBody

    t: dict[str, float] = defaultdict(float)
    missing: list[str] = []

    def patch(obj: Any, name: str, label: str) -> None:
        if not callable(getattr(obj, name, None)):
            missing.append(f"{getattr(obj, '__name__', type(obj).__name__)}.{name}")
            return
        setattr(obj, name, _cpu_timed(t, label, getattr(obj, name)))

    patch(RawBody, "raw", "decompress")  # or read and verify an archive record
    patch(services, "decode_html", "decode")
    patch(services, "extract", "extract")
    patch(extract_mod, "_main_text", "extract: trafilatura")
    patch(extract_mod, "_visible_text", "extract: full-page walk")
    patch(extract_mod, "_parse", "extract: lxml parse")
    patch(services, "fingerprint_texts", "fingerprints")
    patch(candidates, "candidates_find", "candidates_find")
    patch(candidates, "_passages_index", "candidates: passages computed + stored")
    patch(candidates, "_pairs_build", "candidates: pairs built (similarity, guards)")
    patch(candidates, "groups_update", "candidates: groups")
    patch(candidates.index, "query", "candidates: band index query")
    patch(candidates, "_passage_hits", "candidates: passage query")
    # Since the passages are stored and searched in one step (earlier: the two above).
    patch(candidates, "_passages_search", "candidates: passages computed, stored, searched")
    # Since the channels are modules of their own (ingest/channels): the passage channel's.
    patch(passage_channel.CHANNEL, "search", "candidates: passages computed, stored, searched")
    patch(passages_core, "passages", "passages computed (any caller)")

    sql = {"n": 0}
    shapes: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])

    def sql_wrapper(execute: Callable, sql_text: str, params: Any, many: bool, ctx: Any) -> Any:
        sql["n"] += 1
        start = time.process_time()
        wall = time.perf_counter()
        try:
            return execute(sql_text, params, many, ctx)
        finally:
            t["sql client"] += time.process_time() - start
            shape = shapes[" ".join(sql_text.split())[:90]]
            shape[0] += 1
            shape[1] += time.perf_counter() - wall

    gc_start: list[float] = []

    def gc_cb(phase: str, info: dict) -> None:
        if phase == "start":
            gc_start.append(time.process_time())
        elif gc_start:
            t[f"gc gen{info['generation']}"] += time.process_time() - gc_start.pop()

    # What a worker process runs when it starts (prefork child), whatever the code's is.
    from celery.signals import worker_process_init

    import dedup_site.celery  # noqa: F401  (connects the project's handlers)

    worker_process_init.send(sender=None)
    ids = list(Document.objects.order_by("pk").values_list("pk", flat=True))
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    pg0 = _proc_cpu_s(backend)
    size = settings.PROCESS_TASK_SIZE
    profile_to = os.environ.get("BENCH_CPROFILE")  # a cProfile (CPU clock) of the run
    profiler = None
    if profile_to:
        import cProfile

        profiler = cProfile.Profile(time.process_time)
    gc.callbacks.append(gc_cb)
    start = time.process_time()
    with connection.execute_wrapper(sql_wrapper):
        if profiler:
            profiler.enable()
        for i in range(0, len(ids), size):
            services.documents_process(document_ids=ids[i : i + size])
        if profiler:
            profiler.disable()
    total = time.process_time() - start
    if profiler and profile_to:
        profiler.dump_stats(profile_to)
    gc.callbacks.remove(gc_cb)
    pg = _proc_cpu_s(backend) - pg0
    return {
        "documents": len(ids),
        "methods": services.fingerprint_method_keys(),
        "workers_cpu_s": total,
        "workers_pg_cpu_s": pg,
        "sql_statements": sql["n"],
        "sql_wall_by_statement": dict(sorted(shapes.items(), key=lambda kv: -kv[1][1])[:25]),
        "stages_s": dict(t),
        "not_instrumented": missing,
    }


def workers_step(project: Path, db: str) -> dict[str, Any]:
    env = _env(project, db, None)  # no broker: Celery eager, candidates run on commit
    command = [PY, str(Path(__file__)), "--replica", db]
    if os.environ.get("BENCH_PYSPY"):  # py-spy record … -- the replica (collapsed stacks)
        out = os.environ["BENCH_PYSPY"]
        command = ["py-spy", "record", "-r", "250", "-f", "raw", "-o", out, "--", *command]
    proc = subprocess.run(
        command,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"replica failed:\n{proc.stderr[-3000:]}")
    return json.loads([x for x in proc.stdout.splitlines() if x.startswith("{")][-1])


# --- extraction alone (no Django) -----------------------------------------------------


def alone_replica(warc: Path) -> dict[str, Any]:
    from ingest.core.encoding import decode_html
    from ingest.core.extract import extract
    from ingest.core.readers import RawRecord, read_warc

    items = []
    with warc.open("rb") as fh:
        for item in read_warc(fh):
            if isinstance(item, RawRecord):
                items.append((item.body, item.headers.get("content-type", ""), item.url))
    start = time.process_time()
    for body, content_type, url in items:
        decoded = decode_html(body, content_type=content_type or None)
        extract(decoded.text, url=url, http_status=200)
    return {"records": len(items), "alone_cpu_s": time.process_time() - start}


def alone_step(project: Path, warc: Path) -> dict[str, Any]:
    env = _env(project, "unused", None)
    proc = subprocess.run(
        [PY, str(Path(__file__)), "--alone", str(warc)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"extraction alone failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- driver ---------------------------------------------------------------------------


def _project_for(rev: str) -> tuple[Path, str]:
    if rev == ".":
        return ROOT, "working tree"
    from benchenv import export_rev

    path, sha = export_rev(rev)
    return path, f"{rev} ({sha[:10]})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", action="append", default=[], help="commit, or . (repeatable)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--no-alone", action="store_true", help="skip extraction alone")
    parser.add_argument(
        "--data",
        type=Path,
        help="the extraction-dev data set the real-page WARC is made of (ingest_bench's default)",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--replica", help=argparse.SUPPRESS)
    parser.add_argument("--alone", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.replica:
        print(json.dumps(workers_replica(args.replica)))
        return 0
    if args.alone:
        print(json.dumps(alone_replica(args.alone)))
        return 0
    sys.path.insert(0, str(BENCH))
    from ingest_bench import real_warc_for  # type: ignore[import-not-found]

    db = os.environ.get("BENCH_DB_NAME", "dedup_bench_ingest_ab")
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
    warc = (
        real_warc_for(args.records, args.data) if args.data else real_warc_for(args.records)
    ).path
    versions = [_project_for(rev) for rev in (args.rev or ["."])]
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in range(args.rounds):
        order = versions if r % 2 == 0 else versions[::-1]
        for project, name in order:
            res: dict[str, Any] = {"load": os.getloadavg()[0]}
            res.update(ingest_step(project, db, warc, redis_url))
            res.update(workers_step(project, db))
            if not args.no_alone:
                res.update(alone_step(project, warc))
            runs[name].append(res)
            print(f"round {r + 1} {name}: {_line(res)}", flush=True)
    print()
    for _project, name in versions:
        print(f"{name}: medians of {len(runs[name])} rounds")
        for line in _summary(runs[name]):
            print(f"  {line}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))
    return 0


def _ms(res: dict[str, Any], key: str) -> float:
    return 1e3 * res[key] / res["documents"]


def _line(res: dict[str, Any]) -> str:
    ours = _ms(res, "ingest_cpu_s") + _ms(res, "workers_cpu_s") + _pg_ms(res)
    text = (
        f"ingest {_ms(res, 'ingest_cpu_s'):.1f} + workers {_ms(res, 'workers_cpu_s'):.1f} + "
        f"PostgreSQL {_pg_ms(res):.1f} = {ours:.1f} ms/page"
    )
    if "alone_cpu_s" in res:
        alone = 1e3 * res["alone_cpu_s"] / res["records"]
        text += f"; extraction alone {alone:.1f}: +{ours / alone - 1:.0%}"
    return text + f" (load {res['load']:.1f})"


def _pg_ms(res: dict[str, Any]) -> float:
    return 1e3 * (res["ingest_pg_cpu_s"] + res["workers_pg_cpu_s"]) / res["documents"]


def _summary(runs: list[dict[str, Any]]) -> list[str]:
    def med(fn: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(fn(r) for r in runs)

    lines = [
        f"ingest command {med(lambda r: _ms(r, 'ingest_cpu_s')):.2f} ms/page CPU",
        f"worker replica {med(lambda r: _ms(r, 'workers_cpu_s')):.2f}",
        f"PostgreSQL backends {med(_pg_ms):.2f} (during the ingest command "
        f"{med(lambda r: _ms(r, 'ingest_pg_cpu_s')):.2f}, the worker replica "
        f"{med(lambda r: _ms(r, 'workers_pg_cpu_s')):.2f})",
    ]
    stages = sorted({k for r in runs for k in r["stages_s"]})
    for key in stages:
        value = med(lambda r, k=key: 1e3 * r["stages_s"].get(k, 0.0) / r["documents"])  # type: ignore[misc]
        lines.append(f"  {key:<48} {value:7.2f}")
    if all("alone_cpu_s" in r for r in runs):
        lines.append(f"extraction alone {med(lambda r: 1e3 * r['alone_cpu_s'] / r['records']):.2f}")

        def overhead(r: dict[str, Any]) -> float:
            ours = _ms(r, "ingest_cpu_s") + _ms(r, "workers_cpu_s") + _pg_ms(r)
            return ours / (1e3 * r["alone_cpu_s"] / r["records"]) - 1

        lines.append(f"overhead over extraction alone: +{med(overhead):.0%}")
    lines.append("methods: " + ", ".join(runs[0]["methods"]))
    return lines


if __name__ == "__main__":
    sys.exit(main())
