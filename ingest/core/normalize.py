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
    _CJK_SEEN.clear()
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


# --- Mixed scripts: CJK runs read as characters, every other script as the reference's words.
#
# Gram letters: the word characters (``\w``) of Han (unified ideographs and their
# extensions, compatibility ideographs, 々 〆 〇 and the Suzhou numerals), kana and
# hangul. A run of them becomes character n-grams; the rest of the text is split into
# casefolded ``\w+`` words exactly as the reference does, so a text without gram letters
# is read exactly as the reference reads it.
_GRAM_BLOCKS = (
    (0x1100, 0x11FF),  # hangul jamo
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),  # Suzhou numerals
    (0x3031, 0x3035),  # kana repeat marks
    (0x3038, 0x303C),
    (0x3041, 0x30FF),  # hiragana, katakana
    (0x3130, 0x318F),  # hangul compatibility jamo
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0x3400, 0x4DBF),  # Han extension A
    (0x4E00, 0x9FFF),  # Han unified ideographs
    (0xA960, 0xA97F),  # hangul jamo extended A
    (0xAC00, 0xD7FF),  # hangul syllables, jamo extended B
    (0xF900, 0xFAFF),  # Han compatibility ideographs
    (0x20000, 0x323AF),  # Han extensions B–H, compatibility supplement
)


def _char_class(blocks: tuple[tuple[int, int], ...]) -> str:
    """A regex character class body: the blocks as ranges. Few ranges keep the regex
    fast (a class of hundreds of ranges cost 5 ms on a 3,000-character page)."""
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in blocks)


# The gram blocks include a few characters that are not ``\w`` (・, ゛, unassigned code
# points): a run of the blocks is split at them, so a gram is made of ``\w`` only.
_GRAM = _char_class(_GRAM_BLOCKS)
# Compatibility folding (NFKC) applies to runs of CJK characters only: the CJK blocks
# (hangul jamo; U+2E80–9FFF: radicals, CJK symbols and punctuation with the ideographic
# space, kana, bopomofo, enclosed and compatibility CJK, Han; hangul; compatibility
# ideographs; vertical and small forms; the Han extensions) and the half-width and
# full-width forms block (U+FF00–FFEF). Nowhere else: a ligature or a superscript in a
# Vietnamese or English text stays as the reference sees it. Few, wide ranges: every page
# is scanned for them.
FOLD_BLOCKS = (
    (0x1100, 0x11FF),
    (0x2E80, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE6F),
    (0xFF00, 0xFFEF),
    (0x20000, 0x323AF),
)
_FOLD = _char_class(FOLD_BLOCKS)
_FOLD_BMP_RE = re.compile(f"[{_char_class(FOLD_BLOCKS[:-1])}]")
_FOLD_ASTRAL_RE = re.compile(f"[{_char_class(FOLD_BLOCKS[-1:])}]")
_GRAM_CHAR_RE = re.compile(f"[{_GRAM}]")
_FOLD_RUN_RE = re.compile(f"[{_FOLD}]+")
_MIXED_TOKEN_RE = re.compile(f"([{_GRAM}]+)|[^\\W{_GRAM}]+")
_HAN_ANY_RE = re.compile(f"[{_HAN}\\U00020000-\\U000323af]")


def has_cjk(text: str) -> bool:
    """Whether the text holds a character the mixed-script normalization or tokenizer
    treats apart from the reference: a CJK character, a full-width form or U+3000.
    Remembered for the texts seen last (a page's fingerprint and passages ask of the
    same text)."""
    hit = _CJK_SEEN.get(text)
    if hit is None:
        # The BMP blocks are one bitmap lookup a character; the range beyond the BMP is
        # looked for only in a text that has a character there (3x faster on English).
        hit = _FOLD_BMP_RE.search(text) is not None or (
            not text.isascii()
            and len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)
            and _FOLD_ASTRAL_RE.search(text) is not None
        )
        if len(_CJK_SEEN) >= _RECENT_MAX:
            _CJK_SEEN.clear()
        _CJK_SEEN[text] = hit
    return hit


_CJK_SEEN: dict[str, bool] = {}


# The gram blocks as a regex class body, for other modules' patterns (their ``\w``
# characters are the gram letters).
GRAM_CLASS = _GRAM


def has_han_char(text: str) -> bool:
    """Whether the text holds a Han character (BMP or beyond): what ``han_t2s`` reads."""
    return _HAN_ANY_RE.search(text) is not None


def has_grams(text: str) -> bool:
    """Whether the text holds a character of the gram blocks (Han, kana, hangul): False
    means the mixed tokenizer reads it exactly as the reference does."""
    return _GRAM_CHAR_RE.search(text) is not None


_t2s: Callable[[str], str] | None = None


def han_t2s(text: str) -> str:
    """Traditional Han characters folded to simplified by OpenCC's ``t2s`` conversion
    (characters and phrases; its dictionaries map Han to Han, one character for one, so
    every other character and every length is kept)."""
    global _t2s
    if _t2s is None:
        import opencc  # loaded on first use: its dictionaries take ~15 ms

        _t2s = opencc.OpenCC("t2s").convert
    return _t2s(text)


def _nfkc_run(match: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", match.group())


def normalize_mixed_v1(text: str) -> str:
    """The mixed-script normalization ``nfc-cjknfkc-t2s-spacefold-v1``:

    1. NFC over the whole text (what the reference does: Vietnamese keeps its diacritics);
    2. NFKC inside runs of CJK characters and the full-width block only (``ＡＢＣ１２３``
       → ``ABC123``, ``，`` → ``,``, U+3000 → space, half-width katakana → full-width,
       compatibility ideographs → unified ones);
    3. traditional Han characters folded to simplified (OpenCC ``t2s``), so a repost
       converted between the two is still a copy;
    4. spaces folded as the reference folds them (U+00A0 and U+3000 are spaces).

    Punctuation is kept (full-width punctuation becomes its ASCII form, 。、「」 stay):
    it separates n-grams and is never deleted into a neighbour. A text without CJK
    characters, full-width forms or U+3000 normalizes exactly as the reference does.
    """
    text = unicodedata.normalize("NFC", text)
    if has_cjk(text):
        text = _FOLD_RUN_RE.sub(_nfkc_run, text)
        if _HAN_ANY_RE.search(text) is not None:
            text = han_t2s(text)
    return fold_spaces(text)


def mixed_tokens(text: str, n: int = 2, *, unigrams: bool = False) -> list[str]:
    """Runs of gram letters become their character n-grams (a run shorter than ``n``
    stays one token), with ``unigrams`` each character as well; everything else is the
    reference's casefolded ``\\w+`` words."""
    out: list[str] = []
    for match in _MIXED_TOKEN_RE.finditer(text.casefold()):
        run = match.group(1)
        if run is None:
            out.append(match.group())
        elif run.isalnum():  # ``\w`` is isalnum() (or "_", in no gram block)
            _grams(run, n, unigrams, out)
        else:
            for part in WORD_RE.findall(run):
                _grams(part, n, unigrams, out)
    return out


def _grams(run: str, n: int, unigrams: bool, out: list[str]) -> None:
    if unigrams and n > 1:
        out.extend(run)
    if len(run) <= n:
        if not (unigrams and len(run) == 1):
            out.append(run)
    else:
        out.extend(run[i : i + n] for i in range(len(run) - n + 1))


def tokens_mixed_unibigrams(text: str) -> list[str]:
    """Tokenizer ``mixed-cjk-unibigram-words-v1``: each character of a CJK run and each
    of its character bigrams (chosen on labelled Chinese pairs:
    bench/experiments/cjk_ngram_choice.py), other scripts as the reference's words."""
    return mixed_tokens(text, 2, unigrams=True)


MIXED_NORMALIZATION = "nfc-cjknfkc-t2s-spacefold-v1"
MIXED_TOKENIZER = "mixed-cjk-unibigram-words-v1"


NORMALIZERS: dict[str, Callable[[str], str]] = {
    "nfc-spacefold-v1": normalize_nfc_v1,
    "nfkc-spacefold-v1": normalize_nfkc_v1,
    MIXED_NORMALIZATION: normalize_mixed_v1,
}

TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "words-casefold-v1": tokens_words,
    "word-shingle3-v1": tokens_shingle3,
    "cjk-bigram-words-v1": tokens_cjk_bigrams,
    MIXED_TOKENIZER: tokens_mixed_unibigrams,
}
