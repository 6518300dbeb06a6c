"""Text embeddings, stored as float16 unit vectors. Locked: change = new text rule or format.

Storage: a vector is L2-normalized, then packed as IEEE float16, little-endian, so a
vector of `d` dimensions takes `2 * d` bytes (384 dims: 768 bytes). The cosine of two
packed vectors is their dot product computed in float32 (both are unit vectors up to
float16 rounding), clipped to [-1, 1].

Coverage: a document gets a vector only when its language (the extraction's ISO 639-1
code, "und" when unknown) is one the configured model covers. Unknown language is not
covered unless the deployment lists "und" itself: a model trained on English gives a
meaningless vector for an unknown script, and a missing vector is honest where a wrong
one is not.

Text rule `main-first-words-v1`: the main text's first `max_tokens` whitespace-separated
words, joined by single spaces. Every word is at least one model token, so the cut never
removes text the model would read; the tokenizer's own truncation then cuts at exactly
`max_tokens` tokens. The word cap only bounds the tokenizer's work on long pages.
"""

import numpy as np
import numpy.typing as npt

TEXT_RULE = "main-first-words-v1"
COVERED = "covered"
NOT_COVERED = "not_covered"  # shown as "not covered by the model"
UNKNOWN_LANGUAGE = "und"

_F16 = np.dtype("<f2")


def normalize(vector: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """The unit vector in the direction of `vector` (float32); a zero vector is refused."""
    v = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(v))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError("cannot normalize a zero or non-finite vector")
    return v / np.float32(norm)


def pack(vector: npt.ArrayLike) -> bytes:
    """Normalize, then float16 little-endian bytes (2 bytes per dimension)."""
    return normalize(vector).astype(_F16).tobytes()


def unpack(data: bytes) -> npt.NDArray[np.float32]:
    """The float32 vector of packed bytes (not renormalized: what was stored)."""
    if len(data) % 2:
        raise ValueError(f"packed vector has an odd length ({len(data)} bytes)")
    return np.frombuffer(data, dtype=_F16).astype(np.float32)


def cosine(a: bytes, b: bytes) -> float:
    """Cosine of two packed unit vectors, in [-1, 1]."""
    if len(a) != len(b):
        raise ValueError(f"vectors differ in size ({len(a)} and {len(b)} bytes)")
    dot = float(np.dot(unpack(a), unpack(b)))
    return min(1.0, max(-1.0, dot))


def primary_language(language: str) -> str:
    """`en-US` → `en`; empty → `und`."""
    code = language.strip().lower().replace("_", "-").split("-", 1)[0]
    return code or UNKNOWN_LANGUAGE


def coverage(language: str, covered_languages: list[str] | tuple[str, ...]) -> str:
    """COVERED when the model covers the document's language, else NOT_COVERED."""
    covered = {primary_language(code) for code in covered_languages if code.strip()}
    return COVERED if primary_language(language) in covered else NOT_COVERED


def embedding_text(main_text: str, max_tokens: int) -> str:
    """The text an embedding is computed from (rule `main-first-words-v1`)."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    return " ".join(main_text.split()[:max_tokens])
