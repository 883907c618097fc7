"""Two mappings of one section with no key in common are merged, as one mapping and the dotted keys are (issue 30
round 29: V22, "unclear").

Since round 28 (T74) a section mapping is merged key by key, but ``train 'data={path: d1}' 'data={seq_len: 64}'``
was refused as "data is given twice ..., and only one value can hold; keep one", and keeping one, as told, dropped
the other setting. ``config.check_repeated_overrides`` now compares the keys the two mappings hold
(``override_leaves``): only a key both set is given twice.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error  # noqa: E402


def test_two_disjoint_mappings_are_merged(data, tmp_path):
    proc = cli(["train", "--config", "tiny", f"data={{path: {data}}}", "data={seq_len: 64}", "--print-config"],
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    shown = yaml.safe_load(proc.stdout)
    assert (shown["data"]["path"], shown["data"]["seq_len"]) == (str(data), 64), proc.stdout
    one = cli(["train", "--config", "tiny", f"data={{path: {data}, seq_len: 64}}", "--print-config"], cwd=tmp_path)
    assert one.stdout == proc.stdout


def test_two_mappings_setting_one_key_are_refused(data, tmp_path):
    err = cli_error(["train", "--config", "tiny", f"data={{path: {data}, seq_len: 32}}", "data={seq_len: 64}",
                     "--print-config"], cwd=tmp_path)
    assert "data is given twice in the overrides" in err and "keep one" in err, err


def test_a_third_mapping_is_held_to_both_earlier_ones():
    import pytest

    from leviathan.config import ConfigError, check_repeated_overrides

    check_repeated_overrides(["optim={lr: 1}", "optim={weight_decay: 2}", "optim={betas: [0.9, 0.95]}"])
    with pytest.raises(ConfigError, match="optim is given twice on the command line .'optim=.lr: 1.'"):
        check_repeated_overrides(["optim={lr: 1}", "optim={weight_decay: 2}", "optim={lr: 3}"])
