"""Text normalization and tokenizers. Each is part of a method key (a fingerprint
means nothing without its method):
changing one of them is a new method, never an edit of an existing one."""

import re
import unicodedata
from collections.abc import Callable

# Every kind of space (tabs, line breaks, NBSP U+00A0, ideographic U+3000, the U+2000
# block, narrow NBSP, …) folds to one ASCII space; zero-width characters vanish.
_SPACES = re.compile(r"[\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\u180e]+")
_ZERO_WIDTH = re.compile(r"[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
# Text that `fold_spaces` empties: spaces and zero-width characters only. Matching stops
# at the first other character, where folding reads the whole text.
_BLANK = re.compile(
    r"[\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\u180e"
    r"\u200b\u200c\u200d\u2060\ufeff\u00ad]*"
)

# The locked reference tokenizer: it is locked; changing it is a new method.
WORD_RE = re.compile(r"\w+")

# Han script (CJK unified ideographs, extension A, compatibility ideographs).
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_TOKEN_RE = re.compile(rf"[{_HAN}]+|[^\W{_HAN}]+")
_HAN_RUN_RE = re.compile(rf"^[{_HAN}]+$")
_HAN_CHAR_RE = re.compile(rf"[{_HAN}]")


def fold_spaces(text: str) -> str:
    text = _ZERO_WIDTH.sub("", text)
    return _SPACES.sub(" ", text).strip()


def is_blank(text: str) -> bool:
    """``fold_spaces(text) == ""``, without folding the text."""
    return _BLANK.fullmatch(text) is not None


def normalize_nfc_v1(text: str) -> str:
    """NFC, spaces folded. Digits, punctuation, case and diacritics are kept."""
    return fold_spaces(unicodedata.normalize("NFC", text))


def normalize_nfkc_v1(text: str) -> str:
    """NFKC (full-width → half-width, ligatures split), spaces folded."""
    return fold_spaces(unicodedata.normalize("NFKC", text))


def tokens_words(text: str) -> list[str]:
    """Reference tokenizer: re.findall(r'\\w+', text.casefold())."""
    return WORD_RE.findall(text.casefold())


# The NFC-normalized text and its words of the texts seen last. Extraction counts a
# text's tokens exactly as the reference method reads them, and the fingerprints of the
# same text follow in the same task: the work is done once. Bounded in texts (a task's
# two texts per document, PROCESS_TASK_SIZE 50) and in characters (a few MB of words in a
# worker); forgotten all at once, one atomic step whatever the threads. The word lists
# are shared, so callers never modify them.
_RECENT_MAX = 128
_RECENT_MAX_CHARS = 2_000_000
_RECENT: dict[str, tuple[str, list[str]]] = {}
_recent_chars = 0


def recent_clear() -> None:
    """Forget the recent texts (benchmarks time a page as a new one with it)."""
    global _recent_chars
    _RECENT.clear()
    _recent_chars = 0


def nfc_words(text: str) -> tuple[str, list[str]]:
    """(``normalize_nfc_v1(text)``, ``tokens_words`` of it), remembered for recent texts."""
    global _recent_chars
    hit = _RECENT.get(text)
    if hit is None:
        norm = normalize_nfc_v1(text)
        hit = (norm, tokens_words(norm))
        if len(_RECENT) >= _RECENT_MAX or _recent_chars + len(text) > _RECENT_MAX_CHARS:
            _RECENT.clear()
            _recent_chars = 0
        if len(text) <= _RECENT_MAX_CHARS:
            _RECENT[text] = hit
            _recent_chars += len(text)
    return hit


def recent_words(text: str) -> list[str] | None:
    """``tokens_words(text)``, taken from ``nfc_words`` when it read this text moments
    before and its normalization changed no word: the text is in NFC and holds no
    zero-width character (folding spaces only changes what lies between words). None
    otherwise."""
    hit = _RECENT.get(text)
    if hit is None or _ZERO_WIDTH.search(text):
        return None
    if not (text.isascii() or unicodedata.is_normalized("NFC", text)):
        return None
    return hit[1]


def tokens_shingle3(text: str) -> list[str]:
    """Word 3-shingles (order-aware). Fewer than 3 words: no shingle at all."""
    return shingles3(tokens_words(text))


def shingles3(words: list[str]) -> list[str]:
    """The 3-shingles of a word list: "w0 w1 w2", "w1 w2 w3", …"""
    return list(map(" ".join, zip(words, words[1:], words[2:], strict=False)))


def has_han(text: str) -> bool:
    """Whether the text holds a Han character (the CJK tokenizer's bigram script)."""
    return _HAN_CHAR_RE.search(text) is not None


def tokens_cjk_bigrams(text: str) -> list[str]:
    """Han runs become character bigrams (a lone character stays a unigram);
    everything else is split into words as the reference tokenizer does."""
    out: list[str] = []
    for run in _CJK_TOKEN_RE.findall(text.casefold()):
        if _HAN_RUN_RE.match(run):
            if len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


NORMALIZERS: dict[str, Callable[[str], str]] = {
    "nfc-spacefold-v1": normalize_nfc_v1,
    "nfkc-spacefold-v1": normalize_nfkc_v1,
}

TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "words-casefold-v1": tokens_words,
    "word-shingle3-v1": tokens_shingle3,
    "cjk-bigram-words-v1": tokens_cjk_bigrams,
}
