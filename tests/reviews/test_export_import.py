"""Label export (CSV / JSONL, streamed, history marked) and all-or-nothing import."""

import csv
import inspect
import io
import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Exists, OuterRef, Subquery
from django.http import StreamingHttpResponse
from django.urls import reverse

from ingest.core.channels import SEMANTIC, SIMHASH
from ingest.models import CandidatePair, DoNotMatch
from reviews.calibration import sweeps
from reviews.labels import exports, imports, labelling
from reviews.models import CalibrationSample, Label
from tests import factories

pytestmark = pytest.mark.django_db


def label(pair, editor, verdict: str = "duplicate", reason: str = "same body") -> Label:
    code = "different_item" if verdict == "distinct" else "same_text"
    return labelling.label_record(
        pair=pair, editor=editor, verdict=verdict, reason_code=code, reason=reason, region="body"
    )


@pytest.fixture
def history(pairs, editor, other_editor):
    """pair 0: two editors disagree; pair 1: relabelled; pair 2: labelled then undone."""
    p0, p1, p2 = pairs
    label(p0, editor, "duplicate")
    label(p0, other_editor, "distinct", "different story")
    label(p1, editor, "distinct", "first look")
    label(p1, editor, "near_duplicate", "second look")
    label(p2, editor, "duplicate")
    labelling.label_undo(editor=editor, pair=p2)
    return pairs


def export_csv(**kw) -> list[dict[str, str]]:
    text = "".join(exports.export_lines(fmt="csv", **kw))
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_has_every_column_and_every_label_with_history_marked(history, editor) -> None:
    rows = export_csv()
    assert list(rows[0]) == list(exports.COLUMNS)
    assert len(rows) == Label.objects.count() == 6
    by_reason = {r["reason"]: r for r in rows}
    assert by_reason["first look"]["superseded"] == "true"
    assert by_reason["first look"]["superseded_by"] == str(
        Label.objects.get(reason="second look").pk
    )
    assert by_reason["second look"]["superseded"] == "false"
    undo = next(r for r in rows if r["retraction"] == "true")
    assert undo["reason"].startswith("undo of label")
    assert by_reason["different story"]["disputed"] == "true"
    assert by_reason["second look"]["disputed"] == "false"
    for r in rows:
        assert r["labeled_at"].endswith("Z")
        assert r["split"] == sweeps.pair_split(CandidatePair.objects.get(id=r["pair_id"]))
        assert r["sampling_weight"] == "1.0"


def test_jsonl_keeps_types(history) -> None:
    rows = [json.loads(x) for x in exports.export_lines(fmt="jsonl")]
    assert len(rows) == 6
    first = rows[0]
    assert set(first) == set(exports.COLUMNS)
    assert isinstance(first["distance"], int) and isinstance(first["superseded"], bool)
    assert isinstance(first["sampling_weight"], float)


def test_the_export_carries_the_cosine_and_the_semantic_channel(history) -> None:
    """Empty cosine (CSV) / null (JSONL) while a side has no embedding; the semantic
    channel's column is 1 only where it nominated the pair."""
    p0, p1, _ = history
    CandidatePair.objects.filter(id=p0.id).update(cosine=0.9371, channels=SEMANTIC | SIMHASH)
    rows = export_csv()
    by_pair = {r["pair_id"]: r for r in rows}
    assert by_pair[str(p0.id)]["cosine"] == "0.9371"
    assert by_pair[str(p0.id)]["channel_semantic"] == "1"
    assert by_pair[str(p0.id)]["channel_simhash"] == "1"
    assert by_pair[str(p1.id)]["cosine"] == ""
    assert by_pair[str(p1.id)]["channel_semantic"] == "0"
    jsonl = {r["pair_id"]: r for r in map(json.loads, exports.export_lines(fmt="jsonl"))}
    assert jsonl[p0.id]["cosine"] == 0.9371 and jsonl[p1.id]["cosine"] is None


def test_the_split_never_depends_on_labels(history, editor) -> None:
    before = {r["pair_id"]: r["split"] for r in export_csv()}
    for p in history:
        label(p, editor, "distinct", "changed my mind")
    after = {r["pair_id"]: r["split"] for r in export_csv()}
    assert all(after[k] == v for k, v in before.items())
    only = export_csv(split="holdout") + export_csv(split="calibration")
    assert len(only) == len(export_csv())


def test_since_and_method_filters(history) -> None:
    assert export_csv(since=datetime(2999, 1, 1, tzinfo=UTC)) == []
    assert export_csv(method="no-such-method") == []
    assert len(export_csv(method=history[0].method.key)) == 6


def test_sampling_weights_are_exported(history) -> None:
    CalibrationSample.objects.create(pair=history[0], weight=4.5, seed=1, band="0")
    rows = export_csv()
    weights = {r["pair_id"]: r["sampling_weight"] for r in rows}
    assert weights[str(history[0].id)] == "4.5"
    assert weights[str(history[1].id)] == "1.0"


def test_spreadsheet_formulas_are_defused_and_come_back(pairs, editor) -> None:
    label(pairs[0], editor, "duplicate", '=HYPERLINK("http://evil")')
    line = "".join(exports.export_lines(fmt="csv"))
    assert ",'=HYPERLINK" in line.replace('"', "")
    rows = list(imports.read_rows(io.StringIO(line), "csv"))
    assert rows[0][1]["reason"] == '=HYPERLINK("http://evil")'  # type: ignore[index]


def test_the_export_streams_5000_labels(pairs, editor, other_editor) -> None:
    Label.objects.bulk_create(
        Label(
            pair=pairs[i % 3],
            editor=(editor, other_editor)[i % 2],
            verdict="duplicate",
            reason_code="same_text",
            reason=f"bulk {i}",
            region="body",
            method_key=pairs[0].method.key,
            extractor_version="x",
        )
        for i in range(5000)
    )
    # As in real use: most of a long history is superseded, each label by the editor's
    # next one on the pair.
    later = (
        Label.objects.filter(
            editor=OuterRef("editor"), pair=OuterRef("pair"), pk__gt=OuterRef("pk")
        )
        .order_by("pk")
        .values("pk")[:1]
    )
    Label.objects.filter(Exists(later)).update(superseded_by=Subquery(later))
    rows = exports.label_rows()
    assert inspect.isgenerator(rows)
    first = next(rows)
    assert isinstance(first, dict) and first["reason"] == "bulk 0"
    assert sum(1 for _ in exports.export_lines(fmt="csv")) == 5001
    assert sum(1 for _ in exports.export_lines(fmt="jsonl")) == 5000


def test_the_desk_download_is_a_streaming_response(client, history, auditor) -> None:
    client.force_login(auditor)
    r = client.get(reverse("reviews:labels-export"), {"format": "jsonl", "split": "calibration"})
    assert isinstance(r, StreamingHttpResponse)
    assert r["Content-Type"].startswith("application/x-ndjson")
    assert "attachment" in r["Content-Disposition"]
    body = r.getvalue().decode()
    assert all(json.loads(x)["split"] == "calibration" for x in body.splitlines())
    r = client.get(reverse("reviews:labels-export"), {"format": "xml"})
    assert r.status_code == 400


def test_the_download_needs_a_role(client, history) -> None:
    assert client.get(reverse("reviews:labels-export")).status_code == 302
    client.force_login(factories.user_create(username="nobody"))
    assert client.get(reverse("reviews:labels-export")).status_code == 403


def test_an_editor_cannot_download_the_labels_with_their_scores(client, history) -> None:
    """Blind mode hides scores from editors on the desk; the export would show them all."""
    client.force_login(factories.user_create(username="eddie", role="editor"))
    assert client.get(reverse("reviews:labels-export"), {"format": "jsonl"}).status_code == 403
    client.force_login(factories.user_create(username="ada", role="admin"))
    assert client.get(reverse("reviews:labels-export"), {"format": "jsonl"}).status_code == 200


def test_the_export_command_as_a_user_needs_a_calibration_role(history) -> None:
    factories.user_create(username="eddie", role="editor")
    for who in ("eddie", "nobody-at-all"):
        with pytest.raises(CommandError, match="auditor or admin"):
            call_command("export_labels", "--format", "csv", "--user", who, stdout=io.StringIO())


def test_export_command_writes_a_file(history, tmp_path, auditor) -> None:
    out = tmp_path / "labels.csv"
    call_command("export_labels", "--format", "csv", "--output", str(out), "--user", "audrey")
    assert len(list(csv.DictReader(out.open()))) == 6
    stdout = io.StringIO()
    call_command("export_labels", "--format", "jsonl", "--user", "audrey", stdout=stdout)
    assert len(stdout.getvalue().splitlines()) == 6
    stdout = io.StringIO()  # the operator, without --user
    call_command("export_labels", "--format", "jsonl", stdout=stdout)
    assert len(stdout.getvalue().splitlines()) == 6


# --- import -------------------------------------------------------------------------


def test_import_rebuilds_the_history_under_imported_users(history, tmp_path) -> None:
    text = "".join(exports.export_lines(fmt="jsonl"))
    rows = [json.loads(x) for x in text.splitlines()]
    for r in rows:
        r["annotator"] = "elsewhere-" + r["annotator"]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = io.StringIO()
    call_command("import_labels", str(path), stdout=out)
    assert "6 label(s) imported" in out.getvalue()
    imported = Label.objects.filter(editor__username__startswith="imported:")
    assert imported.count() == 6
    assert not imported.first().editor.is_active  # type: ignore[union-attr]
    # The chain comes back: the relabel supersedes, the undo withdraws.
    first = imported.get(reason="first look")
    assert first.superseded_by == imported.get(reason="second look")
    assert imported.filter(retraction=True, superseded_by=None).count() == 1
    # labeled_at is kept.
    original = {r["reason"]: r["labeled_at"] for r in rows}
    assert exports.iso_utc(first.source_labeled_at) == original["first look"]  # type: ignore[arg-type]
    assert DoNotMatch.objects.filter(source="label").exists()


def test_importing_the_same_file_twice_adds_nothing(history) -> None:
    text = "".join(exports.export_lines(fmt="csv"))
    before = Label.objects.count()
    result = imports.labels_import_text(text, "csv")
    assert result.created == 0 and result.skipped == before
    assert Label.objects.count() == before


def test_a_bad_row_stops_the_whole_file_with_line_numbers(history, tmp_path) -> None:
    lines = "".join(exports.export_lines(fmt="csv")).splitlines()
    header = lines[0].split(",")
    bad = lines[1].replace(",duplicate,", ",maybe,")
    rows = [lines[0], lines[2], bad, lines[3].replace(",body,", ",sidebar,")]
    unknown = dict(zip(header, next(csv.reader([lines[2]])), strict=True))
    unknown["a_url"] = "https://nowhere.example/"
    buf = io.StringIO()
    csv.DictWriter(buf, header, lineterminator="\n").writerow(unknown)
    rows.append(buf.getvalue().rstrip("\n"))
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(rows) + "\n")
    before = Label.objects.count()
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_labels", str(path), stderr=err)
    problems = err.getvalue()
    assert "line 3: verdict 'maybe'" in problems or "line 3:" in problems
    assert "line 4: region 'sidebar'" in problems
    assert "line 5: no simhash64" in problems
    assert "line 2" not in problems
    assert Label.objects.count() == before


def test_a_row_without_urls_names_its_pair_by_id(pairs) -> None:
    row = {
        "pair_id": pairs[1].id,
        "verdict": "distinct",
        "reason_code": "different_item",
        "reason": "spreadsheet",
        "region": "body",
        "annotator": "sheet",
        "labeled_at": "2026-01-02T03:04:05Z",
    }
    result = imports.labels_import_text(json.dumps(row) + "\n", "jsonl")
    assert result.created == 1 and result.users_created == ["imported:sheet"]
    assert Label.objects.get().pair == pairs[1]
    bad = dict(row, pair_id=999999, labeled_at="yesterday")
    with pytest.raises(imports.LabelImportError) as e:
        imports.labels_import_text(json.dumps(bad) + "\n{oops\n", "jsonl")
    assert e.value.problems == [
        "line 1: no pair 999999",
        "line 1: labeled_at is not an ISO 8601 time: 'yesterday'",
        "line 2: not JSON: Expecting property name enclosed in double quotes",
    ]


def test_an_existing_user_keeps_their_name(pairs, editor) -> None:
    row = {
        "pair_id": pairs[0].id,
        "verdict": "duplicate",
        "reason": "r",
        "annotator": "editor",
        "labeled_at": "2026-01-02T03:04:05+00:00",
    }
    imports.labels_import_text(json.dumps(row) + "\n", "jsonl")
    assert Label.objects.get().editor == editor


# --- done when: export, import into a fresh database, the same calibration -----------


def _label_the_gold_crawl(ids, cases) -> None:
    ann = factories.user_create(username="ann", role="editor")
    bob = factories.user_create(username="bob", role="editor")
    case_of = {}
    for case in cases.values():
        docs = [ids[p] for p in case.pages]
        for x in docs:
            for y in docs:
                case_of[(x, y)] = case.expected_label.replace("-", "_")
    pairs = list(CandidatePair.objects.order_by("id"))
    # The gold crawl's login walls are no pairs (blocked pages are not indexed): 8 remain.
    assert len(pairs) >= 8
    for i, pair in enumerate(pairs):
        verdict = case_of.get((pair.a_id, pair.b_id)) or (
            "duplicate" if pair.distance == 0 else "distinct"
        )
        label(pair, ann, "unsure", "first look")
        label(pair, ann, verdict, "answer key")
        if i % 4 == 1:
            label(pair, bob, "distinct" if verdict != "distinct" else "duplicate", "disagree")
        if i % 5 == 2:
            label(pair, bob, verdict, "agree")
            labelling.label_undo(editor=bob, pair=pair)
    sweeps.calibration_sample_make(per_band=2, seed=3)


@pytest.mark.django_db(transaction=True)
def test_labels_exported_then_imported_into_a_fresh_database_calibrate_the_same(
    tmp_path,
) -> None:
    ids, cases, _ = factories.gold_crawl_ingest()
    _label_the_gold_crawl(ids, cases)
    before = sweeps.calibration_reports()
    table_before = io.StringIO()
    call_command("calibrate", stdout=table_before)
    path = tmp_path / "labels.jsonl"
    factories.user_create(username="cal", role="admin")
    call_command("export_labels", "--format", "jsonl", "--output", str(path), "--user", "cal")
    exported = path.read_text().splitlines()
    assert any(json.loads(x)["sampling_weight"] != 1.0 for x in exported)

    # A fresh database: another install, numbering the same crawl differently (one
    # document of its own first), then the same crawl.
    call_command("flush", interactive=False, verbosity=0)
    assert not Label.objects.exists()
    factories.indexed_document(url="https://elsewhere.example/", text="x " * 50, simhash=1)
    again, _, _ = factories.gold_crawl_ingest()
    assert again != ids
    out = io.StringIO()
    call_command("import_labels", str(path), stdout=out)
    assert f"{len(exported)} label(s) imported" in out.getvalue()

    after = sweeps.calibration_reports()
    assert before and after == before
    table_after = io.StringIO()
    call_command("calibrate", stdout=table_after)
    assert table_after.getvalue() == table_before.getvalue()
    assert "send_to_review" in table_after.getvalue()
