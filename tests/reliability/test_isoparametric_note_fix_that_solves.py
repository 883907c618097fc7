"""The "not iso" note's fix is one that makes a depth match (issue 30 round 29, V13).

``params --preset cpu-tiny --isoparametric model.num_hidden_layers=1024`` said "even 1,024 layers, the deepest
considered, leave it 12,754,336 parameters short ... (change model.vocab_size or the width)": the cause was the
target's own depth at the bound, and a lower model.num_hidden_layers solves it (``params._iso_fix`` computes the
deepest that does). The number it names is checked by running it: at that depth the row is "leviathan iso", one layer
deeper it is not.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402

ISO = ["params", "--preset", "cpu-tiny", "--isoparametric"]


def test_the_note_names_a_depth_that_solves_and_it_does():
    done = cli([*ISO, "model.num_hidden_layers=1024"])
    assert done.returncode == 0, done.stderr
    said = re.search(r"set model\.num_hidden_layers to ([\d,]+) or fewer", done.stdout)
    assert said is not None and "leviathan needs" in done.stdout, done.stdout
    deepest = int(said.group(1).replace(",", ""))
    assert "leviathan iso (" in cli([*ISO, f"model.num_hidden_layers={deepest}"]).stdout
    assert "leviathan not iso (" in cli([*ISO, f"model.num_hidden_layers={deepest + 1}"]).stdout


def test_a_bound_no_depth_can_meet_keeps_the_vocabulary_or_width_fix():
    done = cli(["params", "--isoparametric", "model.vocab_size=100000000"])
    assert done.returncode == 0 and "not a match (change model.vocab_size or the width)" in done.stdout, done.stdout
