"""Sentence-level alignment for the pair view: reordered text shows as moved blocks,
not as a run of deletions and insertions, and unchanged runs collapse. Pure: no
Django. Crawled text is hostile: these are plain strings, escaped by the template.
Work is bounded: each side is cut to a cap and the result says so."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field, replace

from rapidfuzz.distance import Indel

from reviews.core.diff import Segment, change_blocks, collapse_runs, side_by_side, word_diff

EQUAL = "equal"
DELETE = "delete"
INSERT = "insert"
REPLACE = "replace"
MOVED = "moved"
SKIP = "skip"

# A sentence ends at end punctuation followed by white space ("$74.90" is one), or
# at a line break. Chinese and Japanese end punctuation (。！？；and the half-width ｡)
# ends a sentence with or without white space after it, and after the closing quotes or
# brackets that follow it (。」 ！” ？）, up to two of them).
_CJK_END = "。！？；｡"
_CLOSE = "」』”’）〉》】〕\"'\\)\\]"
_BREAK_LATIN = r"(?<=[.!?])\s+|(?<=[.!?][\"'”’)\]])\s+|\s*\n\s*"
_BREAK_PLAIN = re.compile(_BREAK_LATIN)
_HAS_CJK_END = re.compile(rf"[{_CJK_END}]")
_BREAK = re.compile(
    _BREAK_LATIN + rf"|(?<=[{_CJK_END}])(?![{_CLOSE}])\s*"
    rf"|(?<=[{_CJK_END}][{_CLOSE}])(?![{_CLOSE}])\s*"
    rf"|(?<=[{_CJK_END}][{_CLOSE}][{_CLOSE}])(?![{_CLOSE}])\s*"
)
_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class AlignRow:
    op: str  # equal | delete | insert | replace | moved | skip
    left: str | None
    right: str | None
    left_no: int | None  # 1-based sentence number on side A
    right_no: int | None
    move: int | None = None  # moved block number, the same on both sides
    # A replaced sentence's word diff against its partner (characters in CJK runs).
    left_parts: tuple[Segment, ...] = ()
    right_parts: tuple[Segment, ...] = ()


@dataclass(frozen=True)
class Alignment:
    rows: list[AlignRow] = field(default_factory=list)
    sentences_a: int = 0
    sentences_b: int = 0
    cap: int = 0
    truncated: bool = False
    changes: int = 0  # changed blocks, moves not counted
    moves: int = 0  # moved blocks


def sentences(text: str) -> list[str]:
    """Sentences (and lines without end punctuation), stripped, empty ones dropped."""
    # Text without CJK end punctuation is split by the shorter expression (same result).
    pattern = _BREAK if _HAS_CJK_END.search(text) else _BREAK_PLAIN
    return [s.strip() for s in pattern.split(text) if s.strip()]


def _key(sentence: str) -> str:
    return " ".join(_WORDS.findall(sentence.casefold()))


def sentence_align(a: str, b: str, *, max_sentences: int = 2000, context: int = 1) -> Alignment:
    """Align two texts sentence by sentence (Indel opcodes over normalized sentences).
    A sentence deleted from A and inserted elsewhere in B is *moved*, not changed;
    consecutive moved sentences form one moved block. Runs of unchanged sentences longer
    than 2 × `context` + 1 collapse into one "skip" row (its `left` says how many)."""
    sa, sb = sentences(a), sentences(b)
    count_a, count_b = len(sa), len(sb)
    truncated = len(sa) > max_sentences or len(sb) > max_sentences
    sa, sb = sa[:max_sentences], sb[:max_sentences]
    ka, kb = [_key(s) for s in sa], [_key(s) for s in sb]
    ops = list(Indel.opcodes(ka, kb))
    deleted = [i for op in ops if op.tag != EQUAL for i in range(op.src_start, op.src_end)]
    inserted = [j for op in ops if op.tag != EQUAL for j in range(op.dest_start, op.dest_end)]
    pool: dict[str, list[int]] = defaultdict(list)
    for j in inserted:
        if kb[j]:
            pool[kb[j]].append(j)
    a_to_b: dict[int, int] = {}
    for i in deleted:
        if ka[i] and pool.get(ka[i]):
            a_to_b[i] = pool[ka[i]].pop(0)
    # Number the moved blocks in A's order: a block continues while both sides do.
    move_of: dict[int, int] = {}
    moves = 0
    previous: tuple[int, int] | None = None
    for i in sorted(a_to_b):
        j = a_to_b[i]
        if previous is None or (i, j) != (previous[0] + 1, previous[1] + 1):
            moves += 1
        move_of[i] = moves
        previous = (i, j)
    b_to_a = {j: i for i, j in a_to_b.items()}

    rows: list[AlignRow] = []
    changes = 0

    # Adjacent deletes and inserts form one changed block, shown side by side.
    def flush(block_a: list[int], block_b: list[int]) -> None:
        nonlocal changes
        left = [i for i in block_a if i not in a_to_b]
        right = [j for j in block_b if j not in b_to_a]
        if left or right:
            changes += 1
        # Each side keeps its own order; moved sentences are marked with their block,
        # the others are paired side by side.
        p = q = 0
        while p < len(block_a) or q < len(block_b):
            i = block_a[p] if p < len(block_a) else None
            j = block_b[q] if q < len(block_b) else None
            if i is not None and i in a_to_b:
                rows.append(AlignRow(MOVED, sa[i], None, i + 1, a_to_b[i] + 1, move_of[i]))
                p += 1
            elif j is not None and j in b_to_a:
                k = b_to_a[j]
                rows.append(AlignRow(MOVED, None, sb[j], k + 1, j + 1, move_of[k]))
                q += 1
            else:
                row = AlignRow(*side_by_side(i, j, sa, sb))
                if row.op == REPLACE and row.left is not None and row.right is not None:
                    d = word_diff(row.left, row.right)
                    row = replace(row, left_parts=tuple(d.left), right_parts=tuple(d.right))
                rows.append(row)
                p += i is not None
                q += j is not None

    for block_a, block_b, equal in change_blocks(ops):
        flush(block_a, block_b)
        rows.extend(AlignRow(EQUAL, sa[i], sb[j], i + 1, j + 1) for i, j in equal)
    return Alignment(
        rows=_collapse(rows, context),
        sentences_a=count_a,
        sentences_b=count_b,
        cap=max_sentences,
        truncated=truncated,
        changes=changes,
        moves=moves,
    )


def _collapse(rows: list[AlignRow], context: int) -> list[AlignRow]:
    return collapse_runs(
        rows,
        context,
        unchanged=lambda row: row.op == EQUAL,
        skip=lambda hidden: AlignRow(SKIP, str(hidden), None, None, None),
    )
