"""A '..' out of a folder that does not exist is named on the value the user typed (issue 30 round 29, V17).

``analyze embeddings --sweep S --dest 'sd/x/..'`` (no sd) said "--dest 'sd/x/../embeddings/a-dense_tied-s0.json'
goes up ...; give the folder by its own path, 'sd/embeddings/a-dense_tied-s0.json'": a path the user never typed,
and a fix that, followed, made sd/embeddings/a-dense_tied-s0.json/embeddings/... ``embedding_files._check_dest`` now
asks ``empty_paths.refuse_up_through_nothing`` of --dest itself, before any record is computed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402


def test_dest_up_through_nothing_is_named_as_typed(one_run_sweep, tmp_path):
    err = cli_error(["analyze", "embeddings", "--sweep", one_run_sweep, "--dest", "sd/x/.."], cwd=tmp_path)
    assert err.startswith("error: --dest 'sd/x/..' goes up ('..') out of 'sd/x', which does not exist"), err
    assert err.endswith("give the folder by its own path, 'sd'"), err
    assert "embeddings" not in err
    assert list(tmp_path.iterdir()) == []
