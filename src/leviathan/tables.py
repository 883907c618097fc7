"""Tables for people: aligned plain text for the terminal, and Markdown for reports.

    print(text_table(["model", "ms"], [["dense_tied", "12.5"], ["leviathan", "13.0"]]))

Cells are formatted by the caller (``str()`` is applied to anything else), so a table never decides
how many digits a number shows.

Footgun: every row must have one cell per header column. A short row was the raw IndexError and a long one lost its
extra cells without a word; a header or rows that are no list were Python's TypeError; a ``|`` in a Markdown cell
split the column in two; an empty header gave a table of no columns. Each is refused (an
``errors.ArgumentValueError`` / ``ArgumentTypeError`` naming the row) or escaped (``\\|``) now (issue 30 round 25,
Y331-Y337; round 26, Q377).
"""

from __future__ import annotations

from typing import Optional, Sequence


def cell(value, spec: str) -> str:
    """``value`` formatted with ``spec``; ``-`` where it is None (an undefined statistic). A value ``spec`` cannot
    format (text for ``',.2f'``) is an ``ArgumentValueError`` naming both: format's raw ValueError (Y336)."""
    if value is None:
        return "-"
    try:
        return format(value, spec)
    except (ValueError, TypeError) as e:
        from .errors import ArgumentValueError

        raise ArgumentValueError(f"cell: {type(value).__name__} {value!r:.40} cannot be formatted with {spec!r} ({e}); "
                                 f"pass a value of the kind the format is for (a number for 'f', 'd', 'e'), or None "
                                 f"for '-'") from None


def arrow(a, b, spec: str) -> str:
    """``a -> b`` (init -> final) of two cells."""
    return f"{cell(a, spec)} -> {cell(b, spec)}"


def text_table(header: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell, the first left-aligned and the others right-aligned, with a
    dashed rule under the header. A line break in a cell is escaped, shown as ``\\n`` (``\\r``): it wrote the cell
    across two lines, breaking the table's columns without a word (issue 30 round 28, U477). Escaped, not refused:
    the cell is text the caller formatted (a note, a name), the table is for reading, and ``markdown_table`` keeps
    such a cell too (as ``<br>``)."""
    cells = [[_one_line(c) for c in r] for r in _cells("text_table", header, rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths), *map(line, cells[1:])])


def markdown_table(header: Sequence[object], rows: Sequence[Sequence[object]], align: Optional[str] = None) -> str:
    """A Markdown (GitHub) table; ``align`` gives one letter per column, ``l`` or ``r`` (default: all ``l``). A ``|``
    in a cell is escaped and a line break made ``<br>``: either ended the cell where the text did not."""
    from .errors import ArgumentValueError

    cells = [[c.replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>") for c in r]
             for r in _cells("markdown_table", header, rows)]
    align = align or "l" * len(cells[0])
    if not isinstance(align, str) or len(align) != len(cells[0]) or set(align) - {"l", "r"}:
        raise ArgumentValueError(f"markdown_table: align needs one of 'l'/'r' per column ({len(cells[0])}), got "
                                 f"{align!r:.60}; pass a text such as {'l' + 'r' * (len(cells[0]) - 1)!r}")
    rule = "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"
    return "\n".join(["| " + " | ".join(r) + " |" for r in cells[:1]] + [rule] +
                     ["| " + " | ".join(r) + " |" for r in cells[1:]])


def _one_line(text: str) -> str:
    """``text`` with its line breaks escaped (``\\n``, ``\\r``; a Windows ``\\r\\n`` as one ``\\n``)."""
    return text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\r")


def _cells(api: str, header: Sequence[object], rows: Sequence[Sequence[object]]) -> list[list[str]]:
    """The header and rows as text (``str`` of each cell); an ``ArgumentTypeError`` for a header or rows that are no
    list (a text would be split into letters), an ``ArgumentValueError`` naming the first row whose length is not the
    header's, and for an empty header (a table of no columns)."""
    from .errors import ArgumentTypeError, ArgumentValueError

    for name, value, wanted in (("header", header, "a list of column names"),
                                ("rows", rows, "a list of rows, each a list of cells")):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ArgumentTypeError(f"{api}: {name} must be a list, got {type(value).__name__} {value!r:.40}; pass "
                                    f"{wanted}")
    cells = [[str(c) for c in header]]
    if not cells[0]:  # '|  |\n||' was returned, no table at all (issue 30 round 26, Q377)
        raise ArgumentValueError(f"{api}: header is empty, a table of no columns; pass one name per column")
    for number, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
            raise ArgumentTypeError(f"{api}: rows[{number}] must be a list of cells, got {type(row).__name__} "
                                    f"{row!r:.40}; pass one list per row")
        cells.append([str(c) for c in row])
        if len(cells[-1]) != len(cells[0]):
            raise ArgumentValueError(f"{api}: rows[{number}] has {len(cells[-1])} cells, the header {len(cells[0])} "
                                     f"columns; give every row one cell per column (None or '' for an empty one)")
    return cells
