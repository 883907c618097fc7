"""Grid settings that reach no run, or that no run can take, are refused naming where in the grid they are
(issue 30 round 21).

A size's ``embedding`` (each run's is its experiment's variant, P192) or a size's ``vocab_size`` other than the data's
(P193) was dropped without a word: ``sweep --commands`` printed dense_tied / leviathan runs of the data's vocabulary,
exit 0. A base key no run config has (P185) or a base with both max_steps and max_tokens (P200) was loaded, and the
sweep's line named neither the grid file nor its base section.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, one_run_grid  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _edited_grid(data: Path, folder: Path, change) -> Path:
    """``one_run_grid`` (two arms: dense_tied and leviathan) with ``change(grid dict)`` applied."""
    path = one_run_grid(data, folder)
    grid = yaml.safe_load(path.read_text())
    grid["experiments"]["iso_body"]["variants"] = ["dense_tied", "leviathan"]
    grid["sizes"]["a"] = {"preset": "cpu-tiny"}
    change(grid)
    path.write_text(yaml.safe_dump(grid))
    return path


def test_a_size_embedding_is_refused_naming_the_experiments_variants(data, tmp_path):
    """P192: ``sizes.a.embedding: dense_untied`` trained dense_tied and leviathan arms, exit 0, without a word."""
    grid = _edited_grid(data, tmp_path, lambda g: g["sizes"]["a"].update(embedding="dense_untied"))
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "s", "--commands"])
    assert line.startswith("error: grid 'g': sizes.a sets embedding: dense_untied, which the grid sets for each run "
                           "from the experiment's variants"), line
    assert "size 'a' trains dense_tied, leviathan" in line and "delete embedding from sizes.a" in line, line
    assert not (tmp_path / "s").exists()


def test_a_size_vocab_size_other_than_the_datas_is_refused(data, tmp_path):
    """P193: ``sizes.a.vocab_size: 500`` on data of 300 ids trained 300-id models, exit 0; the data's own size passes."""
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.errors import ConfigError

    vocab = load_grid(one_run_grid(data, tmp_path)).vocab_size
    grid = _edited_grid(data, tmp_path, lambda g: g["sizes"]["a"].update(vocab_size=vocab + 200))
    with pytest.raises(ConfigError) as e:
        load_grid(grid)
    assert f"sizes.a sets vocab_size: {vocab + 200}, but the grid sets each run's to {vocab} from the data's " \
           f"vocabulary" in str(e.value) and "delete vocab_size from sizes.a" in str(e.value), str(e.value)
    assert load_grid(_edited_grid(data, tmp_path, lambda g: g["sizes"]["a"].update(vocab_size=vocab))).runs


@pytest.mark.parametrize("base, said", [
    ({"unknown": 1}, "unknown key 'unknown' in RunConfig"),  # P185
    ({"max_tokens": 100}, "set exactly one of max_steps and max_tokens"),  # P200 (the grid's base has max_steps)
], ids=["P185-unknown-key", "P200-steps-and-tokens"])
def test_a_base_no_run_can_take_is_refused_naming_the_grid_file_and_its_base(data, tmp_path, base, said):
    """P185, P200: the sweep's line named neither the grid's file nor its base section."""
    grid = _edited_grid(data, tmp_path, lambda g: g["base"].update(base))
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "s", "--commands"])
    assert line.startswith(f"error: grid 'g' (file {str(grid)!r}), in its base: {said}"), line
    assert line.endswith("fix it under base: in the grid (every run starts from it)"), line
    assert not (tmp_path / "s").exists()


def test_a_base_a_size_completes_still_loads(data, tmp_path):
    """The base check reads the base alone only to name it: a base whose max_steps a size's run overrides replace by
    max_tokens (base ``max_steps: null``) is one the runs can take, and loads."""
    from leviathan.experiments.machinery.grid import load_grid

    def change(g):
        g["base"]["max_steps"] = None
        g["sizes"]["a"]["run"] = {"max_tokens": 4096}

    assert len(load_grid(_edited_grid(data, tmp_path, change)).runs) == 2
