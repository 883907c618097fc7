"""A NUL byte in ``data.path`` (a YAML ``"\\0"`` in a config file, an override or a grid) is one ConfigError line
(issue 30 round 28, T4, T5): round 27 refused it in every output path, and this input path ended in the raw
"ValueError: embedded null byte" from realpath in ``build_run_config``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, cli  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_an_override_with_a_nul_in_data_path_is_one_line():
    from leviathan.errors import ConfigError
    from leviathan.run_config import load_run_config

    with pytest.raises(ConfigError, match=r"^data\.path 'd1\\x00x' holds a NUL byte \(character 3\)"):
        load_run_config("tiny", ['data.path="d1\\0x"'])


def test_a_config_file_with_a_nul_in_data_path_is_one_line_at_the_command_line(tmp_path):
    (tmp_path / "nul.yaml").write_text('data:\n  path: "d1\\0x"\nmax_steps: 1\n')
    done = cli(["train", "--config", "nul.yaml", "--run-dir", "r"], cwd=tmp_path, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "holds a NUL byte" in lines[0], done.stderr
    assert not (tmp_path / "r").exists()


def test_a_grid_with_a_nul_in_data_dir_is_one_line_when_swept(data, tmp_path):
    """Round 29, V1 (T5's grid case): ``sweep --list`` refused it in one line, but the sweep itself ended in
    ``ownership.check_apart``'s realpath: "ValueError: embedded null byte", exit 1."""
    import yaml

    (tmp_path / "d1").symlink_to(data)  # a prepared folder: the NUL, not a missing folder, is what stops it
    grid = {"name": "g", "data": {"dir": "d1\0"}, "seeds": [0],
            "base": {"max_steps": 1, "schedule": {"warmup_steps": 0}, "data": {"seq_len": 32}},
            "sizes": {"a": "cpu-tiny"}, "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}
    (tmp_path / "gn.yaml").write_text(yaml.safe_dump(grid))
    done = cli(["sweep", "--grid", "gn.yaml", "--out", "sn1", "--max-runs", "1"], cwd=tmp_path, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "NUL" in lines[0], done.stderr
    assert not (tmp_path / "sn1").exists()
