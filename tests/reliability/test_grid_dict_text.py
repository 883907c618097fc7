"""A grid given to ``load_grid`` as a dict is held to the grid file's rule: text is text (issue 30 round 23, U226).
``load_grid(d)`` with ``d['sizes']['a']['hidden_size'] = '32'`` trained hidden size 32 without a word, while the same
grid as a file with ``hidden_size: "32"`` is refused ("is in quotes ..., which makes it text, not an integer").
``strict_yaml.as_text_in_quotes`` marks a dict's strings that would read as numbers or switches as the file reader
marks quoted scalars."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from leviathan.config import ConfigError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_run_grid  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _grid(data: Path, tmp_path: Path) -> dict:
    raw = yaml.safe_load(one_run_grid(data, tmp_path).read_text())
    raw["sizes"]["a"] = {"preset": "cpu-tiny", "hidden_size": 32}
    return raw


@pytest.mark.parametrize("change, words", [
    (lambda g: g["sizes"]["a"].update(hidden_size="32"), "sizes.a.hidden_size: '32' is in quotes"),
    (lambda g: g["base"].update(max_steps="1"), "max_steps: '1' is in quotes"),
    (lambda g: g["base"]["data"].update(seq_len="32"), "seq_len: '32' is in quotes"),
], ids=["U226-size", "base-int", "base-nested"])
def test_a_dicts_text_is_refused_where_a_number_belongs(data, tmp_path, change, words):
    from leviathan.experiments.machinery.grid import load_grid

    grid = _grid(data, tmp_path)
    change(grid)
    with pytest.raises(ConfigError, match=words):
        load_grid(grid)


def test_a_dict_of_numbers_and_names_loads_as_its_file_does(data, tmp_path):
    from leviathan.experiments.machinery.grid import load_grid

    grid = _grid(data, tmp_path)
    grid["base"]["optim"] = {"lr": "1e-3"}  # YAML 1.1 reads 1e-3 unquoted as text, and a config's numbers take it
    loaded = load_grid(grid)
    assert loaded.runs[0].model.hidden_size == 32 and "optim.lr=1e-3" in loaded.base_overrides
    path = tmp_path / "same.yaml"
    path.write_text(yaml.safe_dump(grid))
    from_file = load_grid(str(path))
    assert from_file.runs == loaded.runs and sorted(from_file.base_overrides) == sorted(loaded.base_overrides)
