"""A mapping given for a whole section on the command line is merged into it, as the dotted overrides would set it
(issue 30 round 28: T74, "unclear").

``train --config tiny 'data={path: d1}'`` replaced tiny's whole data section, so its seq_len 128 fell back to the
code's 512, and the refusal named ``data.seq_len=512``, a value the user never gave. ``config.apply_overrides`` now
merges a mapping key by key; ``check_repeated_overrides`` and ``layered_overrides`` look at the keys it holds
(``override_leaves``), so ``optim.weight_decay=0.2 'optim={lr: 1e-3}'`` no longer collide while ``optim.lr=1
'optim={lr: 2}'`` still do.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402


def test_a_data_mapping_keeps_the_configs_other_data_keys(data, tmp_path):
    proc = cli(["train", "--config", "tiny", "max_steps=1", f"data={{path: {data}}}", "--print-config"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    shown = yaml.safe_load(proc.stdout)
    assert shown["data"]["seq_len"] == 128 and shown["data"]["path"] == str(data), proc.stdout
    dotted = cli(["train", "--config", "tiny", "max_steps=1", f"data.path={data}", "--print-config"], cwd=tmp_path)
    assert dotted.stdout == proc.stdout


def test_keys_merged_from_a_mapping_collide_only_where_they_meet(data):
    from leviathan.config import ConfigError, layered_overrides
    from leviathan.run_config import load_run_config

    cfg = load_run_config("tiny", [f"data.path={data}", "optim.weight_decay=0.2", "optim={lr: 1e-3}"])
    assert (cfg.optim.weight_decay, cfg.optim.lr, cfg.data.seq_len) == (0.2, 1e-3, 128)
    with pytest.raises(ConfigError, match=r"optim.lr is set twice in the overrides: by 'optim.lr=1' and by "):
        load_run_config("tiny", [f"data.path={data}", "optim.lr=1", "optim={lr: 2}"])
    assert layered_overrides(["optim.lr=1", "optim.weight_decay=2", "optim={lr: 3}"]) == [
        "optim.weight_decay=2", "optim={lr: 3}"]
