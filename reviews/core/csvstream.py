"""CSV out, streamed line by line, with one rule against spreadsheet formulas.

Spreadsheets run a cell that starts with one of FORMULA_START as a formula; crawled URLs
and editors' reasons are data, so such text is written with a leading apostrophe (which
the label import removes again). The apostrophe itself is in the set, so the rule can be
undone exactly. Pure: no Django."""

import csv
from collections.abc import Collection, Iterable, Iterator, Sequence

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")

# The byte order mark by which a spreadsheet reads a CSV file as UTF-8: without it,
# Excel opens a double-clicked CSV in the computer's legacy code page (Windows-1252 on a
# Western Windows, GBK on a Chinese one, Windows-1258 on a Vietnamese one) and Chinese and
# Vietnamese text comes out garbled. Python's `utf-8-sig` and the label import drop it.
BOM = "\ufeff"


def safe_cell(value: object) -> object:
    """Text a spreadsheet would run is prefixed with an apostrophe; the rest as is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


class _Line:
    """A write-only buffer: csv.writer writes one line, we hand it on."""

    def write(self, value: str) -> str:
        return value


def csv_lines(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    lineterminator: str = "\r\n",
    text_columns: Collection[str] | None = None,
) -> Iterator[str]:
    """The header, then one CSV line per row. Cells go through `safe_cell`: every text
    cell, or only those of `text_columns` when given."""
    writer = csv.writer(_Line(), lineterminator=lineterminator)
    yield writer.writerow(header)
    escaped = [text_columns is None or name in text_columns for name in header]
    for row in rows:
        yield writer.writerow(
            [safe_cell(v) if esc else v for v, esc in zip(row, escaped, strict=True)]
        )


def with_bom(lines: Iterable[str]) -> Iterator[str]:
    """The lines with the UTF-8 byte order mark before the first (still streamed)."""
    it = iter(lines)
    yield BOM + next(it, "")
    yield from it


def cell_text(value: str) -> str:
    """`safe_cell` undone: the text as it was before export."""
    if value.startswith("'") and value[1:].startswith(FORMULA_START):
        return value[1:]
    return value
