"""Tables for people: aligned plain text for the terminal, and Markdown for reports.

    print(text_table(["model", "ms"], [["dense_tied", "12.5"], ["leviathan", "13.0"]]))

Cells are formatted by the caller (``str()`` is applied to anything else), so a table never decides
how many digits a number shows.
"""

from __future__ import annotations

from typing import Optional, Sequence


def cell(value, spec: str) -> str:
    """``value`` formatted with ``spec``; ``-`` where it is None (an undefined statistic)."""
    return "-" if value is None else format(value, spec)


def arrow(a, b, spec: str) -> str:
    """``a -> b`` (init -> final) of two cells."""
    return f"{cell(a, spec)} -> {cell(b, spec)}"


def text_table(header: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell, the first left-aligned and the others right-aligned, with a
    dashed rule under the header."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths), *map(line, cells[1:])])


def markdown_table(header: Sequence[object], rows: Sequence[Sequence[object]], align: Optional[str] = None) -> str:
    """A Markdown (GitHub) table; ``align`` gives one letter per column, ``l`` or ``r`` (default: all ``l``)."""
    align = align or "l" * len(header)
    if len(align) != len(header) or set(align) - {"l", "r"}:
        raise ValueError(f"align needs one of 'l'/'r' per column ({len(header)}), got {align!r}")
    rule = "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"
    return "\n".join(["| " + " | ".join(str(c) for c in header) + " |", rule,
                      *("| " + " | ".join(str(c) for c in r) + " |" for r in rows)])
