"""Word- and line-level diffs for the pair view. Pure: no Django.

Crawled text is hostile. These functions return plain strings in segments;
the template escapes every one of them (nothing here is ever marked safe). Work is
bounded: each side is cut to a cap and the result says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from rapidfuzz.distance import Indel, Opcode

_WORD = re.compile(r"\S+\s*|\s+")
_CORE = re.compile(r"^\W+|\W+$")

EQUAL = "equal"
DELETE = "delete"
INSERT = "insert"
REPLACE = "replace"


@dataclass(frozen=True)
class Segment:
    text: str
    op: str  # equal | delete | insert | replace
    emphasis: bool = False
    boilerplate: bool = False  # full-page text outside the main text (menus, footers…)

    @property
    def changed(self) -> bool:
        return self.op != EQUAL


@dataclass(frozen=True)
class WordDiff:
    left: list[Segment]
    right: list[Segment]
    words_a: int
    words_b: int
    cap: int
    truncated: bool
    changes: int = 0

    @property
    def identical(self) -> bool:
        return self.changes == 0 and not self.truncated


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


def words(text: str) -> list[str]:
    """Words with their trailing whitespace, so that joining them gives the text back."""
    return _WORD.findall(text)


def _core(token: str) -> str:
    return _CORE.sub("", token.strip())


def _segments(
    tokens: list[str],
    op: str,
    emphasise: frozenset[str],
    out: list[Segment],
    boilerplate: list[bool] | None = None,
) -> None:
    """Append tokens as segments; a token whose core is in `emphasise` stands alone.
    With `boilerplate` (a flag per token), runs split where the flag changes."""
    run: list[str] = []
    flag = False
    for n, token in enumerate(tokens):
        this = bool(boilerplate[n]) if boilerplate is not None else False
        if run and this != flag:
            _append(out, Segment("".join(run), op, boilerplate=flag))
            run = []
        flag = this
        if op != EQUAL and emphasise and _core(token) in emphasise:
            if run:
                _append(out, Segment("".join(run), op, boilerplate=flag))
                run = []
            _append(out, Segment(token, op, emphasis=True, boilerplate=flag))
        else:
            run.append(token)
    if run:
        _append(out, Segment("".join(run), op, boilerplate=flag))


def _append(out: list[Segment], segment: Segment) -> None:
    last = out[-1] if out else None
    if (
        last is not None
        and last.op == segment.op
        and last.boilerplate == segment.boilerplate
        and not last.emphasis
        and not segment.emphasis
    ):
        out[-1] = Segment(last.text + segment.text, segment.op, boilerplate=segment.boilerplate)
    else:
        out.append(segment)


def boilerplate_flags(full_words: list[str], main_text: str) -> list[bool]:
    """For each word of a full-page text, whether it lies outside the main text: the
    full text's words not matched, in order, by the main text's words."""
    main = [w.strip() for w in words(main_text)]
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
    """Word-level diff of two texts (Indel opcodes over word lists).

    Each side is cut to `max_words` words; `truncated` says whether anything was cut.
    Changed words whose core (punctuation stripped) is in `emphasise` (numbers and ids
    that tripped a guard) become their own segments with `emphasis=True`. Given the
    main texts of full-page texts, words outside them are marked `boilerplate`."""
    wa, wb = words(a), words(b)
    truncated = len(wa) > max_words or len(wb) > max_words
    wa, wb = wa[:max_words], wb[:max_words]
    flags_a = boilerplate_flags(wa, main_a) if main_a is not None else None
    flags_b = boilerplate_flags(wb, main_b) if main_b is not None else None
    # Compare words without their whitespace: a reflowed line is not a change.
    ka = [w.strip() for w in wa]
    kb = [w.strip() for w in wb]
    marked = frozenset(str(x) for x in emphasise)
    left: list[Segment] = []
    right: list[Segment] = []
    changes = 0
    for op in Indel.opcodes(ka, kb):
        tag = op.tag
        fa = flags_a[op.src_start : op.src_end] if flags_a is not None else None
        fb = flags_b[op.dest_start : op.dest_end] if flags_b is not None else None
        if tag == EQUAL:
            _segments(wa[op.src_start : op.src_end], EQUAL, marked, left, fa)
            _segments(wb[op.dest_start : op.dest_end], EQUAL, marked, right, fb)
            continue
        changes += 1
        if op.src_end > op.src_start:
            _segments(wa[op.src_start : op.src_end], tag, marked, left, fa)
        if op.dest_end > op.dest_start:
            _segments(wb[op.dest_start : op.dest_end], tag, marked, right, fb)
    return WordDiff(left, right, len(words(a)), len(words(b)), max_words, truncated, changes)


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
