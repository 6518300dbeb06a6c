"""A smoke run of bench/language_bench.py on invented pages: the whole pipeline under
one method, on SQLite with eager tasks, a few pairs of every kind (so the script cannot
rot; the figures are the benchmark's, on the development data)."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import language_bench  # noqa: E402

from tests.bench.pages import write_data  # noqa: E402


def test_language_bench_smoke(tmp_path, monkeypatch):
    pytest.importorskip("opencc")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    data = write_data(tmp_path / "data")
    out, js = tmp_path / "report.md", tmp_path / "report.json"
    code = language_bench.main(
        [
            "--data", str(data),
            "--per-kind", "1",
            "--english", str(tmp_path / "none"),
            "--out", str(out),
            "--json", str(js),
        ]
    )  # fmt: skip
    assert code == 0
    text = out.read_text()
    assert "## Targets" in text and "## JSON" in text
    result = json.loads(js.read_text())
    run = result["runs"][language_bench.SHIPPED_METHOD]
    kinds = {(k["lang"], k["kind"]): k for k in run["kinds"]}
    for lang in ("zh", "vi"):
        assert kinds[(lang, "repost_verbatim")]["pairs"] == 1
        assert kinds[(lang, "menu_only_change")]["nominated"] == 1  # the same article
        assert run["summary"][lang]["positives"] >= 7
    assert kinds[("zh", "zh_other_site")]["pairs"] == 1  # pairs.jsonl is measured too
    assert run["fixtures"]["zh:login_wall"]["pages"] == 10
    assert run["run"]["errors"] == {}
    assert result["extraction"]["zh"]["pages"] == 3
    assert result["extraction"]["zh"]["product"]["f1"] > 0.5
    assert set(result["cpu"]) == {"zh", "vi"}
