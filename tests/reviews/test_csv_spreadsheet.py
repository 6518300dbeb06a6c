"""CSV exports with Chinese and Vietnamese text open correctly in a spreadsheet.

No spreadsheet runs here (openpyxl cannot read CSV). `spreadsheet_open` applies the rule
Excel follows when a .csv file is double-clicked: with a UTF-8 byte order mark the file
is read as UTF-8, otherwise in the computer's legacy ("ANSI") code page: Windows-1252 on
a Western Windows, GBK (936) on a Chinese one, Windows-1258 on a Vietnamese one. The tests
prove what bytes the exports write and what that rule makes of them, not how a given
spreadsheet version behaves (LibreOffice asks for the encoding in its import dialog)."""

import codecs
import csv
import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from ingest.models import CandidatePair
from reviews.core import csvstream
from reviews.labels import labelling
from tests import factories
from tests.factories import find, pair_of, reviewed_document

pytestmark = pytest.mark.django_db

CODE_PAGES = ("cp1252", "gbk", "cp1258")
REASON = "正文完全一致，只是转载加了版权声明 — nội dung giống hệt, chỉ khác chân trang"
URL_A = "https://tin-tuc.example.vn/thời-sự/đường-sắt-tốc-độ-cao"
URL_B = "https://news.example.cn/城市/地铁三号线"


def spreadsheet_open(data: bytes, code_page: str) -> list[list[str]]:
    """The cells a spreadsheet shows for a double-clicked CSV (the rule above)."""
    if data.startswith(codecs.BOM_UTF8):
        text = data[len(codecs.BOM_UTF8) :].decode("utf-8")
    else:
        text = data.decode(code_page, errors="replace")
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.fixture
def labelled(editor) -> CandidatePair:
    text = "城市地铁三号线将于明年年底建成通车。Thủ tướng yêu cầu hoàn thiện hồ sơ dự án. " * 20
    a = reviewed_document(url=URL_A, text=text)
    b = reviewed_document(url=URL_B, text=text + "。", flips=1)
    find(a, b)
    pair = pair_of(a, b)
    labelling.label_record(
        pair=pair,
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason=REASON,
        region="body",
    )
    return pair


def _cells(rows: list[list[str]]) -> set[str]:
    return {cell for row in rows for cell in row}


def test_with_bom_the_label_export_opens_as_written_on_every_windows(
    tmp_path: Path, labelled
) -> None:
    out = tmp_path / "labels.csv"
    call_command("export_labels", "--bom", "--output", str(out), stderr=io.StringIO())
    data = out.read_bytes()
    assert data[:3] == b"\xef\xbb\xbf"
    assert data.count(codecs.BOM_UTF8) == 1
    for code_page in CODE_PAGES:
        cells = _cells(spreadsheet_open(data, code_page))
        assert {REASON, URL_A, URL_B} <= cells, code_page
    # Python's csv with utf-8-sig reads the same rows, the first column named as written.
    with out.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[0] == "pair_id" and rows[0]["reason"] == REASON
    assert {rows[0]["a_url"], rows[0]["b_url"]} == {URL_A, URL_B}
    # And the label import takes the file back (the label is already stored: skipped).
    result = io.StringIO()
    call_command("import_labels", str(out), stdout=result)
    assert "0 label(s) imported, 1 already stored" in result.getvalue()


def test_without_the_mark_a_code_page_reader_garbles_the_text(tmp_path: Path, labelled) -> None:
    out = tmp_path / "labels.csv"
    call_command("export_labels", "--output", str(out), stderr=io.StringIO())
    data = out.read_bytes()
    assert not data.startswith(codecs.BOM_UTF8)  # the command's default is unchanged
    assert REASON in data.decode("utf-8")
    for code_page in CODE_PAGES:
        cells = _cells(spreadsheet_open(data, code_page))
        assert REASON not in cells and URL_B not in cells, code_page


def test_the_mark_on_standard_output_and_only_for_csv(labelled) -> None:
    out = io.StringIO()
    call_command("export_labels", "--bom", stdout=out)
    assert out.getvalue().startswith(csvstream.BOM + "pair_id,")
    with pytest.raises(CommandError, match="CSV only"):
        call_command("export_labels", "--bom", "--format", "jsonl", stdout=io.StringIO())
    with pytest.raises(CommandError, match="CSV only"):
        call_command("export_canonical", "--bom", stdout=io.StringIO())


def test_the_desk_download_has_the_mark_unless_asked_not_to(client, labelled, auditor) -> None:
    client.force_login(auditor)
    url = reverse("reviews:labels-export")
    data = b"".join(client.get(url, {"format": "csv"}).streaming_content)
    assert data.startswith(codecs.BOM_UTF8)
    assert REASON in _cells(spreadsheet_open(data, "gbk"))
    plain = b"".join(client.get(url, {"format": "csv", "bom": "0"}).streaming_content)
    assert plain == data[3:]
    jsonl = b"".join(client.get(url, {"format": "jsonl"}).streaming_content)
    assert not jsonl.startswith(codecs.BOM_UTF8)


def test_the_canonical_csv_with_the_mark(tmp_path: Path, labelled) -> None:
    out = tmp_path / "canonical.csv"
    call_command(
        "export_canonical", "--format", "csv", "--bom", "-o", str(out), stderr=io.StringIO()
    )
    data = out.read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    cells = _cells(spreadsheet_open(data, "cp1258"))
    assert URL_A in cells or URL_B in cells


def test_the_canonical_api_marks_the_first_page_only_when_asked(client, labelled) -> None:
    token = factories.api_token_create(user=factories.user_create(username="a", role="auditor"))
    auth = {"Authorization": f"Bearer {token}"}
    api = "/api/v1/canonical"
    plain = b"".join(client.get(api, {"format": "csv"}, headers=auth).streaming_content)
    assert not plain.startswith(codecs.BOM_UTF8)  # the API's default is unchanged
    marked = client.get(api, {"format": "csv", "bom": "true"}, headers=auth)
    assert b"".join(marked.streaming_content) == codecs.BOM_UTF8 + plain
    first = next(csv.DictReader(io.StringIO(plain.decode())))
    later = client.get(api, {"format": "csv", "bom": "true", "after": first["id"]}, headers=auth)
    assert not b"".join(later.streaming_content).startswith(codecs.BOM_UTF8)


def test_with_bom_streams_and_marks_the_first_line_only() -> None:
    lines = csvstream.with_bom(iter(["a,b\n", "1,2\n"]))
    assert next(lines) == "\ufeffa,b\n"
    assert list(lines) == ["1,2\n"]
    assert list(csvstream.with_bom(iter([]))) == ["\ufeff"]
