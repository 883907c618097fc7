"""``--tokenizer FOLDER`` takes the folder's own tokenizer only (issue 30 round 15, A195-A198): a tokenizer.json of
another preparation copied into an export (A195) or a step folder (A197) was used by ``prepare`` without a word,
while eval of the same folder refuses it; an edited leviathan_tokenizer.json said "re-create it" but not how (A196);
a run folder was "holds no tokenizer" with no word of the step folder that holds it (A198)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402
from test_bad_input import other_tokenizer_data  # noqa: E402,F401

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _prepare(data: Path, tokenizer: Path, out: Path) -> str:
    return cli_error(["prepare", data.parent / "corpus", "--out", out, "--tokenizer", tokenizer, "--val-fraction",
                      "0.2"])


def test_prepare_refuses_an_exports_tokenizer_json_it_did_not_write(data, exported, other_tokenizer_data, tmp_path):
    """A195."""
    ex = Path(shutil.copytree(exported, tmp_path / "ex"))
    shutil.copy(other_tokenizer_data / "tokenizer.json", ex / "tokenizer.json")
    line = _prepare(data, ex, tmp_path / "pp")
    assert "tokenizer.json' is not the file `leviathan export` wrote there" in line and "leviathan export RUN" in line
    assert not (tmp_path / "pp").exists()


def test_prepare_refuses_a_step_folders_tokenizer_json_it_did_not_save(data, run_copy, other_tokenizer_data,
                                                                        tmp_path):
    """A197."""
    step = run_copy / "checkpoints" / "step-00000004"
    shutil.copy(other_tokenizer_data / "tokenizer.json", step / "tokenizer.json")
    line = _prepare(data, step, tmp_path / "pp")
    assert "tokenizer.json' is not the file saved with this checkpoint" in line, line
    assert not (tmp_path / "pp").exists()


def test_an_edited_tokenizer_record_of_an_export_names_how_to_make_it_again(data, exported, tmp_path):
    """A196: the line says to export again, with the command."""
    ex = Path(shutil.copytree(exported, tmp_path / "ex"))
    record = json.loads((ex / "leviathan_tokenizer.json").read_text())
    (ex / "leviathan_tokenizer.json").write_text(json.dumps({**record, "eot_id": 5}))
    line = _prepare(data, ex, tmp_path / "pp")
    assert f"delete the edited export and export the checkpoint again (rm -r {ex}; leviathan export RUN {ex})" \
        in line, line


def test_a_run_folder_as_tokenizer_names_its_newest_step_folder(data, finished_run, tmp_path):
    """A198."""
    line = _prepare(data, finished_run, tmp_path / "pp")
    step = finished_run / "checkpoints" / "step-00000004"
    assert f"it is a run folder: its newest step folder {str(step)!r} holds the run's tokenizer" in line, line


@pytest.mark.parametrize("name", ["tokenizer.json", "leviathan_tokenizer.json"])
def test_tokenizer_save_never_writes_over_a_users_file(data, tmp_path, name):
    """Round 17 (E86, E87 damage): ``load_tokenizer(DATA).save(folder)`` replaced a user's own tokenizer.json or
    leviathan_tokenizer.json in a folder with no marker, no word (round 16 refused a verb's output only). Now such a
    file stops the save (``ownership.check_claim``), named with the fix; a folder save wrote earlier is saved again."""
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.errors import UserError

    tokenizer = load_tokenizer(str(data / "tokenizer.json"))
    users = tmp_path / "u"
    users.mkdir()
    (users / name).write_text('{"mine": 1}\n')
    with pytest.raises(UserError) as info:
        tokenizer.save(users)
    assert f"Tokenizer.save would write over {name} in {str(users)!r}, which it did not create" in str(info.value)
    assert "save into a folder of its own" in str(info.value), str(info.value)
    assert [p.name for p in users.iterdir()] == [name] and (users / name).read_text() == '{"mine": 1}\n'
    for _ in range(2):  # its own earlier save is replaced
        assert load_tokenizer(str(tokenizer.save(tmp_path / "own"))).fingerprint() == tokenizer.fingerprint()
