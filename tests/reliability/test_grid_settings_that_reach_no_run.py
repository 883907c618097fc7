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


def test_a_base_completed_later_still_loads(data, tmp_path):
    """The base is named only once a run's config fails: a base without max_steps or max_tokens (a size's run
    overrides, the command line or a pre-sweep's stage gives it) loads, and a size's run overrides that complete it
    make a buildable run."""
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import build_run_config

    grid = load_grid(_edited_grid(data, tmp_path, lambda g: g["base"].pop("max_steps")))
    assert len(grid.runs) == 2

    def change(g):
        g["base"].pop("max_steps")
        g["sizes"]["a"]["run"] = {"max_tokens": 262144}

    grid = load_grid(_edited_grid(data, tmp_path, change))
    assert build_run_config(grid, grid.runs[0]).max_tokens == 262144


def test_run_sweep_names_the_base_too(data, tmp_path):
    """P200 through the Python API: run_sweep's line names the grid's file and its base, before anything is written."""
    from leviathan.errors import ConfigError
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import run_sweep

    path = _edited_grid(data, tmp_path, lambda g: g["base"].update(max_tokens=100))
    with pytest.raises(ConfigError, match=r"^grid 'g' \(file .*\), in its base: set exactly one of max_steps"):
        run_sweep(load_grid(path), tmp_path / "s", log=lambda line: None)
    assert not (tmp_path / "s" / "grid.json").exists()
