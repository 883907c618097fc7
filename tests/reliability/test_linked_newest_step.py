"""A resume whose newest step folder is a symbolic link to another run's step names the link (issue 30 round 23,
U325). ``train(cfg, RUN, resume='auto')`` with ``RUN/checkpoints/step-00000008`` a link to another folder's
step-00000004 was refused as "--resume 'auto' is a checkpoint of another run folder ...; continue it into a new
--run-dir, or continue this run with --resume auto": the fix named the option given, the link was not named, while
``load_model`` of the same folder says to move it out. ``branch.refuse_linked_step`` now names it, before anything
is written."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_resume_from_a_newest_step_that_links_elsewhere_names_the_link(run_copy, finished_run):
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    target = finished_run / "checkpoints" / "step-00000004"
    link = run_copy / "checkpoints" / "step-00000008"
    os.symlink(target, link)
    before, original = tree_hashes(run_copy), tree_hashes(finished_run)
    cfg = load_run_config(run_copy / "config.yaml", ["max_steps=10", "keep_last=1"])
    with pytest.raises(UserError) as e:
        train(cfg, run_copy, resume="auto", quiet=True)
    line = str(e.value)
    assert line.startswith(f"--resume 'auto' would continue from {str(link)!r}, but that step folder is a symbolic "
                           f"link to {str(target)!r}"), line
    assert f"move the link out of {str(run_copy / 'checkpoints')!r}" in line, line
    assert "continue this run with --resume auto" not in line, line
    assert tree_hashes(run_copy) == before and tree_hashes(finished_run) == original
