"""Method upgrades: a fingerprint means nothing without its method, so a new method is
computed beside the old one, compared on the labelled pairs, switched to in one recorded
action, and the old one retired.

- **Register**: a key of ingest/core/methods.py gets its FingerprintMethod row.
- **Compute** (a RefingerprintRun of kind "fingerprints"): every processed document (one
  with an extraction of any version), in id order, in chunks; each chunk's extractions
  under the method's extractor version (made from the stored raw bytes where missing:
  a method of a new extractor re-extracts), its fingerprints (both branches) and the
  run's cursor commit together, so a restart resumes after the last committed chunk and
  no document is done twice. The old extractions and fingerprints stay.
- **Compare**: the labelled document pairs (a, b) — labels are given on one method's
  pairs, the documents are the same under every method — each method's distance from its
  own stored fingerprints, never across methods; calibration tables from
  reviews/core/calibration_math.py.
- **Switch**: refused until every document with an extraction has the method's main
  fingerprint; flips FingerprintMethod.is_active in one transaction with a MethodSwitch
  record (who, from, to, when, why) and starts a "candidates" run for the new method over
  every document. Pairs and groups carry their method: the old method's stay as they were.
- **Retire**: marks a method retired (no longer computed nor searched). Nothing is
  deleted: fingerprints, pairs, groups and labels stay.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from dedup_site import dispatch
from ingest import candidates, services
from ingest.channels import thresholds
from ingest.core.extract import EXTRACTORS
from ingest.core.methods import METHODS, method_get
from ingest.core.simhash import hamming, to_unsigned64
from ingest.models import (
    Document,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    MethodSwitch,
    RefingerprintRun,
)
from reviews.calibration import sweeps as cal
from reviews.core.calibration_math import LabeledPair
from reviews.core.words import Said, gettext_noop

Kind = RefingerprintRun.Kind
Status = RefingerprintRun.Status


class UpgradeError(Exception):
    """A method action that cannot be done (the message says why, in plain words)."""


def method_register(*, key: str) -> FingerprintMethod:
    try:
        spec = method_get(key)
    except KeyError as e:
        raise UpgradeError(str(e.args[0])) from None
    if spec.extractor_version not in EXTRACTORS:
        raise UpgradeError(
            Said(
                gettext_noop(
                    "%(key)s needs extractor %(extractor)s, which this code does not have"
                ),
                key=key,
                extractor=spec.extractor_version,
            )
        )
    method = services.methods_ensure()[key]
    if method.retired_at is not None:
        raise UpgradeError(Said(gettext_noop("%(key)s is retired"), key=key))
    return method


def _documents() -> QuerySet[Document]:
    """Documents a run goes over: the processed ones (with an extraction of any version)."""
    return Document.objects.filter(Exists(Extraction.objects.filter(document=OuterRef("pk"))))


def run_start(
    *, key: str, kind: str = Kind.FINGERPRINTS, actor: str = "", enqueue: bool = True
) -> RefingerprintRun:
    """Start a run, or resume the method's unfinished one (running or failed) from its
    cursor. With ``enqueue`` the work goes to the workers when the transaction commits."""
    method = method_register(key=key)
    with transaction.atomic():
        run = (
            RefingerprintRun.objects.select_for_update()
            .filter(method=method, kind=kind, status__in=(Status.RUNNING, Status.FAILED))
            .order_by("-id")
            .first()
        )
        if run is None:
            try:
                with transaction.atomic():
                    run = RefingerprintRun.objects.create(
                        method=method, kind=kind, total=_documents().count(), started_by=actor
                    )
            except IntegrityError:  # another start won the race: resume that one
                run = RefingerprintRun.objects.get(method=method, kind=kind, status=Status.RUNNING)
        elif run.status == Status.FAILED:
            run.status = Status.RUNNING
            run.message = ""
            run.save(update_fields=["status", "message", "updated_at"])
    if enqueue:
        dispatch.on_commit("refingerprint_run", run.pk)
    return run


def run_step(*, run_id: int, chunk: int | None = None) -> RefingerprintRun:
    """Do one chunk of a run (documents after the cursor, in id order) and move the
    cursor, in one transaction. A run with nothing left is marked done."""
    size = chunk or settings.REFINGERPRINT_CHUNK_SIZE
    with transaction.atomic():
        run = RefingerprintRun.objects.select_for_update().select_related("method").get(pk=run_id)
        if run.status != Status.RUNNING:
            return run
        todo = _documents().filter(pk__gt=run.last_document_id).order_by("pk")
        ids = list(todo.values_list("pk", flat=True)[:size])
        if not ids:
            run.status = Status.DONE
            run.total = run.done
            run.finished_at = timezone.now()
            run.save()
            return run
        if run.kind == Kind.FINGERPRINTS:
            documents = list(
                Document.objects.filter(pk__in=ids).select_related("batch", "site").order_by("pk")
            )
            version = method_get(run.method.key).extractor_version
            extractions = {
                version: services.documents_extract(documents=documents, version=version)
            }
            services.fingerprints_compute(
                documents=documents, extractions=extractions, methods=[run.method]
            )
        else:
            candidates.candidates_find(document_ids=ids, method_keys=[run.method.key])
        run.done += len(ids)
        run.last_document_id = ids[-1]
        run.total = run.done + todo.filter(pk__gt=ids[-1]).count()
        run.save()
    return run


def run_work(*, run_id: int, seconds: float | None = None) -> RefingerprintRun:
    """Chunks until the run is done or ``seconds`` (REFINGERPRINT_TASK_SECONDS) pass.
    An unexpected error marks the run failed (a restart resumes it) and is re-raised."""
    budget = settings.REFINGERPRINT_TASK_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + budget
    while True:
        try:
            run = run_step(run_id=run_id)
        except Exception as exc:
            RefingerprintRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
                status=Status.FAILED, message=f"{type(exc).__name__}: {exc}"[:2000]
            )
            raise
        if run.status != Status.RUNNING or time.monotonic() >= deadline:
            return run


def coverage(*, method: FingerprintMethod) -> dict[str, int]:
    """Processed documents, and how many of them lack the method's main-branch
    fingerprint."""
    docs = _documents()
    has = Fingerprint.objects.filter(document=OuterRef("pk"), method=method)
    return {"documents": docs.count(), "missing": docs.filter(~Exists(has)).count()}


def methods_overview() -> list[dict[str, Any]]:
    """Every known method with its coverage and its latest runs, for the methods page."""
    methods = services.methods_ensure()
    latest: dict[tuple[int, str], RefingerprintRun] = {}
    for run in RefingerprintRun.objects.order_by("id"):
        latest[(run.method_id, run.kind)] = run
    rows = []
    for key in sorted(methods, key=lambda k: (not methods[k].is_active, k)):
        method = methods[key]
        spec = METHODS.get(key)
        rows.append(
            {
                "method": method,
                "spec": spec,
                "coverage": coverage(method=method),
                "runs": [latest[(method.pk, k)] for k in Kind.values if (method.pk, k) in latest],
                "needs_extraction": spec is not None and spec.extractor_version not in EXTRACTORS,
            }
        )
    return rows


def switches_recent(*, limit: int = 50) -> QuerySet[MethodSwitch]:
    return MethodSwitch.objects.select_related("from_method", "to_method")[:limit]


def runs_active() -> list[RefingerprintRun]:
    return list(RefingerprintRun.objects.filter(status=Status.RUNNING).select_related("method"))


# --- switch and retire ---------------------------------------------------------------------


def method_switch(*, key: str, actor: str, reason: str) -> MethodSwitch:
    """Make ``key`` the active method, on the record, and search it for candidates."""
    if not reason.strip():
        raise UpgradeError(Said(gettext_noop("say why the method changes")))
    method = method_register(key=key)
    with transaction.atomic():
        rows = list(FingerprintMethod.objects.select_for_update().order_by("pk"))
        current = next((m for m in rows if m.is_active), None)
        if current is not None and current.pk == method.pk:
            raise UpgradeError(Said(gettext_noop("%(key)s is already the active method"), key=key))
        missing = coverage(method=method)["missing"]
        if missing:
            raise UpgradeError(
                Said(
                    gettext_noop(
                        "%(missing)s documents have no %(key)s fingerprint yet: compute the "
                        "method first"
                    ),
                    missing=missing,
                    key=key,
                )
            )
        FingerprintMethod.objects.filter(is_active=True).exclude(pk=method.pk).update(
            is_active=False
        )
        FingerprintMethod.objects.filter(pk=method.pk).update(is_active=True)
        record = MethodSwitch.objects.create(
            action=MethodSwitch.Action.SWITCH,
            from_method=current,
            to_method=method,
            actor=actor,
            reason=reason,
        )
        run_start(key=key, kind=Kind.CANDIDATES, actor=actor)
    return record


def method_retire(*, key: str, actor: str, reason: str) -> MethodSwitch:
    """Stop computing and searching a method. Its rows all stay."""
    if not reason.strip():
        raise UpgradeError(Said(gettext_noop("say why the method is retired")))
    with transaction.atomic():
        method = FingerprintMethod.objects.select_for_update().filter(key=key).first()
        if method is None:
            raise UpgradeError(Said(gettext_noop("unknown method %(key)s"), key=repr(key)))
        if method.is_active:
            raise UpgradeError(
                Said(
                    gettext_noop("%(key)s is the active method: switch to another one first"),
                    key=key,
                )
            )
        if method.retired_at is not None:
            raise UpgradeError(Said(gettext_noop("%(key)s is already retired"), key=key))
        method.retired_at = timezone.now()
        method.save(update_fields=["retired_at"])
        RefingerprintRun.objects.filter(method=method, status=Status.RUNNING).update(
            status=Status.FAILED, message="method retired"
        )
        return MethodSwitch.objects.create(
            action=MethodSwitch.Action.RETIRE, to_method=method, actor=actor, reason=reason
        )


# --- compare on the labelled pairs -------------------------------------------------------


@dataclass
class VerdictSummary:
    verdict: str
    pairs: int
    median: float | None
    mean: float | None
    within_threshold: float | None  # share at or under the doc type's candidate threshold


@dataclass
class MethodComparison:
    key: str
    is_active: bool
    pairs: int  # labelled document pairs with a distance under this method
    missing: int  # labelled pairs where a side has no usable fingerprint under it
    distances: dict[str, list[int]] = field(default_factory=dict)
    summary: list[VerdictSummary] = field(default_factory=list)
    reports: list[object] = field(default_factory=list)  # reviews.core.calibration_math.Report


def _labelled_document_pairs(
    doc_type: str,
) -> list[tuple[int, int, str, str, str, float]]:
    """(a, b, verdict, doc type, split, weight) per labelled document pair. Labels on
    pairs of several methods over the same two documents count together."""
    verdicts: dict[tuple[int, int], list[str]] = defaultdict(list)
    facts: dict[tuple[int, int], tuple[str, str, int]] = {}
    seen: set[int] = set()
    for r in cal.label_rows(doc_type=doc_type):
        # A label counts once for its documents, though each method's pair repeats it.
        if r.label_id not in seen:
            seen.add(r.label_id)
            verdicts[(r.a, r.b)].append(r.verdict)
        if (r.a, r.b) not in facts:
            facts[(r.a, r.b)] = (r.doc_type, r.split, r.pair_id)
    weights = cal.sample_weights(pair_ids={f[2] for f in facts.values()})
    out = []
    for (a, b), vs in sorted(verdicts.items()):
        verdict = cal.pair_verdict(vs)
        if verdict is None:
            continue
        dtype, split, pair_id = facts[(a, b)]
        out.append((a, b, verdict, dtype, split, weights.get(pair_id, 1.0)))
    return out


def methods_compare(*, keys: list[str], doc_type: str = "") -> list[MethodComparison]:
    """Each method's distances on the labelled document pairs, per verdict, and its
    calibration reports (one per doc type, or one over all when ``doc_type`` is "all")."""
    labelled = _labelled_document_pairs("" if doc_type == "all" else doc_type)
    ids = {d for a, b, *_ in labelled for d in (a, b)}
    out = []
    for key in keys:
        method = FingerprintMethod.objects.filter(key=key).first()
        if method is None:
            continue
        values = {
            d: to_unsigned64(v)
            for d, v in Fingerprint.objects.filter(
                method=method, simhash__isnull=False, document_id__in=ids
            ).values_list("document_id", "simhash")
            if v is not None
        }
        pairs: list[LabeledPair] = []
        within: dict[str, list[bool]] = defaultdict(list)
        missing = 0
        for a, b, verdict, dtype, split, weight in labelled:
            if a not in values or b not in values:
                missing += 1
                continue
            distance = hamming(values[a], values[b])
            within[verdict].append(distance <= thresholds.threshold_for(dtype))
            pairs.append(
                LabeledPair(
                    distance=distance,
                    verdict=verdict,
                    weight=weight,
                    doc_type="all" if doc_type == "all" else dtype,
                    method=key,
                    split=split,
                )
            )
        distances: dict[str, list[int]] = defaultdict(list)
        for p in pairs:
            distances[p.verdict].append(p.distance)
        comparison = MethodComparison(
            key=key,
            is_active=method.is_active,
            pairs=len(pairs),
            missing=missing,
            distances={v: sorted(distances[v]) for v in sorted(distances)},
            reports=list(cal._calibrate(pairs)),
        )
        for verdict, ds in comparison.distances.items():
            ordered = sorted(ds)
            n = len(ordered)
            median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2 if n else None
            comparison.summary.append(
                VerdictSummary(
                    verdict=verdict,
                    pairs=n,
                    median=median,
                    mean=sum(ordered) / n if n else None,
                    within_threshold=(sum(within[verdict]) / n) if n else None,
                )
            )
        out.append(comparison)
    return out


def compare_keys() -> list[str]:
    """The methods worth comparing: active first, then every other one with fingerprints
    and not retired."""
    active = thresholds.active_method_key()
    with_prints = set(
        FingerprintMethod.objects.filter(retired_at__isnull=True)
        .filter(Exists(Fingerprint.objects.filter(method=OuterRef("pk"))))
        .values_list("key", flat=True)
    )
    return [active] + sorted(with_prints - {active})
