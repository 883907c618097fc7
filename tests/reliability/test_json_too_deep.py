"""A JSON file the product reads back, nested 100,000 deep or holding a 5,000-digit integer, is refused as damaged
in one line naming the file (issue 30 round 18, G435-G447, G450, G460-G462): ``json.loads`` raised RecursionError
(or a plain ValueError for the digits) past every reader's ``except``, and the verb ended in a traceback.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

from leviathan.errors import UserError

DEEP = "[" * 100_000 + "]" * 100_000
DIGITS = '{"a": ' + "7" * 5000 + "}"


def test_loads_turns_every_failure_into_a_decode_error():
    import json

    from leviathan.json_text import loads

    for text in (DEEP, DIGITS, "{"):
        with pytest.raises(json.JSONDecodeError):
            loads(text)
    assert loads('{"a": [1]}') == {"a": [1]}


@pytest.mark.parametrize("text, words", [(DEEP, "nested too deeply"), (DIGITS, "4300 digits")])
def test_a_data_folder_whose_meta_json_is_too_deep_or_too_long_is_refused_in_one_line(data, finished_run, tmp_path,
                                                                                       text, words):
    """G435, G450: `leviathan eval RUN --data D` ended in RecursionError / ValueError from read_meta."""
    copy = tmp_path / "d"
    shutil.copytree(data, copy)
    (copy / "meta.json").write_text(text)
    line = cli_error(["eval", finished_run, "--data", copy])
    assert "meta.json" in line and words in line


@pytest.mark.parametrize("name", ["run.json", "checkpoints/step-00000004/state.json"])
def test_a_run_file_nested_too_deeply_is_one_line(run_copy, name):
    """G439 (state.json), G442 (run.json): `leviathan eval RUN` ended in a traceback."""
    (run_copy / name).write_text(DEEP)
    line = cli_error(["eval", run_copy])
    assert Path(name).name in line


def test_a_marker_nested_too_deeply_is_one_line_and_the_folder_is_kept(finished_run, exported, tmp_path):
    """G440, G460, G461: `leviathan export RUN OUT --overwrite` (and prepare, train's data folder) ended in a
    RecursionError from ownership.read_marker."""
    copy = tmp_path / "ex"
    shutil.copytree(exported, copy)
    (copy / "leviathan_output.json").write_text(DEEP)
    line = cli_error(["export", finished_run, copy, "--overwrite"])
    assert "leviathan_output.json" in line and "nested too deeply" in line
    assert (copy / "model.safetensors").is_file()


def test_the_readers_of_the_other_files_refuse_a_too_deep_file(data, run_copy, tmp_path):
    """G438/G443 (results.jsonl, metrics.jsonl), G441 (grid.json), G445 (embeddings record), G446 (an adopted
    config.json), G447 (leviathan_tokenizer.json), G462 (bench --json's earlier result)."""
    from leviathan.commands.bench import _check_earlier_result
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.experiments.machinery.embedding_files import read_record
    from leviathan.experiments.machinery.sweep_grid import read_sweep_grid
    from leviathan.hf.adoption import load_adopted
    from leviathan.jsonl import read_json_lines

    lines = tmp_path / "rows.jsonl"
    lines.write_text('{"a": 1}\n' + DEEP + "\n")
    assert read_json_lines(lines) == ([(1, {"a": 1})], [(2, "is not a JSON value Python can hold (its arrays or "
                                                            "objects are nested too deeply to read (thousands of "
                                                            "levels)), so it is no leviathan row")])
    (tmp_path / "grid.json").write_text(DEEP)
    (tmp_path / "config.json").write_text(DEEP)
    tokenizer = tmp_path / "tk"
    shutil.copytree(data, tokenizer)
    (tokenizer / "leviathan_tokenizer.json").write_text(DEEP)
    for call in (lambda: read_sweep_grid(tmp_path), lambda: read_record(tmp_path / "grid.json"),
                 lambda: load_adopted(tmp_path), lambda: load_tokenizer(tokenizer),
                 lambda: _check_earlier_result(tmp_path / "grid.json")):
        with pytest.raises(UserError):
            call()
