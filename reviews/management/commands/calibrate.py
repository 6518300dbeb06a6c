from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from reviews import calibration
from reviews.core.calibration import Report, Row, ScoreRow


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


class Command(BaseCommand):
    help = (
        "Threshold sweep per doc type and method from the current labels: the calibration "
        "split chooses the thresholds, the holdout split checks them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--doc-type", default="")
        parser.add_argument("--method", default="")

    def handle(self, *args: object, **options: object) -> None:
        reports = calibration.calibration_reports(
            doc_type=str(options["doc_type"]), method=str(options["method"])
        )
        self.stdout.write(
            f"positive: {', '.join(settings.CALIBRATION_POSITIVE)}; negative: "
            f"{', '.join(settings.CALIBRATION_NEGATIVE)}; cost of a false merge "
            f"{settings.CALIBRATION_COST_FALSE_MERGE:g}, of a missed duplicate "
            f"{settings.CALIBRATION_COST_MISSED:g}"
        )
        if not reports:
            self.stdout.write("No labelled pairs yet: label some pairs in the desk first.")
            return
        for report in reports:
            self.stdout.write("")
            for line in report_text(report):
                self.stdout.write(line)
        for doc_type, rows in calibration.containment_sweeps(
            doc_type=str(options["doc_type"]), method=str(options["method"])
        ).items():
            self.stdout.write("")
            for line in containment_text(doc_type, rows):
                self.stdout.write(line)
