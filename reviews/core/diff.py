"""Word- and line-level diffs for the pair view. Pure: no Django.

Crawled text is hostile. These functions return plain strings in segments;
the template escapes every one of them (nothing here is ever marked safe). Work is
bounded: each side is cut to a cap and the result says so.

Granularity follows the script: inside CJK runs (Han, kana, hangul, CJK punctuation and
the full-width forms) every character is a token, since those scripts do not put spaces
between words; everywhere else a token is a run of non-space characters, as for Latin and
Vietnamese text. A text without CJK characters is tokenized exactly as by whitespace alone.
Paragraphs (lines) are compared first: a paragraph found on both sides at other places is
*moved*, not deleted and inserted, and only the paragraphs that differ are diffed token by
token, so unchanged paragraphs cost no token comparisons.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz.distance import Indel, Opcode

# CJK characters, one token each: Hangul Jamo, CJK radicals, CJK symbols and punctuation
# (not U+3000, the ideographic space, which is white space), kana, bopomofo, Hangul
# compatibility Jamo, kanbun, enclosed CJK, CJK compatibility, CJK unified ideographs and
# their extensions, Hangul syllables, CJK compatibility forms, halfwidth and full-width
# forms.
CJK_CHARS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3001-\u303f\u3040-\u33ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003134f"
)
_WORD = re.compile(rf"[{CJK_CHARS}]\s*|[^\s{CJK_CHARS}]+\s*|\s+")
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]+")
_CORE = re.compile(r"^\W+|\W+$")

EQUAL = "equal"
DELETE = "delete"
INSERT = "insert"
REPLACE = "replace"
MOVED = "moved"


@dataclass(frozen=True)
class Segment:
    text: str
    op: str  # equal | delete | insert | replace | moved
    emphasis: bool = False
    boilerplate: bool = False  # full-page text outside the main text (menus, footers…)
    move: int | None = None  # moved paragraph block number, the same on both sides

    @property
    def changed(self) -> bool:
        return self.op not in (EQUAL, MOVED)


@dataclass(frozen=True)
class WordDiff:
    left: list[Segment]
    right: list[Segment]
    words_a: int
    words_b: int
    cap: int
    truncated: bool
    changes: int = 0
    moves: int = 0  # moved paragraph blocks

    @property
    def identical(self) -> bool:
        return self.changes == 0 and self.moves == 0 and not self.truncated


@dataclass(frozen=True)
class LineRow:
    op: str
    left: str | None
    right: str | None
    left_no: int | None
    right_no: int | None


@dataclass(frozen=True)
class LineDiff:
    rows: list[LineRow] = field(default_factory=list)
    lines_a: int = 0
    lines_b: int = 0
    cap: int = 0
    truncated: bool = False
    changes: int = 0


def words(text: str, limit: int | None = None) -> list[str]:
    """Tokens with their trailing whitespace, so that joining them gives the text back:
    each CJK character alone, otherwise runs of non-space characters. With `limit`, only
    the first `limit` tokens (the rest of the text is not scanned)."""
    if limit is None:
        return _WORD.findall(text)
    # Scan growing prefixes (two characters a token suits CJK text, then ×4) until one
    # holds more than `limit` tokens: its last token may be cut at the prefix's end, so
    # only the tokens before it are sure.
    if limit <= 0:
        return []
    end = limit * 2
    while end < len(text):
        tokens = _WORD.findall(text, 0, end)
        if len(tokens) > limit:
            return tokens[:limit]
        end *= 4
    return _WORD.findall(text)[:limit]


# White space as `\s` and str.split() read it (str.isspace), by code point: none lies
# past U+3000, the ideographic space.
_SPACE_LAST = 0x3000
_SPACE = np.array([chr(c).isspace() for c in range(_SPACE_LAST + 1)])
# The CJK ranges as sorted bounds [first, last + 1, first, last + 1, …]: a code point is
# CJK when an odd number of bounds lie at or below it.
_CJK_BOUNDS = np.array(
    [b for first, last in re.findall("(.)-(.)", CJK_CHARS) for b in (ord(first), ord(last) + 1)],
    dtype=np.uint32,
)


def token_count(text: str) -> int:
    """len(words(text)), without building the tokens: the CJK characters, the runs of
    other non-space characters, and leading white space (counted over the code points at
    once: a long page's count costs no token strings)."""
    if not text:
        return 0
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        space = _SPACE[codes]
        other = ~space
        cjk = 0
    else:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        space = _SPACE[np.minimum(codes, _SPACE_LAST)] & (codes <= _SPACE_LAST)
        if int(codes.max()) < _CJK_BOUNDS[0]:
            other = ~space
            cjk = 0
        else:
            in_cjk = np.searchsorted(_CJK_BOUNDS, codes, side="right") % 2 == 1
            other = ~(space | in_cjk)
            cjk = int(np.count_nonzero(in_cjk))
    runs = int(other[0]) + int(np.count_nonzero(other[1:] & ~other[:-1]))
    return cjk + runs + int(space[0])


def _core(token: str) -> str:
    return _CORE.sub("", token.strip())


def _segments(
    tokens: list[str],
    op: str,
    emphasise: frozenset[str],
    out: list[Segment],
    boilerplate: list[bool] | None = None,
    move: int | None = None,
) -> None:
    """Append tokens as segments; a changed token whose core is in `emphasise` stands
    alone. With `boilerplate` (a flag per token), runs split where the flag changes."""
    changed = op not in (EQUAL, MOVED)
    if boilerplate is None and not (changed and emphasise):
        if tokens:  # one run: nothing in it stands alone
            _append(out, Segment("".join(tokens), op, move=move))
        return
    run: list[str] = []
    flag = False
    for n, token in enumerate(tokens):
        this = bool(boilerplate[n]) if boilerplate is not None else False
        if run and this != flag:
            _append(out, Segment("".join(run), op, boilerplate=flag, move=move))
            run = []
        flag = this
        if changed and emphasise and _core(token) in emphasise:
            if run:
                _append(out, Segment("".join(run), op, boilerplate=flag, move=move))
                run = []
            _append(out, Segment(token, op, emphasis=True, boilerplate=flag, move=move))
        else:
            run.append(token)
    if run:
        _append(out, Segment("".join(run), op, boilerplate=flag, move=move))


def _append(out: list[Segment], segment: Segment) -> None:
    last = out[-1] if out else None
    if (
        last is not None
        and last.op == segment.op
        and last.boilerplate == segment.boilerplate
        and last.move == segment.move
        and not last.emphasis
        and not segment.emphasis
    ):
        out[-1] = Segment(
            last.text + segment.text, segment.op, boilerplate=segment.boilerplate, move=last.move
        )
    else:
        out.append(segment)


def boilerplate_flags(full_words: list[str], main_text: str) -> list[bool]:
    """For each word of a full-page text, whether it lies outside the main text: the
    full text's words not matched, in order, by the main text's words. (The main text
    lies inside the full text: its words past the full text's count cannot match.)"""
    main = [w.strip() for w in words(main_text, len(full_words))]
    flags = [True] * len(full_words)
    for op in Indel.opcodes([w.strip() for w in full_words], main):
        if op.tag == EQUAL:
            for i in range(op.src_start, op.src_end):
                flags[i] = False
    return flags


def word_diff(
    a: str,
    b: str,
    *,
    max_words: int = 4000,
    emphasise: Iterable[str] = (),
    main_a: str | None = None,
    main_b: str | None = None,
) -> WordDiff:
    """Token-level diff of two texts (see the module docstring for what a token is).

    Paragraphs are aligned first (Indel opcodes over whole paragraphs); a paragraph
    deleted from A and found inserted elsewhere in B is moved (op "moved", numbered
    blocks); the remaining differing paragraphs are diffed token by token. Each side is
    cut to `max_words` tokens; `truncated` says whether anything was cut. Changed tokens
    whose core (punctuation stripped) is in `emphasise` (numbers and ids that tripped a
    guard) become their own segments with `emphasis=True`. Given the main texts of
    full-page texts, tokens outside them are marked `boilerplate`."""
    count_a, count_b = token_count(a), token_count(b)
    truncated = count_a > max_words or count_b > max_words
    wa, wb = words(a, max_words), words(b, max_words)
    flags_a = boilerplate_flags(wa, main_a) if main_a is not None else None
    flags_b = boilerplate_flags(wb, main_b) if main_b is not None else None
    ops = _TokenOps.of(wa, wb)
    marked = frozenset(str(x) for x in emphasise)
    left = _side_segments(wa, ops.op_a, ops.move_a, marked, flags_a)
    right = _side_segments(wb, ops.op_b, ops.move_b, marked, flags_b)
    return WordDiff(left, right, count_a, count_b, max_words, truncated, ops.changes, ops.moves)


def paragraph_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) token ranges of the paragraphs: a paragraph ends with a token whose
    trailing whitespace holds a line break."""
    spans: list[tuple[int, int]] = []
    start = 0
    for i, token in enumerate(tokens):
        if "\n" in token:
            spans.append((start, i + 1))
            start = i + 1
    if start < len(tokens):
        spans.append((start, len(tokens)))
    return spans


@dataclass
class _TokenOps:
    """The op (and moved block) of every token of each side."""

    op_a: list[str]
    op_b: list[str]
    move_a: list[int | None]
    move_b: list[int | None]
    changes: int = 0
    moves: int = 0

    @classmethod
    def of(cls, wa: Sequence[str], wb: Sequence[str]) -> _TokenOps:
        # Compare tokens without their whitespace: a reflowed line is not a change.
        ka = [w.strip() for w in wa]
        kb = [w.strip() for w in wb]
        out = cls([EQUAL] * len(wa), [EQUAL] * len(wb), [None] * len(wa), [None] * len(wb))
        pa, pb = paragraph_spans(wa), paragraph_spans(wb)
        keys_a = [" ".join(filter(None, ka[s:e])) for s, e in pa]
        keys_b = [" ".join(filter(None, kb[s:e])) for s, e in pb]
        p_ops = Indel.opcodes(keys_a, keys_b)
        a_to_b = _moved_paragraphs(p_ops, keys_a, keys_b)
        out._number_moves(a_to_b, pa, pb)
        b_moved = set(a_to_b.values())
        for block_a, block_b, _ in change_blocks(p_ops):
            # Paragraphs that differ: diffed token by token, moved ones left out.
            ia = [i for p in block_a if p not in a_to_b for i in range(*pa[p])]
            ib = [j for p in block_b if p not in b_moved for j in range(*pb[p])]
            if not ia and not ib:
                continue
            previous = EQUAL
            for op in Indel.opcodes([ka[i] for i in ia], [kb[j] for j in ib]):
                # A change is a run of adjacent deletes and inserts (a replaced word).
                out.changes += int(op.tag != EQUAL and previous == EQUAL)
                previous = op.tag
                if op.tag == EQUAL:
                    continue
                for n in range(op.src_start, op.src_end):
                    out.op_a[ia[n]] = op.tag
                for n in range(op.dest_start, op.dest_end):
                    out.op_b[ib[n]] = op.tag
        return out

    def _number_moves(
        self, a_to_b: dict[int, int], pa: list[tuple[int, int]], pb: list[tuple[int, int]]
    ) -> None:
        """Moved paragraphs, numbered in A's order: a block goes on while both sides do."""
        previous: tuple[int, int] | None = None
        for i in sorted(a_to_b):
            j = a_to_b[i]
            if previous is None or (i, j) != (previous[0] + 1, previous[1] + 1):
                self.moves += 1
            previous = (i, j)
            for t in range(*pa[i]):
                self.op_a[t], self.move_a[t] = MOVED, self.moves
            for t in range(*pb[j]):
                self.op_b[t], self.move_b[t] = MOVED, self.moves


def _moved_paragraphs(
    p_ops: Iterable[Opcode], keys_a: list[str], keys_b: list[str]
) -> dict[int, int]:
    """Paragraphs of A deleted where they were and inserted elsewhere in B (the same
    tokens), each matched once, in order: A's paragraph index → B's."""
    p_ops = list(p_ops)
    pool: dict[str, list[int]] = defaultdict(list)
    for op in p_ops:
        if op.tag != EQUAL:
            for j in range(op.dest_start, op.dest_end):
                if keys_b[j]:
                    pool[keys_b[j]].append(j)
    a_to_b: dict[int, int] = {}
    for op in p_ops:
        if op.tag != EQUAL:
            for i in range(op.src_start, op.src_end):
                if pool.get(keys_a[i]):
                    a_to_b[i] = pool[keys_a[i]].pop(0)
    return a_to_b


def _side_segments(
    tokens: list[str],
    ops: list[str],
    moves: list[int | None],
    marked: frozenset[str],
    flags: list[bool] | None,
) -> list[Segment]:
    """One side's segments: runs of tokens with the same op and moved block."""
    out: list[Segment] = []
    start = 0
    for i in range(1, len(tokens) + 1):
        if i < len(tokens) and ops[i] == ops[start] and moves[i] == moves[start]:
            continue
        fl = flags[start:i] if flags is not None else None
        _segments(tokens[start:i], ops[start], marked, out, fl, moves[start])
        start = i
    return out


SKIP = "skip"


def change_blocks(
    opcodes: Iterable[Opcode],
) -> Iterator[tuple[list[int], list[int], list[tuple[int, int]]]]:
    """Indel opcodes regrouped for a side-by-side view: each changed block (the indexes
    of A and of B in a run of adjacent deletes, inserts and replaces, either side maybe
    empty) with the unchanged index pairs that follow it. The last block may hold no
    change, and the first may hold no unchanged pair."""
    left: list[int] = []
    right: list[int] = []
    for op in opcodes:
        if op.tag != EQUAL:
            left.extend(range(op.src_start, op.src_end))
            right.extend(range(op.dest_start, op.dest_end))
            continue
        equal = list(
            zip(range(op.src_start, op.src_end), range(op.dest_start, op.dest_end), strict=True)
        )
        yield left, right, equal
        left, right = [], []
    yield left, right, []


def side_by_side[T](
    i: int | None, j: int | None, a: Sequence[T], b: Sequence[T]
) -> tuple[str, T | None, T | None, int | None, int | None]:
    """One row of a changed block: its tag, the items of each side and their 1-based
    numbers (None where a side has run out)."""
    tag = REPLACE if i is not None and j is not None else (DELETE if j is None else INSERT)
    return (
        tag,
        a[i] if i is not None else None,
        b[j] if j is not None else None,
        i + 1 if i is not None else None,
        j + 1 if j is not None else None,
    )


def line_diff(
    a: str,
    b: str,
    *,
    max_lines: int = 3000,
    max_line_chars: int = 400,
    context: int | None = None,
) -> LineDiff:
    """Line-level diff (raw HTML source). Both sides cut to `max_lines` lines of at most
    `max_line_chars` characters; `truncated` says whether anything was cut. With
    `context`, runs of unchanged lines longer than that around changes collapse into one
    "skip" row (its `left` says how many lines)."""
    la, lb = a.splitlines(), b.splitlines()
    truncated = len(la) > max_lines or len(lb) > max_lines
    la, lb = la[:max_lines], lb[:max_lines]

    def cut(line: str) -> str:
        nonlocal truncated
        if len(line) > max_line_chars:
            truncated = True
            return line[:max_line_chars] + " …"
        return line

    la = [cut(x) for x in la]
    lb = [cut(x) for x in lb]
    rows: list[LineRow] = []
    changes = 0

    # Adjacent deletes and inserts form one changed block, shown side by side.
    def flush(block_left: list[int], block_right: list[int]) -> None:
        nonlocal changes
        if not block_left and not block_right:
            return
        changes += 1
        for k in range(max(len(block_left), len(block_right))):
            i = block_left[k] if k < len(block_left) else None
            j = block_right[k] if k < len(block_right) else None
            rows.append(LineRow(*side_by_side(i, j, la, lb)))

    for block_left, block_right, equal in change_blocks(Indel.opcodes(la, lb)):
        flush(block_left, block_right)
        rows.extend(LineRow(EQUAL, la[i], lb[j], i + 1, j + 1) for i, j in equal)
    if context is not None:
        rows = _collapse(rows, context)
    return LineDiff(rows, len(a.splitlines()), len(b.splitlines()), max_lines, truncated, changes)


def collapse_runs[R](
    rows: list[R], context: int, *, unchanged: Callable[[R], bool], skip: Callable[[int], R]
) -> list[R]:
    """Runs of unchanged rows longer than 2 × context + 1 keep `context` rows on each side
    of a change and stand for the rest with one `skip(hidden)` row."""
    out: list[R] = []
    i = 0
    while i < len(rows):
        if not unchanged(rows[i]):
            out.append(rows[i])
            i += 1
            continue
        j = i
        while j < len(rows) and unchanged(rows[j]):
            j += 1
        run = rows[i:j]
        head = context if i > 0 else 0
        tail = context if j < len(rows) else 0
        if len(run) > head + tail + 1:
            out.extend(run[:head])
            out.append(skip(len(run) - head - tail))
            out.extend(run[len(run) - tail :])
        else:
            out.extend(run)
        i = j
    return out


def _collapse(rows: list[LineRow], context: int) -> list[LineRow]:
    return collapse_runs(
        rows,
        context,
        unchanged=lambda row: row.op == EQUAL,
        skip=lambda hidden: LineRow(SKIP, f"{hidden} unchanged lines", None, None, None),
    )
