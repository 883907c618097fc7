"""``leviathan.tables`` refuses rows that do not fit the header and escapes Markdown's pipes (issue 30 round 25).

A short row was the raw IndexError (Y331), a long one lost its extra cells without a word (Y332), a ``|`` in a
Markdown cell split its column in two (Y334), ``cell('x', ',.2f')`` was format's raw ValueError (Y336) and a header
that is no list Python's TypeError (Y337). A line break in a text_table cell wrote the row across two lines (round 28,
U477): it is escaped as ``\\n``, one row per line, as markdown_table makes it ``<br>`` (a lone ``\\r`` too).
"""

from __future__ import annotations

import pytest

from leviathan.errors import ArgumentTypeError, ArgumentValueError
from leviathan.tables import cell, markdown_table, text_table


@pytest.mark.parametrize("table", [text_table, markdown_table])
def test_a_row_of_the_wrong_length_is_refused_by_its_number(table):
    with pytest.raises(ArgumentValueError, match=r"rows\[1\] has 1 cells, the header 2 columns"):
        table(["a", "b"], [[1, 2], [1]])
    with pytest.raises(ArgumentValueError, match=r"rows\[0\] has 2 cells, the header 1 columns"):
        table(["a"], [[1, 2]])


@pytest.mark.parametrize("table", [text_table, markdown_table])
def test_a_header_or_rows_that_are_no_list_are_refused(table):
    with pytest.raises(ArgumentTypeError, match="header must be a list, got int 5"):
        table(5, [])
    with pytest.raises(ArgumentTypeError, match="rows must be a list, got str"):
        table(["a", "b"], "ab")


def test_markdown_cells_keep_their_pipes_and_line_breaks_inside():
    assert markdown_table(["a|b"], [["c|d"], ["e\nf"]]).splitlines() == ["| a\\|b |", "|---|", "| c\\|d |",
                                                                         "| e<br>f |"]


def test_a_cell_its_format_cannot_take_is_named():
    with pytest.raises(ArgumentValueError, match=r"cell: str 'x' cannot be formatted with ',.2f'"):
        cell("x", ",.2f")
    assert cell(None, ".2f") == "-" and cell(float("nan"), ",.2f") == "nan"


def test_a_line_break_in_a_cell_keeps_the_row_on_one_line():
    table = text_table(["a", "b"], [["line1\nline2", "x\r\ny\rz"]])
    assert table.splitlines() == ["a                   b", "------------  -------", "line1\\nline2  x\\ny\\rz"]
    assert markdown_table(["a"], [["p\rq"]]).splitlines()[-1] == "| p<br>q |"
