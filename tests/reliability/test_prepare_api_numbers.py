"""``prepare()``'s numbers from Python (issue 30 round 23, U143-U145, U166-U169): ``val_fraction='abc'``, None or an
array ended in float()'s ValueError or TypeError; ``bpe_vocab_size='abc'``, NaN or inf beside ``'bpe:300'`` in int()'s
errors, and 300.7 was taken as 300. Each is one UserError before anything is read or written."""

from __future__ import annotations

import math

import numpy as np
import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize("value", ["abc", np.array([0.1, 0.2]), math.nan, True, 1.0, -0.1])  # None: 0.01 (W753)
def test_a_val_fraction_that_is_no_fraction_is_one_line(tmp_path, value):
    from leviathan.data.prepare import prepare

    (tmp_path / "c.txt").write_text("a few words of text.\n" * 20)
    with pytest.raises(UserError, match=r"val_fraction must be a number in \[0, 1\), got "):
        prepare(str(tmp_path / "c.txt"), tmp_path / "out", "bpe:300", val_fraction=value, progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["abc", math.nan, math.inf, 300.7])
def test_a_bpe_vocab_size_that_is_no_whole_number_is_one_line(tmp_path, value):
    from leviathan.data.prepare import prepare

    (tmp_path / "c.txt").write_text("a few words of text.\n" * 20)
    with pytest.raises(UserError, match=r"BPE vocabulary size must be a whole number"):
        prepare(str(tmp_path / "c.txt"), tmp_path / "out", "bpe:300", bpe_vocab_size=value, progress=False)
    assert not (tmp_path / "out").exists()
