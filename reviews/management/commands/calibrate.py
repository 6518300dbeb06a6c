import json
from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviews.calibration import action_errors, prelabel, stored_figures, sweeps
from reviews.core.calibration_math import Report, Row, ScoreRow


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _n(value: float) -> str:
    return f"{value:g}"


def report_text(report: Report) -> list[str]:
    """The report as plain text lines (the calibrate command prints them)."""
    lines = [
        f"== doc type {report.doc_type} · method {report.method}",
        "labelled pairs: "
        + "; ".join(
            f"{split} {c['positive']} positive, {c['negative']} negative"
            for split, c in report.counts.items()
        ),
        f"{'t':>3} {'TP':>8} {'FP':>8} {'FN':>8} {'TN':>8} {'precision':>9} "
        f"{'recall':>7} {'F1':>6} {'cost':>9}",
    ]
    for r in report.rows:
        lines.append(
            f"{r.threshold:>3} {_n(r.tp):>8} {_n(r.fp):>8} {_n(r.fn):>8} {_n(r.tn):>8} "
            f"{_f(r.precision):>9} {_f(r.recall):>7} {_f(r.f1):>6} {_n(r.cost):>9}"
        )
    for rec in report.recommendations:
        at = "none" if rec.threshold is None else str(rec.threshold)
        lines.append(f"recommended for {rec.policy}: {at} ({rec.reason})")
        held: Row | None = report.holdout.get(rec.policy)
        if held is not None:
            lines.append(
                f"  holdout at {held.threshold}: precision {_f(held.precision)}, "
                f"recall {_f(held.recall)}, F1 {_f(held.f1)}, cost {_n(held.cost)} "
                f"(TP {_n(held.tp)} FP {_n(held.fp)} FN {_n(held.fn)} TN {_n(held.tn)})"
            )
    lines.extend(f"warning: {w}" for w in report.warnings)
    return lines


def containment_text(doc_type: str, rows: list[ScoreRow]) -> list[str]:
    """The passage channel's containment sweep (higher is closer) as text lines."""
    lines = [
        f"== doc type {doc_type} · passage containment (same when ≥ c), calibration split",
        f"{'c':>5} {'TP':>8} {'FP':>8} {'FN':>8} {'TN':>8} {'precision':>9} "
        f"{'recall':>7} {'F1':>6} {'cost':>9}",
    ]
    for r in rows:
        lines.append(
            f"{r.threshold:>5.2f} {_n(r.tp):>8} {_n(r.fp):>8} {_n(r.fn):>8} {_n(r.tn):>8} "
            f"{_f(r.precision):>9} {_f(r.recall):>7} {_f(r.f1):>6} {_n(r.cost):>9}"
        )
    return lines


def cosine_text(sweep: sweeps.CosineSweep) -> list[str]:
    """The cosine sweep (higher is closer) on both splits as text lines."""
    lines = [
        f"== doc type {sweep.doc_type} · embedding cosine (same when ≥ c); "
        f"{sweep.counted} labelled pairs with a cosine, {sweep.without_cosine} without; "
        f"the semantic channel nominates at {sweep.configured:g} (*)",
        f"{'c':>6} {'cal P':>6} {'cal R':>6} {'cal cost':>9} {'hold P':>6} {'hold R':>6}",
    ]
    for r in sweep.rows:
        mark = " *" if r.threshold == sweep.configured else ""
        c, h = r.calibration, r.holdout
        lines.append(
            f"{r.threshold:>6.3f} {_f(c.precision):>6} {_f(c.recall):>6} {_n(c.cost):>9} "
            f"{_f(h.precision):>6} {_f(h.recall):>6}{mark}"
        )
    return lines


def _t(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


def actions_text(report: action_errors.ActionReport) -> list[str]:
    """The action-level errors as plain text lines."""
    lines = [
        f"-- errors per action · {report.score.label} · rule {report.rule}",
        f"  {'t':>4} {'groups':>6} {'wrong':>5} {'largest':>7} {'hidden':>6} "
        f"{'pair FP':>7} {'missed':>6} {'cost/action':>11} {'cost/pair':>9}",
    ]
    for r in report.rows:
        lines.append(
            f"  {r.threshold:>4g} {r.groups:>6} {r.wrong_groups:>5} {r.largest_wrong_group:>7} "
            f"{r.hidden_wrongly:>6} {r.pair_false_merges:>7} {r.missed_pairs:>6} "
            f"{r.cost_actions:>11g} {r.cost_pairs:>9g}"
        )
    last = next((r for r in reversed(report.rows) if r.worst), None)
    if last is not None:
        lines.append(f"worst groups at threshold {last.threshold:g}:")

        def url(d: int) -> str:
            # URLs, not ids: the same crawl gets other ids in another install.
            link = report.documents.get(d)
            return link.url if link else f"document {d}"

        for g in last.worst:
            lines.append(
                f"  - {g.size} documents, representative {url(g.representative)}, "
                f"{len(g.distinct_pairs)} distinct-labelled pairs inside, hidden wrongly: "
                f"{', '.join(url(d) for d in g.hidden_wrongly) or 'none'}"
            )
    return lines


def prelabel_text(view: prelabel.PrelabelView) -> list[str]:
    d, s = view.distribution, view.starting
    return [
        f"== before labels · doc type {d.doc_type} · method {d.method_key} · {d.score.label}",
        f"random pairs: {d.sample_pairs} from {d.documents} documents on {d.sites} sites "
        f"(site-stratified); candidate pairs: {d.candidate_pairs}",
        f"starting threshold: {_t(s.threshold)} [{s.source}] ({s.reason})",
        f"method: {d.suggestion.method}",
    ]


def _action_json(report: action_errors.ActionReport) -> dict[str, Any]:
    def doc(d: int) -> dict[str, Any]:
        link = report.documents.get(d)
        return asdict(link) if link else {"id": d}

    rows = []
    for r in report.rows:
        row = asdict(r)
        row["worst"] = [
            {
                "size": g.size,
                "representative": doc(g.representative),
                "members": [doc(m) for m in g.members],
                "hidden_wrongly": [doc(m) for m in g.hidden_wrongly],
                "distinct_pairs": [asdict(x) for x in g.distinct_pairs],
            }
            for g in r.worst
        ]
        rows.append(row)
    return {
        "score": report.score.name,
        "closer": report.score.closer,
        "rule": report.rule,
        "rows": rows,
    }


def _prelabel_json(view: prelabel.PrelabelView) -> dict[str, Any]:
    d, s = view.distribution, view.starting
    return {
        "doc_type": d.doc_type,
        "method": d.method_key,
        "score": d.score.name,
        "closer": d.score.closer,
        "documents": d.documents,
        "sites": d.sites,
        "sample_pairs": d.sample_pairs,
        "candidate_pairs": d.candidate_pairs,
        "bins": [d.score.bin_label(i) for i in range(d.score.bins)],
        "sample_counts": d.sample_counts,
        "candidate_counts": d.candidate_counts,
        "suggestion": {
            "threshold": d.suggestion.threshold,
            "method": d.suggestion.method,
            "reason": d.suggestion.reason,
            "label": "unlabelled",
        },
        "starting": asdict(s),
        "computed_at": d.computed_at.isoformat() if d.computed_at else None,
    }


def calibration_json(*, doc_type: str = "", method: str = "") -> dict[str, Any]:
    """Everything the calibration page shows, as JSON-ready data."""
    reports = sweeps.calibration_reports(doc_type=doc_type, method=method)
    by_key: dict[tuple[str, str], list[action_errors.ActionReport]] = {}
    for a in action_errors.action_reports(doc_type=doc_type, method=method):
        by_key.setdefault((a.doc_type, a.method), []).append(a)
    views = prelabel.prelabel_views(
        prelabel.distributions(doc_type=doc_type, method=method), reports
    )
    return {
        "settings": {
            "positive": list(settings.CALIBRATION_POSITIVE),
            "negative": list(settings.CALIBRATION_NEGATIVE),
            "cost_false_merge": settings.CALIBRATION_COST_FALSE_MERGE,
            "cost_missed": settings.CALIBRATION_COST_MISSED,
            "min_per_class": settings.CALIBRATION_MIN_PER_CLASS,
            "group_rule": settings.GROUP_RULE,
            "representative_policy": list(settings.REPRESENTATIVE_POLICY),
        },
        "reports": [
            {
                **asdict(r),
                "actions": [_action_json(a) for a in by_key.get((r.doc_type, r.method), [])],
            }
            for r in reports
        ],
        "prelabel": [_prelabel_json(v) for v in views],
        "containment": {
            dt: [asdict(r) for r in rows]
            for dt, rows in sweeps.containment_sweeps(doc_type=doc_type, method=method).items()
        },
        "cosine": [asdict(c) for c in sweeps.cosine_sweeps(doc_type=doc_type, method=method)],
    }


class Command(BaseCommand):
    help = (
        "Threshold sweep per doc type and method from the current labels: the calibration "
        "split chooses the thresholds, the holdout split checks them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--doc-type", default="")
        parser.add_argument("--method", default="")
        parser.add_argument("--format", default="text", help="text (default) or json")
        parser.add_argument(
            "--recompute",
            action="store_true",
            help=(
                "first recompute and store the pre-label distributions and the calibration "
                "page's figures (as the beat tasks do)"
            ),
        )

    def handle(self, *args: object, **options: object) -> None:
        doc_type, method = str(options["doc_type"]), str(options["method"])
        if options["format"] not in {"text", "json"}:
            raise CommandError("--format: text or json")
        if options["recompute"]:
            stored = prelabel.prelabel_compute()
            figures = stored_figures.figures_recompute()
            if options["format"] == "text":
                self.stdout.write(f"stored {stored} pre-label distributions")
                self.stdout.write(f"stored {figures} rows of the calibration page's figures")
        if options["format"] == "json":
            payload = calibration_json(doc_type=doc_type, method=method)
            self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
            return
        reports = sweeps.calibration_reports(doc_type=doc_type, method=method)
        views = prelabel.prelabel_views(
            prelabel.distributions(doc_type=doc_type, method=method), reports
        )
        self.stdout.write(
            f"positive: {', '.join(settings.CALIBRATION_POSITIVE)}; negative: "
            f"{', '.join(settings.CALIBRATION_NEGATIVE)}; cost of a false merge "
            f"{settings.CALIBRATION_COST_FALSE_MERGE:g}, of a missed duplicate "
            f"{settings.CALIBRATION_COST_MISSED:g}"
        )
        for view in views:
            self.stdout.write("")
            for line in prelabel_text(view):
                self.stdout.write(line)
        if not reports:
            self.stdout.write("")
            self.stdout.write("No labelled pairs yet: label some pairs in the desk first.")
            return
        by_key: dict[tuple[str, str], list[action_errors.ActionReport]] = {}
        for a in action_errors.action_reports(doc_type=doc_type, method=method):
            by_key.setdefault((a.doc_type, a.method), []).append(a)
        for report in reports:
            self.stdout.write("")
            for line in report_text(report):
                self.stdout.write(line)
            for a in by_key.get((report.doc_type, report.method), []):
                for line in actions_text(a):
                    self.stdout.write(line)
        for doc_type, rows in sweeps.containment_sweeps(
            doc_type=str(options["doc_type"]), method=str(options["method"])
        ).items():
            self.stdout.write("")
            for line in containment_text(doc_type, rows):
                self.stdout.write(line)
        for sweep in sweeps.cosine_sweeps(
            doc_type=str(options["doc_type"]), method=str(options["method"])
        ):
            self.stdout.write("")
            for line in cosine_text(sweep):
                self.stdout.write(line)
