"""Every public reader names its path argument when given something that is not a path (issue 30 round 20,
M333-M350): ``read_meta(None)``, ``load_grid(123)``, ``load_model(None)``, ``merge_sweeps([None])`` ... were os.fspath's
or os.stat's bare "TypeError: expected str, bytes or os.PathLike object, not NoneType", naming no argument and no fix
(the J244 kind, fixed for the writers in round 19). Each is now one UserError ``API: ARGUMENT: PROBLEM; FIX``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]

READERS = [  # (id, module, function, arguments, the argument's name)
    ("M333", "leviathan.data.meta", "read_meta", (None,), "data_dir"),
    ("M334", "leviathan.data.meta", "read_meta", (123,), "data_dir"),
    ("M335", "leviathan.data.companions", "load_train_freq", (None,), "data_dir"),
    ("M336", "leviathan.data.loader", "TokenDataset", (None, "train"), "data_dir"),
    ("M337", "leviathan.experiments.machinery.grid", "load_grid", (None,), "name_or_path"),
    ("M338", "leviathan.experiments.machinery.grid", "load_grid", (123,), "name_or_path"),
    ("M339", "leviathan.experiments.method.plateau", "unigram_entropy", (None,), "data_dir"),
    ("M340", "leviathan.run_config", "load_run_config", (123,), "path"),
    ("M342", "leviathan.experiments.machinery.embedding_files", "read_record", (None,), "path"),
    ("M343", "leviathan.checkpoint.read", "load_model", (None,), "path"),
    ("M346", "leviathan.hf", "load_adopted", (None,), "path"),
    ("M350", "leviathan.experiments.machinery.shards", "merge_sweeps", ([None],), "paths"),
]


@pytest.mark.parametrize("finding, module, function, args, name", READERS, ids=[r[0] for r in READERS])
def test_a_reader_given_no_path_names_its_argument(finding, module, function, args, name):
    """The reader's line names itself, the argument, what it got and what to pass."""
    reader = getattr(importlib.import_module(module), function)
    with pytest.raises(UserError) as info:
        reader(*args)
    message = str(info.value)
    given = "123" if 123 in args else "None"
    assert message.startswith(f"{function}: {name}: expected a path (a str or a pathlib.Path), got {given}; "), message
    assert "; pass " in message and "\n" not in message, message


def test_load_run_config_none_is_still_the_empty_start():
    """M340's footgun: None is load_run_config's documented empty start, not a missing path."""
    from leviathan.run_config import load_run_config

    assert load_run_config(None, ["max_steps=1", "model.vocab_size=300"], check_data=False).max_steps == 1


def test_unigram_entropy_of_a_folder_that_is_not_prepared_data_is_named(data, tmp_path):
    """Round 35 (AI202, AI203): ``unigram_entropy`` of an export folder or a path that does not exist returned None
    ("no plateau") without a word. A folder that is not a prepared data folder is a UserError naming it
    (``data_folder_problem``); a prepared folder still gives its entropy, and one without train_freq.npy None."""
    import shutil

    from leviathan.errors import UserError
    from leviathan.experiments.method.plateau import unigram_entropy

    with pytest.raises(UserError, match=r"data_dir '.*no/such' does not exist; pass the path of a prepared data"):
        unigram_entropy(tmp_path / "no" / "such")
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{}")
    with pytest.raises(UserError, match="not prepared data"):
        unigram_entropy(tmp_path / "hf")
    assert unigram_entropy(data) > 0
    older = Path(shutil.copytree(data, tmp_path / "older"))
    (older / "train_freq.npy").unlink()
    assert unigram_entropy(older) is None
