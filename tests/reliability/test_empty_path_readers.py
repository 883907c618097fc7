"""An empty path given to a reader is refused, not read as the current folder (issue 30 round 23, U480).
``find_checkpoint('')`` said "'.' holds no complete checkpoint", naming a folder never given, and
``list_checkpoints('')`` listed the current folder's checkpoints; other API readers refuse '' as "an empty path
('')" (``value_rules.check_read_path``), as the CLI does (``empty_paths``). Beyond the id: ``read_results('')`` was
[] and ``read_sweep_grid('')`` an empty grid without a word, ``write_sweep_records('')`` named '.', and
``metrics_file('')`` 'metrics.jsonl'. Round 28 (U463): ``io.data_root('')`` returned None ("no data folder") without
a word, so a caller's unset variable fell back to $LEVIATHAN_DATA; it is refused as the others are."""

from __future__ import annotations

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_the_checkpoint_readers_refuse_an_empty_path_and_no_path(tmp_path, monkeypatch):
    from leviathan.checkpoint import read
    from leviathan.checkpoint.find import find_checkpoint
    from leviathan.checkpoint.layout import latest_checkpoint, list_checkpoints

    monkeypatch.chdir(tmp_path)
    readers = {"find_checkpoint": find_checkpoint, "list_checkpoints": list_checkpoints,
               "load_tokenizer": read.load_tokenizer, "saved_tokenizer": read.saved_tokenizer}
    for name, reader in readers.items():
        with pytest.raises(UserError, match=rf"^{name}: \w+: is an empty path \(''\), which would be read as the "
                                            rf"current folder; pass a run folder"):
            reader("")
        with pytest.raises(UserError, match=rf"^{name}: \w+: expected a path .*, got None; pass a run folder"):
            reader(None)
    with pytest.raises(UserError, match="is an empty path"):
        latest_checkpoint("")


def test_the_results_and_metrics_readers_refuse_an_empty_path(tmp_path, monkeypatch):
    from leviathan.experiments.machinery.embedding_files import write_sweep_records
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.machinery.sweep_grid import read_sweep_grid
    from leviathan.io import metrics_file

    monkeypatch.chdir(tmp_path)
    for name, reader in {"read_results": read_results, "read_sweep_grid": read_sweep_grid,
                         "write_sweep_records": write_sweep_records, "metrics_file": metrics_file}.items():
        with pytest.raises(UserError, match=rf"^{name}: \w+: is an empty path \(''\), which would be read as the "
                                            rf"current folder; pass a "):
            reader("")


def test_data_root_refuses_an_empty_path(tmp_path, monkeypatch):
    from leviathan.io import data_root

    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path))
    with pytest.raises(UserError, match=r"^data_root: explicit: is an empty path \(''\), which would be read as the "
                                        r"current folder; pass the data folder, or None for the rule$"):
        data_root("")
    assert data_root(None) == tmp_path  # None is the rule: the setting
