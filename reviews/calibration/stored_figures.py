"""The calibration page's figures, computed ahead and stored (CalibrationFigures), so
that the page reads a few rows instead of sweeping every label, and regrouping every
candidate pair, on each request.

Rules chosen here:

- **What is stored.** Everything the page derives from the labels: per doc type and
  method, the distance sweep (report and histogram counts) and one action report per
  pair score; the cosine sweep per doc type and method, and per doc type over every
  method pooled (method blank: what the unfiltered page shows). A filtered page shows the
  rows of its filter, which are the rows the from-scratch computation gives for it: the
  sweeps and action reports group by (doc type, method) whatever the filter. The
  language column is blank (every language): the page does not break down by language.
- **When.** The beat task ``calibration-figures`` recomputes every row
  (CALIBRATION_FIGURES_EVERY_SECONDS), as does ``manage.py calibrate --recompute``; a
  recompute replaces the rows in one transaction, so a reader sees the old set or the
  new one, never a mix.
- **Freshness.** A stamp row keeps the time, the settings the figures were computed
  under and the newest label, adjudication and sample ids then; the page says when the
  figures were computed and how many labels were stored since. With no stamp, or with
  settings changed since (other classes, costs, thresholds), the page computes for the
  request instead (small installs before the first beat run).
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import reduce
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from reviews.calibration import action_errors, sweeps
from reviews.calibration.action_errors import PAIR_SCORES
from reviews.calibration.sweeps import CosineSweep, ReportView
from reviews.core.actions_math import ActionRow, HiddenCount, LabelledLink, WrongGroup
from reviews.core.calibration_math import (
    SPLITS,
    LabeledPair,
    Recommendation,
    Report,
    Row,
    ScoreRow,
    SplitRow,
)
from reviews.core.scores import COSINE, SIMHASH_DISTANCE, Score
from reviews.core.words import Said
from reviews.models import Adjudication, CalibrationFigures, CalibrationSample, Label

SWEEP = "sweep"
ACTIONS = "actions"
STAMP = "stamp"
ALL_LANGUAGES = ""
# The advisory lock key of a recompute (any constant unique to it).
RECOMPUTE_LOCK = 0x6361_6C69_6272_6174  # "calibrat"
# The scores of the stored figures, in display order: the SimHash distance, the token-set
# ratio, then every channel's score the action sweep regroups by
# (reviews.calibration.action_errors).
SCORES: dict[str, Score] = {s.name: s for s, _ in PAIR_SCORES}


# What a request reads: the page's summary needs the distance sweeps only; a section
# the sweeps, the action reports or the cosine sweeps.
PARTS = frozenset({"sweep", "actions", "cosine"})


@dataclass(frozen=True)
class Figures:
    """What the page shows that comes from the labels, for one filter."""

    views: list[ReportView]
    actions: list[action_errors.ActionReport]
    cosine: list[CosineSweep]
    computed_at: datetime | None  # None: computed for this request
    labels_since: int  # labels stored after the figures were computed
    # (doc type, method) of the reports that have errors per action (read without them).
    with_actions: frozenset[tuple[str, str]] = frozenset()


def settings_key() -> str:
    """A digest of the settings the figures depend on: stored figures computed under
    other settings are not shown."""
    names = sorted(
        n
        for n in dir(settings)
        if n.startswith("CALIBRATION_") and n != "CALIBRATION_FIGURES_EVERY_SECONDS"
    )
    names += [
        "LABEL_HOLDOUT_SHARE",
        "GROUP_RULE",
        "REPRESENTATIVE_POLICY",
        "SEMANTIC_THRESHOLDS",
        "MINHASH_CHANNEL",
        "MINHASH_THRESHOLD",
        "SIMILARITY_FLOORS",
        "CANDIDATE_THRESHOLDS",
    ]
    values = {n: getattr(settings, n, None) for n in names}
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _watermark() -> dict[str, int]:
    def newest(model: Any) -> int:
        return int(model.objects.aggregate(m=Max("id"))["m"] or 0)

    return {
        "label": newest(Label),
        "adjudication": newest(Adjudication),
        "sample": newest(CalibrationSample),
    }


# --- computing ----------------------------------------------------------------------


def _histogram_counts(pairs: list[LabeledPair], report: Report) -> dict[str, dict[str, int]]:
    """The histogram's input (distances per verdict) as counts per distance."""
    return {
        v: {str(d): n for d, n in sorted(Counter(ds).items())}
        for v, ds in sweeps.histogram_input(pairs, report).items()
    }


def _histogram_lists(counts: dict[str, dict[str, int]]) -> dict[str, list[int]]:
    # Sorted again: PostgreSQL's jsonb keeps no key order (the chart's series order).
    return {
        v: [d for d, n in sorted((int(d), n) for d, n in counts[v].items()) for _ in range(n)]
        for v in sorted(counts)
    }


def _action_json(report: action_errors.ActionReport) -> dict[str, Any]:
    return {
        "doc_type": report.doc_type,
        "method": report.method,
        "score": report.score.name,
        "rule": report.rule,
        "rows": [asdict(r) for r in report.rows],
        "documents": {str(k): asdict(v) for k, v in report.documents.items()},
    }


# A sentence of the core (a Said) is stored with its template and values, so the page
# shows stored figures in the reader's language as it shows fresh ones.
_SAID = "_said"


def said_stored(value: Any) -> Any:
    """`value` with every Said in it as {"_said": template, "params": {…}} (JSON)."""
    if isinstance(value, Said):
        return {_SAID: value.template, "params": said_stored(value.params)}
    if isinstance(value, dict):
        return {k: said_stored(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [said_stored(v) for v in value]
    return value


def said_read(value: Any) -> Any:
    """What said_stored stored, with its Saids back (rows stored before: unchanged)."""
    if isinstance(value, dict):
        if _SAID in value and set(value) == {_SAID, "params"}:
            return Said(value[_SAID], **said_read(value["params"]))
        return {k: said_read(v) for k, v in value.items()}
    if isinstance(value, list):
        return [said_read(v) for v in value]
    return value


def figures_compute() -> list[CalibrationFigures]:
    """Every row the page reads, from scratch (not saved)."""
    now = timezone.now()
    # The watermark is read before the labels: a label stored meanwhile counts as
    # "stored since" (perhaps also as counted), never as counted and not stored since.
    watermark = _watermark()
    labelled = sweeps.labeled_pairs()
    by_key: dict[tuple[str, str], list[LabeledPair]] = defaultdict(list)
    for p in labelled:
        by_key[(p.doc_type, p.method)].append(p)
    rows: list[CalibrationFigures] = []

    def add(kind: str, score: str, doc_type: str, method: str, payload: dict[str, Any]) -> None:
        rows.append(
            CalibrationFigures(
                kind=kind,
                score=score,
                doc_type=doc_type,
                method_key=method,
                language=ALL_LANGUAGES,
                payload=said_stored(payload),
                computed_at=now,
            )
        )

    for report in sweeps.reports_of(labelled):
        payload = {
            "report": asdict(report),
            "histogram": _histogram_counts(by_key[(report.doc_type, report.method)], report),
        }
        add(SWEEP, SIMHASH_DISTANCE.name, report.doc_type, report.method, payload)
    for a in action_errors.action_reports(labelled=labelled):
        add(ACTIONS, a.score.name, a.doc_type, a.method, _action_json(a))
    for sweep in sweeps.cosine_sweeps(labelled=labelled):
        add(SWEEP, COSINE.name, sweep.doc_type, "", asdict(sweep))
    for method in sorted({m for _, m in by_key}):
        subset = [p for p in labelled if p.method == method]
        for sweep in sweeps.cosine_sweeps(labelled=subset):
            add(SWEEP, COSINE.name, sweep.doc_type, method, asdict(sweep))
    stamp = {"settings": settings_key(), "watermark": watermark, "labelled": len(labelled)}
    add(STAMP, "", "", "", stamp)
    return rows


@transaction.atomic
def figures_recompute() -> int:
    """Recompute and store every row (idempotent: the rows are replaced); the number of
    rows stored."""
    if connection.vendor == "postgresql":
        # Two recomputes at once (a beat run and the command) take turns: otherwise the
        # second one's inserts would meet the first one's rows.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [RECOMPUTE_LOCK])
    rows = figures_compute()
    CalibrationFigures.objects.all().delete()
    CalibrationFigures.objects.bulk_create(rows)
    return len(rows)


# --- reading ------------------------------------------------------------------------


def _row(d: dict[str, Any]) -> Row:
    return Row(**d)


def report_from(d: dict[str, Any]) -> Report:
    recommendations = [Recommendation(**r) for r in d["recommendations"]]
    holdout = d["holdout"]
    # In the order the core makes them: PostgreSQL's jsonb keeps no key order, and the
    # page lists the counts as they come.
    return Report(
        doc_type=d["doc_type"],
        method=d["method"],
        rows=[_row(r) for r in d["rows"]],
        recommendations=recommendations,
        holdout={
            r.policy: _row(holdout[r.policy]) if holdout.get(r.policy) is not None else None
            for r in recommendations
        },
        counts={
            split: {cls: d["counts"][split][cls] for cls in ("positive", "negative")}
            for split in SPLITS
            if split in d["counts"]
        },
        warnings=list(d["warnings"]),
    )


def _link(d: dict[str, Any]) -> LabelledLink:
    return LabelledLink(**d)


def _group(d: dict[str, Any]) -> WrongGroup:
    return WrongGroup(
        members=tuple(d["members"]),
        representative=d["representative"],
        distinct_pairs=tuple(_link(x) for x in d["distinct_pairs"]),
        hidden_wrongly=tuple(d["hidden_wrongly"]),
        top_priority_hidden=d["top_priority_hidden"],
    )


def _action_row(d: dict[str, Any]) -> ActionRow:
    fields = dict(d)
    fields["hidden_by"] = [HiddenCount(**h) for h in d["hidden_by"]]
    fields["worst"] = [_group(g) for g in d["worst"]]
    return ActionRow(**fields)


def action_report_from(d: dict[str, Any]) -> action_errors.ActionReport | None:
    score = SCORES.get(d["score"])
    if score is None:
        return None
    return action_errors.ActionReport(
        doc_type=d["doc_type"],
        method=d["method"],
        score=score,
        rule=d["rule"],
        rows=[_action_row(r) for r in d["rows"]],
        documents={int(k): action_errors.DocLink(**v) for k, v in d["documents"].items()},
    )


def cosine_from(d: dict[str, Any]) -> CosineSweep:
    return CosineSweep(
        doc_type=d["doc_type"],
        configured=d["configured"],
        rows=[
            SplitRow(r["threshold"], ScoreRow(**r["calibration"]), ScoreRow(**r["holdout"]))
            for r in d["rows"]
        ],
        counted=d["counted"],
        without_cosine=d["without_cosine"],
    )


def _views_of(reports: list[Report], histograms: list[dict[str, list[int]]]) -> list[ReportView]:
    return [sweeps.report_view(r, h) for r, h in zip(reports, histograms, strict=True)]


def figures_stamp() -> datetime | None:
    """When the stored figures were computed, or None when none are usable (no
    recompute yet, or one under other settings): what a rendered section's cache key
    names."""
    stamp = CalibrationFigures.objects.filter(kind=STAMP).first()
    if stamp is None or stamp.payload.get("settings") != settings_key():
        return None
    return stamp.computed_at


def figures_stored(
    *, doc_type: str = "", method: str = "", parts: frozenset[str] = PARTS
) -> Figures | None:
    """The stored figures of a filter (only the `parts` asked for are read and parsed);
    None when nothing usable is stored (no recompute yet, or one under other settings)."""
    stamp = CalibrationFigures.objects.filter(kind=STAMP).first()
    if stamp is None or stamp.payload.get("settings") != settings_key():
        return None
    rows = CalibrationFigures.objects.exclude(kind=STAMP).filter(language=ALL_LANGUAGES)
    if doc_type:
        rows = rows.filter(doc_type=doc_type)
    with_actions = frozenset(
        rows.filter(kind=ACTIONS).values_list("doc_type", "method_key").distinct()
    )
    wanted = []
    if "sweep" in parts:
        wanted.append(Q(kind=SWEEP, score=SIMHASH_DISTANCE.name))
    if "cosine" in parts:
        wanted.append(Q(kind=SWEEP, score=COSINE.name))
    if "actions" in parts:
        wanted.append(Q(kind=ACTIONS))
    rows = rows.filter(reduce(operator.or_, wanted, Q(pk__in=[])))
    reports: list[Report] = []
    histograms: list[dict[str, list[int]]] = []
    cosine: list[CosineSweep] = []
    score_order = list(SCORES)
    action_rows = []
    reports_of_actions: list[action_errors.ActionReport] = []
    for row in rows.order_by("doc_type", "method_key", "id"):
        row.payload = said_read(row.payload)
        if row.kind == SWEEP and row.score == SIMHASH_DISTANCE.name:
            if not method or row.method_key == method:
                reports.append(report_from(row.payload["report"]))
                histograms.append(_histogram_lists(row.payload["histogram"]))
        elif row.kind == SWEEP and row.score == COSINE.name:
            if row.method_key == method:  # blank: every method pooled
                cosine.append(cosine_from(row.payload))
        elif row.kind == ACTIONS and (not method or row.method_key == method):
            action_rows.append(row)
    for row in sorted(
        action_rows,
        key=lambda r: (r.doc_type, r.method_key, score_order.index(r.score)),
    ):
        a = action_report_from(row.payload)
        if a is not None:
            reports_of_actions.append(a)
    newest = int(stamp.payload.get("watermark", {}).get("label", 0))
    return Figures(
        views=_views_of(reports, histograms),
        actions=reports_of_actions,
        cosine=cosine,
        computed_at=stamp.computed_at,
        labels_since=Label.objects.filter(id__gt=newest).count(),
        with_actions=with_actions,
    )


def figures_fresh(
    *, doc_type: str = "", method: str = "", parts: frozenset[str] = PARTS
) -> Figures:
    """The figures of a filter computed for this call, from scratch (the `parts` asked
    for; the summary's list of reports with errors per action is every report's)."""
    labelled = sweeps.labeled_pairs(doc_type=doc_type, method=method)
    views = sweeps.report_views(labelled=labelled)
    return Figures(
        views=views,
        actions=action_errors.action_reports(labelled=labelled) if "actions" in parts else [],
        cosine=sweeps.cosine_sweeps(labelled=labelled) if "cosine" in parts else [],
        computed_at=None,
        labels_since=0,
        with_actions=frozenset((v.report.doc_type, v.report.method) for v in views),
    )


def figures(*, doc_type: str = "", method: str = "", parts: frozenset[str] = PARTS) -> Figures:
    """What the page shows: the stored figures, or computed for this call when none are
    usable."""
    stored = figures_stored(doc_type=doc_type, method=method, parts=parts)
    if stored is not None:
        return stored
    return figures_fresh(doc_type=doc_type, method=method, parts=parts)
