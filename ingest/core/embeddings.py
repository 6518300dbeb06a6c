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

Text rule `main-windows128x4-mean-v1` (the one the channel stores): the main text's
paragraphs (its non-empty lines, whitespace collapsed), packed in order into windows of at
most WINDOW_TOKENS model tokens (a paragraph longer than that is cut into equal parts, by
words where it has enough of them, else by characters, as Chinese has no spaces); when
there are more than MAX_WINDOWS windows, MAX_WINDOWS of them spread evenly from the first
to the last. Each window is embedded on its own and the document's vector is the mean of
the window vectors, normalized. So a long article is read beyond its start, and a header
shared by two pages is one window among several, not the whole input: two different
articles under one long header stay apart, one article under two headers stays together.
The window count bounds a document's cost (at most WINDOW_TOKENS * MAX_WINDOWS tokens).

Text rule `main-first-words-v1` (the earlier one; its vectors are another space): the main
text's first `max_tokens` whitespace-separated words, cut again by the tokenizer.
"""

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

TEXT_RULE = "main-windows128x4-mean-v1"
FIRST_WORDS_RULE = "main-first-words-v1"
WINDOW_TOKENS = 128
MAX_WINDOWS = 4
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
    """The text an embedding was computed from under the earlier rule `main-first-words-v1`."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    return " ".join(main_text.split()[:max_tokens])


def _parts(
    paragraph: str, tokens: int, window_tokens: int, count_tokens: Callable[[str], int]
) -> list[tuple[str, int]]:
    """A paragraph of `tokens` tokens cut into equal parts of about `window_tokens`, with
    their counts; a part still over the budget (a cut by characters can leave one, since
    the model's count of a part is not proportional to its length) is cut again. A single
    character is never cut, and parts of nothing but spaces are dropped."""
    count = math.ceil(tokens / window_tokens)
    words = paragraph.split(" ")
    units, joiner = (words, " ") if len(words) >= 2 * count else (list(paragraph), "")
    size = math.ceil(len(units) / count)
    parts: list[tuple[str, int]] = []
    for i in range(0, len(units), size):
        part = joiner.join(units[i : i + size])
        if not part.strip():
            continue
        part_tokens = count_tokens(part)
        if part_tokens > window_tokens and len(part) > 1:
            parts.extend(_parts(part, part_tokens, window_tokens, count_tokens))
        else:
            parts.append((part, part_tokens))
    return parts


def spread(count: int, keep: int) -> list[int]:
    """`keep` indices of `count` items, evenly spread, first and last included."""
    if count <= keep:
        return list(range(count))
    if keep == 1:
        return [0]
    return sorted({round(i * (count - 1) / (keep - 1)) for i in range(keep)})


def text_windows(
    main_text: str,
    count_tokens: Callable[[str], int],
    *,
    window_tokens: int = WINDOW_TOKENS,
    max_windows: int = MAX_WINDOWS,
) -> list[str]:
    """The windows a document's vector is pooled from (rule `main-windows128x4-mean-v1`);
    `count_tokens` is the model's own count of a text's tokens (without specials). Empty
    for a text without words."""
    if window_tokens < 1 or max_windows < 1:
        raise ValueError("window_tokens and max_windows must be at least 1")
    pieces: list[tuple[str, int]] = []
    for line in main_text.splitlines():
        paragraph = " ".join(line.split())
        if not paragraph:
            continue
        tokens = count_tokens(paragraph)
        if tokens <= window_tokens:
            pieces.append((paragraph, tokens))
        else:
            pieces.extend(_parts(paragraph, tokens, window_tokens, count_tokens))
    windows: list[str] = []
    current: list[str] = []
    used = 0
    for piece, tokens in pieces:
        if current and used + tokens > window_tokens:
            windows.append(" ".join(current))
            current, used = [], 0
        current.append(piece)
        used += tokens
    if current:
        windows.append(" ".join(current))
    return [windows[i] for i in spread(len(windows), max_windows)]


def pool(
    window_vectors: Sequence[npt.ArrayLike] | npt.NDArray[np.float32],
) -> npt.NDArray[np.float32]:
    """A document's vector: the mean of its windows' unit vectors, normalized."""
    if not len(window_vectors):
        raise ValueError("no window vectors to pool")
    units = np.stack([normalize(v) for v in window_vectors])
    return normalize(units.mean(axis=0))
