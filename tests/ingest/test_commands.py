import io
from pathlib import Path

import pytest
from django.core.management import call_command

from ingest.models import Document
from tests import factories


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("alpha beta gamma delta", "8e4a54256f09d080"),
        ("alpha beta gamma delta epsilon", "eedf74ad6fe9f881"),
    ],
)
def test_fingerprint_prints_the_reference_value(text: str, expected: str) -> None:
    assert _run("fingerprint", text).strip() == expected
    assert _run("fingerprint", "--reference", text).strip() == expected


def test_fingerprint_with_another_method_differs() -> None:
    words = _run("fingerprint", "alpha beta gamma delta").strip()
    shingles = _run(
        "fingerprint", "--method", "simhash64-shingle3-sha256-v1", "alpha beta gamma delta"
    ).strip()
    assert len(shingles) == 16
    assert shingles != words


@pytest.mark.django_db
def test_ingest_prints_a_summary_and_is_idempotent(tmp_path: Path) -> None:
    pages = [
        (
            f"https://cmd.example.com/{i}",
            factories.article_html(f"T{i}", factories.article_text(i)).encode(),
        )
        for i in range(3)
    ]
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(factories.warc_bytes(pages))
    first = _run("ingest", str(path), "--no-progress")
    assert "read 3, stored 3" in first
    second = _run("ingest", str(path), "--no-progress")
    assert "stored 0, already stored 3" in second
    assert Document.objects.count() == 3


@pytest.mark.django_db
def test_ingest_reads_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "crawl.jsonl"
    path.write_text(
        '{"url": "https://j.example.com/1", "html": "<p>hello</p>"}\n{"oops"\n', encoding="utf-8"
    )
    out = _run("ingest", str(path), "--no-progress")
    assert "read 2, stored 1" in out
    assert "bad_json 1" in out
