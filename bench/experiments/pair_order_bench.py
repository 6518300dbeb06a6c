"""Do candidate pairs depend on processing order? (the project's own code, SQLite)

Corpus: the first --pairs human-judged page pairs of copycat-judgments (under --data,
default ../shared/data)
(real main texts: near-copies and exact copies sharing a canonical link), plus, for
every --copy-every-th pair, exact copies of its texts at other URLs (2 of the first, 1
of the second) placed at random later positions, as a crawl meets mirrors and login
walls. Each text is a Document with an ok Extraction and the active method's
Fingerprint (computed by `fingerprint_text`), in that order. A "task" is
PROCESS_TASK_SIZE consecutive documents.

Runs, each from an empty index and no pairs, through `candidates.candidates_find`:
- clean: the tasks in id order;
- redelivered: the same, but 1-3 random tasks die after their index rows commit and
  run again after all the others (the probe's SIGKILL + visibility timeout);
- repeated: the clean run, then 3 random tasks delivered a second time;
- shuffled: the tasks in a random order.
Printed per run: pairs, pairs not in the clean run, clean pairs missing, whether the
pairs between families of exact twins (text SHA-256 pairs with distance) and the groups
equal the clean run's. Usage (no DATABASE_URL: a temporary SQLite file):
    .venv/bin/python bench/experiments/pair_order_bench.py [--data DIR] [--pairs 480] \\
        [--copy-every 4] [--trials 4]
"""

import argparse
import gzip
import json
import os
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.pop("DATABASE_URL", None)
os.environ.pop("CELERY_BROKER_URL", None)
os.environ["DATA_DIR"] = tempfile.mkdtemp(prefix="pair-order-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")  # settings refuse none with DEBUG off

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from ingest import candidates, index  # noqa: E402
from ingest.core.extract import EXTRACTOR_VERSION  # noqa: E402
from ingest.core.methods import fingerprint_text  # noqa: E402
from ingest.core.simhash import to_signed64, to_unsigned64  # noqa: E402
from ingest.models import (  # noqa: E402
    CandidateGroup,
    CandidatePair,
    Document,
    Extraction,
    Fingerprint,
    GroupMember,
    IndexEntry,
    Site,
)
from ingest.services import methods_ensure  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def texts(data: Path, pairs: int, copy_every: int, rng: random.Random) -> list[str]:
    with gzip.open(data / "copycat-judgments" / "judgments.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f][:pairs]
    out = [text for row in rows for text in (row["a_text"], row["b_text"])]
    for i, row in enumerate(rows):
        if copy_every and i % copy_every == 0:
            for text in (row["a_text"], row["a_text"], row["b_text"]):
                out.insert(rng.randint(2 * i + 2, len(out)), text)
    return out


def load(corpus: list[str]) -> list[int]:
    method = methods_ensure()[settings.ACTIVE_METHOD]
    site = Site.objects.create(host="copycat.example")
    ids = []
    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    for n, text in enumerate(corpus, 1):
        fp = fingerprint_text(settings.ACTIVE_METHOD, text)
        if fp.simhash is None:
            continue
        doc = Document.objects.create(
            site=site,
            url=f"https://copycat.example/{n}",
            fetched_at=t0 + timedelta(minutes=n),
            raw_sha256=f"{n:064x}",
            raw_size=len(text),
            doc_type="article",
        )
        Extraction.objects.create(
            document=doc,
            extractor_version=EXTRACTOR_VERSION,
            status="ok",
            main_text=text,
            full_text=text,
            main_tokens=len(text.split()),
        )
        Fingerprint.objects.create(
            document=doc,
            method=method,
            simhash=to_signed64(fp.simhash),
            token_count=fp.token_count,
            text_sha256=fp.text_sha256,
            full_simhash=to_signed64(fp.simhash),
        )
        ids.append(doc.pk)
    return ids


def reset() -> None:
    GroupMember.objects.all().delete()
    CandidateGroup.objects.all().delete()
    CandidatePair.objects.all().delete()
    IndexEntry.objects.all().delete()


def index_only(ids: list[int]) -> None:
    rows = Fingerprint.objects.filter(document_id__in=ids, simhash__isnull=False).select_related(
        "document"
    )
    index.entries_add(
        [
            (r.method_id, r.document_id, to_unsigned64(r.simhash), r.document.fetched_at)
            for r in rows
        ]  # type: ignore[arg-type]
    )


def state() -> tuple[set[tuple[int, int]], set[tuple[str, str, int]], set[frozenset[int]]]:
    sha = dict(Fingerprint.objects.values_list("document_id", "text_sha256"))
    pairs = set(CandidatePair.objects.values_list("a_id", "b_id"))
    families = {
        (*sorted((sha[a], sha[b])), d)
        for a, b, d in CandidatePair.objects.values_list("a_id", "b_id", "distance")
    }
    groups: dict[int, set[int]] = {}
    for g, d in GroupMember.objects.values_list("group_id", "document_id"):
        groups.setdefault(g, set()).add(d)
    return pairs, families, {frozenset(m) for m in groups.values()}  # type: ignore[misc]


def run(tasks: list[list[int]], *, died: set[int] = frozenset(), again: list[int] = ()) -> None:  # type: ignore[assignment]
    reset()
    for i, ids in enumerate(tasks):
        if i in died:
            index_only(ids)  # the index rows committed, then the worker was killed
        else:
            candidates.candidates_find(document_ids=ids)
    for i in [*sorted(died), *again]:
        candidates.candidates_find(document_ids=tasks[i])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA, help="development data directory")
    parser.add_argument("--pairs", type=int, default=480)
    parser.add_argument("--copy-every", type=int, default=4)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    rng = random.Random(args.seed)
    ids = load(texts(args.data, args.pairs, args.copy_every, rng))
    size = settings.PROCESS_TASK_SIZE
    tasks = [ids[i : i + size] for i in range(0, len(ids), size)]
    sha = dict(Fingerprint.objects.values_list("document_id", "text_sha256"))
    twins = len(ids) - len(set(sha.values()))
    print(f"{len(ids)} documents, {len(tasks)} tasks of {size}, {twins} exact twins")
    run(tasks)
    clean = state()
    print(f"clean: {len(clean[0])} pairs, {len(clean[2])} groups")
    for kind in ("redelivered", "repeated", "shuffled"):
        for t in range(args.trials):
            if kind == "redelivered":
                died = set(rng.sample(range(len(tasks)), rng.randint(1, 3)))
                run(tasks, died=died)
                what = f"tasks {sorted(died)} died after indexing"
            elif kind == "repeated":
                again = rng.sample(range(len(tasks)), 3)
                run(tasks, again=again)
                what = f"tasks {again} delivered twice"
            else:
                order = list(range(len(tasks)))
                rng.shuffle(order)
                run([tasks[i] for i in order])
                what = "random task order"
            pairs, families, groups = state()
            print(
                f"{kind} {t}: {len(pairs)} pairs (+{len(pairs - clean[0])} new, "
                f"-{len(clean[0] - pairs)} missing), family pairs equal: "
                f"{families == clean[1]}, groups equal: {groups == clean[2]} ({what})"
            )


if __name__ == "__main__":
    main()
