"""A verb given a bad input makes none of its output (issue 30 round 16, damage): it checks everything it can first.

``leviathan lm-eval ... --out OUT`` created OUT and its leviathan_output.json before it checked the task names, the
task files under --data-root, the device and the source: each error left an OUT holding only lm-eval's marker, an
evaluation output with no result (C51, C56-C59).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_lm_eval_checks_its_inputs_before_it_makes_its_out(exported, data, tmp_path):
    """C51 (unknown task), C56 (no task files under --data-root), C57 (--device cuda without CUDA), C58 (an empty
    item in --tasks), C59 (a data folder as the source): one error each and no --out folder."""
    empty, root = tmp_path / "emptyroot", tmp_path / "root"
    empty.mkdir()
    (root / "piqa").mkdir(parents=True)
    for name in ("valid.jsonl", "valid-labels.lst"):  # present: the source is what is wrong
        (root / "piqa" / name).write_text("")
    tries = {"unknown task 'copa'": [exported, "--tasks", "copa"],
             "missing data file(s)": [exported, "--tasks", "piqa", "--data-root", empty],
             "an empty item in --tasks": [exported, "--tasks", ",,"],
             "prepared data folder": [data, "--tasks", "piqa", "--data-root", root]}
    if not torch.cuda.is_available():
        tries["CUDA is not available"] = [exported, "--tasks", "piqa", "--device", "cuda", "--data-root", empty]
    for i, (words, argv) in enumerate(tries.items()):
        out = tmp_path / f"lm{i}"
        line = cli_error(["lm-eval", *argv, "--limit", "2", "--out", out])
        assert words in line, line
        assert not out.exists(), (line, sorted(p.name for p in out.iterdir()))
