"""Labels back in: an all-or-nothing import (CSV / JSONL).

Import rules (chosen here, documented in docs/desk.md):

- Every row is validated first; any bad row fails the whole file with every problem
  listed by line number, and nothing is written. The write is one transaction.
- A row's pair is found by method and both URLs (either order); when several pairs
  match (re-fetches of one URL), the row's pair or document ids choose among them. A row
  without URLs names its pair by ``pair_id``.
- The annotator is the user of that name, or else an inactive user
  ``imported:<name>`` (created once, no usable password).
- Rows are appended oldest first (``labeled_at``, then ``label_id``); each supersedes
  the same annotator's current label on the pair, exactly as in the desk, so the
  superseded history and retractions come back as a chain. ``labeled_at`` is kept in
  ``Label.source_labeled_at``; ``created_at`` is the time of the import.
- A row identical to a label already stored (pair, annotator, verdict, reason code,
  reason, region, purpose, retraction, labeled_at) is skipped: importing the same file
  twice adds nothing.
- A "distinct" row writes the do-not-match constraint a desk label writes.
- A ``sampling_weight`` other than 1.0 and other than the pair's weight here is stored
  as a CalibrationSample (seed 0), so the estimates come out as in the source.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q

from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidatePair, DoNotMatch
from reviews.calibration.sweeps import band_of, sample_weights
from reviews.core import csvstream
from reviews.core.words import Said, gettext_noop
from reviews.labels.exports import FORMATS
from reviews.labels.labelling import supersede_previous
from reviews.models import CalibrationSample, Label, label_subject, label_subject_lock
from reviews.queue.pair_states import pair_states_refresh

IMPORTED_PREFIX = "imported:"


class LabelImportError(ValueError):
    """The file has bad rows; nothing was imported."""

    def __init__(self, problems: list[Said]) -> None:
        self.problems = problems
        self.bad_rows = len({p.params.get("line") for p in problems})
        super().__init__(f"{self.bad_rows} bad row(s); nothing imported")


@dataclass
class ImportResult:
    created: int = 0
    skipped: int = 0
    users_created: list[str] = field(default_factory=list)


@dataclass
class _Row:
    line: int
    pair: CandidatePair
    annotator: str
    verdict: str
    reason_code: str
    reason: str
    region: str
    purpose: str
    retraction: bool
    labeled_at: datetime
    extractor_version: str
    label_id: int
    sampling_weight: float


def _uncsv(value: str) -> str:
    return csvstream.cell_text(value)


def read_rows(stream: TextIO, fmt: str) -> Iterator[tuple[int, dict[str, Any] | Said]]:
    """(line number, row) per record; a row that cannot be read at all is a message."""
    if fmt == "csv":
        reader = csv.DictReader(stream)
        missing = {"verdict", "annotator"} - set(reader.fieldnames or ())
        if missing:
            yield (
                1,
                Said(
                    gettext_noop("header lacks column(s) %(columns)s"),
                    columns=", ".join(sorted(missing)),
                ),
            )
            return
        start = reader.line_num + 1
        for raw in reader:
            if None in raw:
                yield start, Said(gettext_noop("more cells than columns"))
            else:
                yield start, {k: _uncsv(v or "") for k, v in raw.items()}
            start = reader.line_num + 1
        return
    for n, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            yield n, Said(gettext_noop("not JSON: %(error)s"), error=e.msg)
            continue
        if not isinstance(data, dict):
            yield n, Said(gettext_noop("not a JSON object"))
            continue
        yield n, data


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    return "" if value is None else str(value).strip()


def _int(row: dict[str, Any], key: str) -> int | None:
    value = _text(row, key)
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            Said(
                gettext_noop("%(key)s is not a whole number: %(value)s"), key=key, value=repr(value)
            )
        ) from None


def _bool(row: dict[str, Any], key: str) -> bool:
    value = row.get(key)
    if isinstance(value, bool):
        return value
    text = _text(row, key).lower()
    if text in ("", "false", "0", "no"):
        return False
    if text in ("true", "1", "yes"):
        return True
    raise ValueError(
        Said(gettext_noop("%(key)s is not true or false: %(value)s"), key=key, value=repr(value))
    )


def _find_pair(row: dict[str, Any]) -> CandidatePair:
    method = _text(row, "method")
    a_url, b_url = _text(row, "a_url"), _text(row, "b_url")
    pair_id, a_id, b_id = _int(row, "pair_id"), _int(row, "a_id"), _int(row, "b_id")
    qs = CandidatePair.objects.select_related("method")
    if a_url and b_url:
        if not method:
            raise ValueError(Said(gettext_noop("method is required with URLs")))
        found = list(
            qs.filter(method__key=method).filter(
                Q(a__url=a_url, b__url=b_url) | Q(a__url=b_url, b__url=a_url)
            )[:50]
        )
        if len(found) > 1:
            narrowed = [p for p in found if p.id == pair_id] or [
                p for p in found if {p.a_id, p.b_id} == {a_id, b_id}
            ]
            found = narrowed if len(narrowed) == 1 else found
        if len(found) == 1:
            return found[0]
        if not found:
            raise ValueError(
                Said(
                    gettext_noop("no %(method)s pair of %(a_url)s and %(b_url)s"),
                    method=method,
                    a_url=a_url,
                    b_url=b_url,
                )
            )
        raise ValueError(
            Said(
                gettext_noop("%(count)s pairs of these URLs; pair_id or a_id/b_id must choose"),
                count=len(found),
            )
        )
    if pair_id is None:
        raise ValueError(Said(gettext_noop("no pair: give method, a_url and b_url, or pair_id")))
    pair = qs.filter(id=pair_id).first()
    if pair is None:
        raise ValueError(Said(gettext_noop("no pair %(pair_id)s"), pair_id=pair_id))
    if method and pair.method.key != method:
        raise ValueError(
            Said(
                gettext_noop("pair %(pair_id)s is of method %(method)s, not %(expected)s"),
                pair_id=pair_id,
                method=pair.method.key,
                expected=method,
            )
        )
    return pair


def _choice(row: dict[str, Any], key: str, choices: Any, default: str = "") -> str:
    value = _text(row, key) or default
    if value not in choices.values:
        raise ValueError(
            Said(
                gettext_noop("%(key)s %(value)s is not one of %(choices)s"),
                key=key,
                value=repr(value),
                choices=", ".join(choices.values),
            )
        )
    return value


def _at_line(line: int, problem: Said) -> Said:
    return Said(gettext_noop("line %(line)s: %(problem)s"), line=line, problem=problem)


def _validate(line: int, row: dict[str, Any]) -> tuple[_Row | None, list[Said]]:
    problems: list[Said] = []

    def check(fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except ValueError as e:
            said = e.args[0] if e.args and isinstance(e.args[0], Said) else Said(str(e))
            problems.append(_at_line(line, said))
            return None

    pair = check(_find_pair, row)
    verdict = check(_choice, row, "verdict", Label.Verdict)
    reason_code = check(_choice, row, "reason_code", Label.ReasonCode, Label.ReasonCode.OTHER)
    region = check(_choice, row, "region", Label.Region, Label.Region.OTHER)
    purpose = check(_choice, row, "purpose", Label.Purpose, Label.Purpose.REVIEW)
    retraction = check(_bool, row, "retraction")
    reason = _text(row, "reason")
    if not reason:
        problems.append(_at_line(line, Said(gettext_noop("a reason is required"))))
    annotator = _text(row, "annotator")
    if not annotator:
        problems.append(_at_line(line, Said(gettext_noop("an annotator is required"))))
    elif len(annotator) > 150 - len(IMPORTED_PREFIX):
        limit = 150 - len(IMPORTED_PREFIX)
        problems.append(
            _at_line(
                line,
                Said(gettext_noop("annotator name longer than %(limit)s characters"), limit=limit),
            )
        )
    labeled_at = None
    text = _text(row, "labeled_at")
    try:
        labeled_at = datetime.fromisoformat(text) if text else None
    except ValueError:
        problems.append(
            _at_line(
                line,
                Said(
                    gettext_noop("labeled_at is not an ISO 8601 time: %(value)s"),
                    value=repr(text),
                ),
            )
        )
    else:
        if labeled_at is None:
            problems.append(_at_line(line, Said(gettext_noop("labeled_at is required"))))
        elif labeled_at.tzinfo is None:
            problems.append(
                _at_line(line, Said(gettext_noop("labeled_at needs a time zone (Z for UTC)")))
            )
    label_id = check(_int, row, "label_id") or 0
    weight = 1.0
    if _text(row, "sampling_weight"):
        try:
            weight = float(_text(row, "sampling_weight"))
        except ValueError:
            weight = float("nan")
        if not (weight > 0 and weight < float("inf")):
            problems.append(
                _at_line(line, Said(gettext_noop("sampling_weight must be a positive number")))
            )
    if problems:
        return None, problems
    return (
        _Row(
            line=line,
            pair=pair,
            annotator=annotator,
            verdict=verdict,
            reason_code=reason_code,
            reason=reason,
            region=region,
            purpose=purpose,
            retraction=bool(retraction),
            labeled_at=labeled_at,  # type: ignore[arg-type]
            extractor_version=_text(row, "extractor_version") or EXTRACTOR_VERSION,
            label_id=label_id,
            sampling_weight=weight,
        ),
        [],
    )


def _user_for(name: str, result: ImportResult) -> User:
    user = User.objects.filter(username=name).first()
    if user is not None:
        return user
    imported = f"{IMPORTED_PREFIX}{name}"
    user, created = User.objects.get_or_create(username=imported, defaults={"is_active": False})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        result.users_created.append(imported)
    return user


def _already_stored(row: _Row, editor: User) -> bool:
    return (
        Label.objects.filter(
            pair=row.pair,
            editor=editor,
            verdict=row.verdict,
            reason_code=row.reason_code,
            reason=row.reason,
            region=row.region,
            purpose=row.purpose,
            retraction=row.retraction,
        )
        .filter(
            Q(source_labeled_at=row.labeled_at)
            | Q(source_labeled_at__isnull=True, created_at=row.labeled_at)
        )
        .exists()
    )


def labels_import(*, stream: TextIO, fmt: str) -> ImportResult:
    """Validate every row, then append them all in one transaction (see module rules).
    Raises LabelImportError listing every bad row, having written nothing."""
    if fmt not in FORMATS:
        raise ValueError(Said(gettext_noop("unknown format %(format)s"), format=repr(fmt)))
    rows: list[_Row] = []
    problems: list[Said] = []
    for line, raw in read_rows(stream, fmt):
        if isinstance(raw, Said):
            problems.append(_at_line(line, raw))
            continue
        row, bad = _validate(line, raw)
        problems.extend(bad)
        if row is not None:
            rows.append(row)
    if problems:
        raise LabelImportError(problems)
    result = ImportResult()
    rows.sort(key=lambda r: (r.labeled_at, r.label_id, r.line))
    refresh: set[int] = set()
    with transaction.atomic():
        users: dict[str, User] = {}
        for row in rows:
            editor = users.get(row.annotator) or _user_for(row.annotator, result)
            users[row.annotator] = editor
            if _already_stored(row, editor):
                result.skipped += 1
                continue
            label_subject_lock(label_subject(row.pair.a_id, row.pair.b_id))
            label = Label.objects.create(
                pair=row.pair,
                editor=editor,
                verdict=row.verdict,
                reason_code=row.reason_code,
                reason=row.reason,
                region=row.region,
                purpose=row.purpose,
                method_key=row.pair.method.key,
                extractor_version=row.extractor_version,
                retraction=row.retraction,
                source_labeled_at=row.labeled_at,
            )
            refresh.update(supersede_previous(label))
            if row.verdict == Label.Verdict.DISTINCT and not row.retraction:
                DoNotMatch.objects.get_or_create(
                    a_id=row.pair.a_id,
                    b_id=row.pair.b_id,
                    defaults={
                        "source": "import",
                        "reason": f"{row.reason_code}: {row.reason}"[:2000],
                        "actor": f"person:{editor.get_username()}",
                    },
                )
            result.created += 1
        _weights_restore(rows)
        pair_states_refresh(pair_ids=refresh | {row.pair.id for row in rows})
    return result


def _weights_restore(rows: list[_Row]) -> None:
    """A pair sampled in the other install comes back with its sampling weight (a
    CalibrationSample with seed 0), unless its latest weight here is already that."""
    wanted = {row.pair.id: (row.pair, row.sampling_weight) for row in rows}
    have = sample_weights(pair_ids=set(wanted))
    CalibrationSample.objects.bulk_create(
        CalibrationSample(pair=pair, weight=weight, seed=0, band=band_of(pair.distance))
        for pair, weight in wanted.values()
        if weight != 1.0 and weight != have.get(pair.id, 1.0)
    )


def labels_import_text(text: str, fmt: str) -> ImportResult:
    return labels_import(stream=io.StringIO(text), fmt=fmt)
