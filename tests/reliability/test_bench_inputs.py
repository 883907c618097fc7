"""``leviathan bench``'s inputs (issue 30 round 15): an empty ``--only`` was read as "every section" (A34), running
train, modes, generator, memory, decode and hf for 85 s where ``--config ''`` is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize("only", ["", " , "])
def test_bench_refuses_an_empty_only(tmp_path, only):
    """A34: one line, before any timing."""
    line = cli_error(["bench", "--quick", "--config", "tiny", "--only", only, "--cache-dir", tmp_path / "bc"])
    assert line.startswith("error: --only is empty; name the sections to run (of train, "), line
    assert not (tmp_path / "bc").exists()
