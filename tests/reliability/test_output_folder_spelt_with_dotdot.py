"""An output folder typed with a '..' is refused in one line naming the spelling, before anything is made (issue 30
round 28, T2, U770).

T2: ``train --run-dir 'tr/x/..'`` (and ``sweep --out``, ``export``, ``report --out``) where tr is new or empty made
tr/x on the way (``mkdir(parents=True)`` of the path) and then refused tr for holding "files it did not write: x",
the wrong cause. The system follows a '..' only out of a folder that exists; the shared output check
(``ownership.check_not_inside``) now asks ``empty_paths.refuse_up_through_nothing`` first.

U770: ``save_pretrained('t/a770/..')`` of an adopted model wrote config.json and the weights among the 250 files of
t, the folder above the one typed. A model's save or export folder ending in '..' is refused
(``empty_paths.refuse_folder_above``, asked by ``save_folder.check_save_directory`` and the export's ``_atomic_dir``);
'out/.' still names out itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, grid_file, run_overrides  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _up_through(option: str, typed: str, above: str, own: str) -> str:
    return (f"error: {option} '{typed}' goes up ('..') out of '{above}', which does not exist, so it names no folder "
            f"the system can reach; nothing was made; give the folder by its own path, '{own}'")


def test_train_refuses_a_run_dir_going_up_out_of_a_folder_that_does_not_exist(tmp_path, data):
    (tmp_path / "tr3").mkdir()
    for parent in ("tr", "tr3"):
        line = cli_error(["train", "--run-dir", f"{parent}/x/..", *run_overrides(data, max_steps=1)], cwd=tmp_path)
        assert line == _up_through("--run-dir", f"{parent}/x/..", f"{parent}/x", parent), line
    assert not (tmp_path / "tr").exists() and list((tmp_path / "tr3").iterdir()) == []


def test_sweep_and_export_refuse_the_same_spelling(tmp_path, data, finished_run):
    grid = grid_file(tmp_path, data)
    line = cli_error(["sweep", "--grid", grid, "--out", "sw/x/..", "--max-runs", "1"], cwd=tmp_path)
    assert line == _up_through("--out", "sw/x/..", "sw/x", "sw"), line
    line = cli_error(["export", finished_run, "nw/x/.."], cwd=tmp_path)
    assert line == _up_through("out_dir", "nw/x/..", "nw/x", "nw"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.yaml"]


def test_report_refuses_it_through_the_api(tmp_path, one_run_sweep, monkeypatch):
    from leviathan.experiments.report import write_report

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=r"^--out 'rq/x/\.\.' goes up \('\.\.'\) out of 'rq/x', which does not exist"):
        write_report(one_run_sweep, "rq/x/..")
    assert list(tmp_path.iterdir()) == []


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64))


def test_a_model_save_or_export_ending_in_dotdot_is_refused(tmp_path, monkeypatch):
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf import adopt
    from leviathan.hf.export import from_native, to_hf

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t" / "a770").mkdir(parents=True)
    (tmp_path / "t" / "users.txt").write_text("the user's own file")
    native = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                  max_position_embeddings=64))
    said = (r"^{who} 't/a770/\.\.' ends in '\.\.', which names the folder above 't/a770', not a folder of its own; "
            r"nothing was written; give the folder by its own path, 't', if its files are meant to go there$")
    for who, call in (("save_pretrained", lambda: adopt(_llama(), seed_dim=8, modes=2, knots=8,
                                                        rank=4).save_pretrained("t/a770/..")),
                      ("save_pretrained", lambda: from_native(native).save_pretrained(Path("t/a770/.."))),
                      ("out_dir", lambda: to_hf(native, "t/a770/.."))):
        with pytest.raises(UserError, match=said.format(who=who)):
            call()
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["a770", "users.txt"]
    assert list((tmp_path / "t" / "a770").iterdir()) == []
    from_native(native).save_pretrained("t/a770/.")  # '.' names the folder itself (round 28, U768)
    assert (tmp_path / "t" / "a770" / "config.json").is_file()
