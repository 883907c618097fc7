"""An API writer given a folder ending in '..' refuses it (issue 30 round 29, W576, W620).

``write_hf_tokenizer(tok, 't/k576/..')`` wrote tokenizer.json and tokenizer_config.json into t, the folder above
(a folder of the user's files), and ``run_identity.write_identity('t/ri620/..', identity)`` wrote run.json there,
without a word: round 28's ``empty_paths.refuse_folder_above`` guarded ``save_pretrained`` and the exports, and
W603's fix ``write_marker``, not these. It is now asked by ``ownership.check_api_folder``, the check every API
writer of a folder passes (``Tokenizer.save``, ``write_hf_tokenizer``, ``save_pretrained``), and by
``write_identity``. Nothing is written, and the same writers still take the folder by its own path.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import tree_hashes  # noqa: E402

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _users_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "t"
    (folder / "k").mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    return folder


def _writers(data: Path):
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.eval.hf_tokenizer import write_hf_tokenizer
    from leviathan.run_identity import RunIdentity, new_run_id, write_identity

    tok = load_tokenizer(str(data))
    return {"write_hf_tokenizer": lambda folder: write_hf_tokenizer(tok, folder),
            "Tokenizer.save": lambda folder: tok.save(folder),
            "write_identity: run_dir": lambda folder: write_identity(folder, RunIdentity(new_run_id()))}


@pytest.mark.parametrize("who", ["write_hf_tokenizer", "Tokenizer.save", "write_identity: run_dir"])
@pytest.mark.parametrize("typed", [str, Path])
def test_a_folder_ending_in_dotdot_is_refused_and_nothing_written(data, tmp_path, who, typed):
    folder = _users_folder(tmp_path)
    before = tree_hashes(folder)
    above = typed(f"{folder}/k/..")
    with pytest.raises(UserError, match=rf"^{who} '{folder}/k/\.\.' ends in '\.\.', which names the folder above "
                                        rf"'{folder}/k', not a folder of its own; nothing was written; give the "
                                        rf"folder by its own path, '{folder}'"):
        _writers(data)[who](above)
    assert tree_hashes(folder) == before and sorted(p.name for p in folder.iterdir()) == ["k", "notes.txt"]
    _writers(data)[who](folder / "k")  # the folder by its own path is written as before
    assert any((folder / "k").iterdir())
