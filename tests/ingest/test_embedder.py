"""The semantic channel says why it is off; these run without the `semantic` extra."""

import importlib.util
import sys
from pathlib import Path

import pytest

from ingest import embedder


def test_the_channel_is_off_by_default(settings) -> None:
    settings.EMBEDDING_MODEL = ""
    state = embedder.channel_state()
    assert not state.on
    assert state.reason == "EMBEDDING_MODEL is not set"


def test_off_without_the_extra(settings, monkeypatch, tmp_path: Path) -> None:
    settings.EMBEDDING_MODEL = str(tmp_path)
    monkeypatch.setattr(embedder, "extra_installed", lambda: False)
    state = embedder.channel_state()
    assert not state.on
    assert state.reason == "sentence-transformers is not installed"


def test_off_when_the_model_directory_is_missing(settings, monkeypatch, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    settings.EMBEDDING_MODEL = str(missing)
    monkeypatch.setattr(embedder, "extra_installed", lambda: True)
    state = embedder.channel_state()
    assert not state.on
    assert state.reason == f"model directory not found: {missing}"


def test_on_when_configured_and_installed(settings, monkeypatch, tmp_path: Path) -> None:
    settings.EMBEDDING_MODEL = str(tmp_path)
    monkeypatch.setattr(embedder, "extra_installed", lambda: True)
    assert embedder.channel_state().on
    # A hub name is not a directory: the state does not fetch it to find out.
    settings.EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.channel_state().on


def test_extra_installed_tells_the_truth() -> None:
    assert embedder.extra_installed() == (
        importlib.util.find_spec("sentence_transformers") is not None
    )


def test_embedding_while_off_raises_the_reason_and_loads_nothing(settings) -> None:
    settings.EMBEDDING_MODEL = ""
    loaded_before = "sentence_transformers" in sys.modules
    models_before = dict(embedder._models)
    with pytest.raises(embedder.ChannelOff, match="EMBEDDING_MODEL is not set"):
        embedder.embed_texts(["a text"])
    with pytest.raises(embedder.ChannelOff):
        embedder.model_limits()
    assert ("sentence_transformers" in sys.modules) == loaded_before
    assert embedder._models == models_before
