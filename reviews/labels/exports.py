"""Labels out: CSV / JSONL export, streamed.

Labels are append-only, so the export is the whole history: superseded labels and
retractions are rows of their own, marked, and a row is "disputed" when another
editor's current label on the pair has another verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet, Value
from django.db.models.functions import Coalesce

from ingest.core import channels
from ingest.models import CandidatePair
from reviews.calibration.sweeps import latest_weight_subquery, pair_split
from reviews.core import csvstream
from reviews.core.calibration_math import SPLITS
from reviews.core.words import Said, gettext_noop
from reviews.models import Label

# Every channel's column, the semantic one included while it is off (then 0).
CHANNEL_COLUMNS = tuple(f"channel_{name}" for name in channels.BITS)


COLUMNS = (
    "pair_id",
    "a_id",
    "b_id",
    "a_url",
    "b_url",
    "a_site",
    "b_site",
    "a_doc_type",
    "b_doc_type",
    "doc_type",
    "method",
    "extractor_version",
    "distance",
    "full_distance",
    "ratio",
    "token_set_ratio",
    "containment",
    # One column per candidate channel (1 when it nominated the pair), then the passage
    # and semantic channels' scores (computed for every pair; the cosine is empty while
    # either side has no embedding).
    *CHANNEL_COLUMNS,
    "a_in_b",
    "b_in_a",
    "shared_passages",
    "cosine",
    "numbers_differ",
    "ids_differ",
    "title_differs",
    "label_id",
    "verdict",
    "reason_code",
    "reason",
    "region",
    "purpose",
    "annotator",
    "labeled_at",
    "superseded",
    "superseded_by",
    "retraction",
    "disputed",
    "split",
    "sampling_weight",
)


FORMATS = ("csv", "jsonl")


CHUNK_SIZE = 1000


# Text columns: a cell a spreadsheet would run as a formula gets a leading apostrophe
# (reviews.core.csvstream), removed again on import.
_TEXT_COLUMNS = ("a_url", "b_url", "a_site", "b_site", "reason", "annotator")


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def labels_for_export(*, since: date | datetime | None = None, method: str = "") -> QuerySet[Label]:
    # Labels are about two documents (their subject), whichever method's pair they
    # were given on: disputes and the method filter read the subject.
    current_other = Label.objects.filter(
        doc_low=OuterRef("doc_low"),
        doc_high=OuterRef("doc_high"),
        superseded_by__isnull=True,
        retraction=False,
    ).exclude(editor=OuterRef("editor"))
    qs = (
        Label.objects.select_related("pair__method", "pair__a__site", "pair__b__site", "editor")
        .annotate(
            is_disputed=Exists(current_other.exclude(verdict=OuterRef("verdict"))),
            sampling_weight=Coalesce(latest_weight_subquery(), Value(1.0)),
            labeled_at=Coalesce("source_labeled_at", "created_at"),
        )
        .order_by("id")
    )
    if since is not None:
        if not isinstance(since, datetime):
            since = datetime(since.year, since.month, since.day, tzinfo=UTC)
        qs = qs.filter(labeled_at__gte=since)
    if method:
        qs = qs.filter(
            Exists(
                CandidatePair.objects.filter(
                    method__key=method, a_id=OuterRef("doc_low"), b_id=OuterRef("doc_high")
                )
            )
        )
    return qs


def label_rows(
    *, split: str = "", since: date | datetime | None = None, method: str = ""
) -> Iterator[dict[str, Any]]:
    """One dict per label, oldest first, read in chunks (memory does not grow with the
    number of labels)."""
    if split and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}")
    for label in labels_for_export(since=since, method=method).iterator(chunk_size=CHUNK_SIZE):
        pair = label.pair
        if method and pair.method.key != method:
            # A label given under another method counts for this method's pair of the
            # same documents: the row carries that pair's facts.
            pair = (
                CandidatePair.objects.select_related("method", "a__site", "b__site")
                .filter(method__key=method, a_id=label.doc_low, b_id=label.doc_high)
                .get()
            )
        the_split = pair_split(pair)
        if split and the_split != split:
            continue
        yield {
            "pair_id": pair.id,
            "a_id": pair.a_id,
            "b_id": pair.b_id,
            "a_url": pair.a.url,
            "b_url": pair.b.url,
            "a_site": pair.a.site.host,
            "b_site": pair.b.site.host,
            "a_doc_type": pair.a.doc_type,
            "b_doc_type": pair.b.doc_type,
            "doc_type": pair.doc_type,
            "method": pair.method.key,
            "extractor_version": label.extractor_version,
            "distance": pair.distance,
            "full_distance": pair.full_distance,
            "ratio": pair.ratio,
            "token_set_ratio": pair.token_set_ratio,
            "containment": pair.containment,
            **{
                f"channel_{name}": int(bool(pair.channels & bit))
                for name, bit in channels.BITS.items()
            },
            "a_in_b": pair.a_in_b,
            "b_in_a": pair.b_in_a,
            "shared_passages": pair.shared_passages,
            "cosine": pair.cosine,
            "numbers_differ": pair.numbers_differ,
            "ids_differ": pair.ids_differ,
            "title_differs": pair.title_differs,
            "label_id": label.pk,
            "verdict": label.verdict,
            "reason_code": label.reason_code,
            "reason": label.reason,
            "region": label.region,
            "purpose": label.purpose,
            "annotator": label.editor.get_username(),
            "labeled_at": iso_utc(label.labeled_at),  # type: ignore[attr-defined]
            "superseded": label.superseded_by_id is not None,
            "superseded_by": label.superseded_by_id,
            "retraction": label.retraction,
            "disputed": label.is_disputed,  # type: ignore[attr-defined]
            "split": the_split,
            "sampling_weight": float(label.sampling_weight),  # type: ignore[attr-defined]
        }


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def csv_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    return csvstream.csv_lines(
        COLUMNS,
        ([_csv_text(row[k]) for k in COLUMNS] for row in rows),
        lineterminator="\n",
        text_columns=_TEXT_COLUMNS,
    )


def jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


def export_lines(
    *,
    fmt: str,
    split: str = "",
    since: date | datetime | None = None,
    method: str = "",
    bom: bool = False,
) -> Iterator[str]:
    """The export as a stream of text lines; a CSV with `bom` starts with the UTF-8 byte
    order mark a spreadsheet needs to read it as UTF-8 (JSONL never has one)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    rows = label_rows(split=split, since=since, method=method)
    if fmt != "csv":
        return jsonl_lines(rows)
    return csvstream.with_bom(csv_lines(rows)) if bom else csv_lines(rows)


def format_for(path: str, fmt: str = "") -> str:
    if fmt:
        return fmt
    lower = path.lower()
    if lower.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if lower.endswith(".csv"):
        return "csv"
    raise ValueError(
        Said(
            gettext_noop("cannot tell the format of %(file)s: pass --format csv|jsonl"),
            file=repr(path),
        )
    )
