"""``params --isoparametric`` labels a row that matches no depth "not iso", with a note saying why (issue 30 round
28: T17, "silent").

With ``model.vocab_size=100000000`` the solver stopped at its 1,024-layer bound, half the target's total, and with
``model.vocab_size=2`` the generator alone outweighed the dense table (1 layer, -11%): both rows read "leviathan iso",
exit 0, only the percentage showing it. ``IsoSolution.bound`` now says when the depth stopped at a bound, and
``commands.params.iso_rows`` labels such a row and prints the note (on stderr under --json).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402


@pytest.mark.parametrize("vocab, says", [
    (100_000_000, "even 1,024 layers, the deepest considered, leave it "),
    (2, "the generator alone (41,408 parameters) outweighs dense_untied's input table (128)"),
], ids=["bound", "generator"])
def test_a_row_no_depth_matches_is_labelled_and_noted(vocab, says):
    proc = cli(["params", "--preset", "cpu-tiny", "--isoparametric", f"model.vocab_size={vocab}"])
    assert proc.returncode == 0, proc.stderr
    assert "leviathan iso" not in proc.stdout and "\nleviathan not iso (" in proc.stdout, proc.stdout
    note = next(line for line in proc.stdout.splitlines() if line.startswith("note: "))
    assert note.startswith("note: no leviathan depth is isoparametric with dense_untied: ") and says in note, note
    assert note.endswith("not a match (change model.vocab_size or the width)"), note
    proc = cli(["params", "--preset", "cpu-tiny", "--isoparametric", f"model.vocab_size={vocab}", "--json"])
    assert proc.returncode == 0 and says in proc.stderr, proc.stderr
    assert any(r["name"].startswith("leviathan not iso (") for r in json.loads(proc.stdout))


def test_a_matched_depth_keeps_its_label_and_has_no_bound():
    from leviathan import isoparametric_depth
    from leviathan.presets import preset

    proc = cli(["params", "--preset", "cpu-tiny", "--isoparametric"])
    assert proc.returncode == 0 and "leviathan iso (+0.01%)" in proc.stdout and "note:" not in proc.stdout
    assert isoparametric_depth(replace(preset("cpu-tiny"), embedding="dense_untied")).bound is None
