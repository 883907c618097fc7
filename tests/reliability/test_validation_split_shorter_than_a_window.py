"""A validation split shorter than one evaluation window is refused before training (issue 30 round 28, T13).

Round 27's R59 refused an empty val split, but one of 4 tokens (``prepare --val-source v.txt``, v.txt 'Hi.') passed
every check: the sweep's row and the run's summary gave "val loss 5.5188, ppl 249.34" measured on 3 targets against
2,048 / 32,768 asked, exit 0. The floor is one window (seq_len + 1 tokens: ``eval.stream.short_split_problem`` says
why): ``train`` holds the val split to data.seq_len, ``sweep`` (``check_eval_sets``) each split eval set to eval.seq_len,
one line naming the tokens, the targets it would measure and --val-source / --val-fraction.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, grid_file, tiny_overrides, write_corpus  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.fixture(scope="module")
def short_val(tmp_path_factory) -> Path:
    from leviathan.data.prepare import prepare

    root = tmp_path_factory.mktemp("short-val")
    (root / "v.txt").write_text("Hi.")
    prepare(write_corpus(root / "corpus", num_docs=4), root / "dtv", "bpe:300", val_source=root / "v.txt",
            progress=False, log=lambda line: None)
    return root / "dtv"


def test_train_refuses_a_val_split_shorter_than_its_window(tmp_path, short_val):
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    tokens = __import__("json").loads((short_val / "meta.json").read_text())["splits"]["val"]["tokens"]
    assert 2 <= tokens < 33
    with pytest.raises(UserError, match=rf"^data.path '{short_val}': its val split holds {tokens} tokens, fewer than "
                                        rf"one evaluation window \(data.seq_len 32 \+ 1\): its loss would be measured "
                                        rf"on {tokens - 1} target\(s\); prepare the data with more validation text "):
        train(load_run_config(None, tiny_overrides(short_val, max_steps=2)), tmp_path / "rtv", quiet=True)
    assert not (tmp_path / "rtv").exists()


def test_sweep_refuses_it_before_the_first_run(tmp_path, short_val):
    grid = grid_file(tmp_path, short_val)
    line = cli_error(["sweep", "--grid", grid, "--out", "stv", "--max-runs", "1"], cwd=tmp_path)
    assert line.startswith(f"error: grid 'tiny': eval set 'val' reads '{short_val}': its val split holds "), line
    assert "fewer than one evaluation window (eval.seq_len 32 + 1)" in line and "--val-source FILE" in line, line
    assert not (tmp_path / "stv").exists()
