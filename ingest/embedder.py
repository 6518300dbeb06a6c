"""The semantic channel's model: whether the channel is on (and why not), and batches of
texts embedded into packed vectors (ingest/core/embeddings.py).

sentence-transformers is an optional extra (`pip install -e '.[semantic]'`): this module
imports without it, and the desk then says the channel is off. The model is loaded once
per process, on first use. A model directory is read with `local_files_only`; a hub name
is fetched only where the deployment allows downloads (HF_HUB_OFFLINE unset), never by
the tests.
"""

import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from ingest.core import embeddings as core

EXTRA_MODULE = "sentence_transformers"
# The approximate index of the channel's nominations (ingest/core/ann.py), same extra.
INDEX_MODULE = "usearch"
EXTRA_MISSING = "the semantic extra (sentence-transformers, usearch) is not installed"


@dataclass(frozen=True)
class ChannelState:
    on: bool
    model: str
    reason: str = ""  # why the channel is off; empty when on


class ChannelOff(RuntimeError):
    """The semantic channel was asked to embed while it is off."""


def extra_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in (EXTRA_MODULE, INDEX_MODULE))


def _is_path(model: str) -> bool:
    """A value that names a directory rather than a hub model ("org/name")."""
    return model.startswith(("/", ".", "~")) or Path(model).expanduser().is_dir()


def channel_state() -> ChannelState:
    model = settings.EMBEDDING_MODEL.strip()
    if not model:
        return ChannelState(on=False, model="", reason="EMBEDDING_MODEL is not set")
    if not extra_installed():
        return ChannelState(on=False, model=model, reason=EXTRA_MISSING)
    if _is_path(model) and not Path(model).expanduser().is_dir():
        return ChannelState(on=False, model=model, reason=f"model directory not found: {model}")
    return ChannelState(on=True, model=model)


def model_key(model: str | None = None) -> str:
    """The stable name stored in Embedding.model: a directory's own name (the same
    model unpacked elsewhere keeps its key), a hub name as it is; empty when no model
    is configured. Needs neither the extra nor the model."""
    model = (settings.EMBEDDING_MODEL if model is None else model).strip()
    if not model:
        return ""
    if _is_path(model):
        return Path(model).expanduser().resolve().name[:200]
    return model[:200]


_models: dict[str, Any] = {}
_lock = threading.Lock()


def _load(model: str) -> Any:
    with _lock:
        if model not in _models:
            # The one import of the optional extra, by name: a static import would make
            # sentence-transformers (and torch) a requirement of every process and of mypy.
            module = importlib.import_module(EXTRA_MODULE)
            offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
            path = str(Path(model).expanduser()) if _is_path(model) else model
            _models[model] = module.SentenceTransformer(
                path, local_files_only=offline or _is_path(model)
            )
        return _models[model]


def model_limits() -> tuple[int, int]:
    """(dimensions, max tokens) of the configured model; loads it."""
    state = channel_state()
    if not state.on:
        raise ChannelOff(state.reason)
    model = _load(state.model)
    # sentence-transformers 6 renamed get_sentence_embedding_dimension.
    dims = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(dims()), int(model.max_seq_length)


def embed_texts(texts: Sequence[str]) -> list[bytes]:
    """Packed unit vectors (float16) of main texts, cut by the core's text rule.

    The caller decides who gets a vector (`core.coverage`, non-empty main text): an empty
    text would still get one, and it would mean nothing.
    """
    state = channel_state()
    if not state.on:
        raise ChannelOff(state.reason)
    model = _load(state.model)
    max_tokens = int(model.max_seq_length)
    cut = [core.embedding_text(text, max_tokens) for text in texts]
    vectors = model.encode(
        cut, batch_size=settings.EMBEDDING_BATCH, convert_to_numpy=True, show_progress_bar=False
    )
    return [core.pack(vector) for vector in vectors]
