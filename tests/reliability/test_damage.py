"""Nothing damaged is silently accepted, nothing intact silently deleted (issue 22, cases 3-6).

- a meta.json whose vocab_size contradicts the tokenizer beside it is refused before a model is built;
- a run folder whose newest checkpoint has a damaged sidecar (state.json) is refused by train (resume or
  fresh start) and by eval, never wiped or passed over, and the fix works;
- a torn or non-UTF-8 row of results.jsonl is reported with its line number by report, analyze and the
  sweep, and the sweep trains that run again;
- a sweep rerun after its grid changed is refused with the differences, and grid.json is left as it was.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from leviathan.cli import main
from leviathan.config import dump_yaml
from leviathan.data.meta_digest import field_digests
from leviathan.experiments.machinery.grid import load_grid
from leviathan.experiments.machinery.results import read_results
from leviathan.experiments.machinery import sweep as sweep_module
from leviathan.experiments.machinery.sweep import SweepOptions, run_sweep
from leviathan.train import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error, run_overrides, tree_hashes  # noqa: E402
from test_sweep import FakeTrainer, grid_dict, replaced  # noqa: E402  (tests/integration is on the path)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

TWO = ["a-dense_tied-s0", "a-leviathan-s0"]  # the iso_body pair of the fake grid


def fails(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    return one_error(err)


# ---- meta.json against the tokenizer ------------------------------------------------------------
@pytest.mark.parametrize("key, value", [("vocab_size", 5000), ("eot_id", 7)])
def test_meta_json_that_contradicts_the_tokenizer_is_refused(capsys, data, tmp_path, key, value):
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    meta = json.loads((copy / "meta.json").read_text())
    edited = {**meta, key: value}
    edited["field_digests"] = field_digests(edited)  # edited as a whole: the tokenizer check answers (round 14)
    (copy / "meta.json").write_text(json.dumps(edited))
    line = fails(capsys, "train", *run_overrides(copy), "--run-dir", tmp_path / "run", "--quiet")
    assert f"meta.json says {key} {value} but the tokenizer of {str(copy)!r} has {key} {meta[key]}" in line
    assert "restore it, or re-run `leviathan prepare SOURCE --out" in line
    assert not (tmp_path / "run").exists()


# ---- a damaged sidecar in the newest checkpoint -------------------------------------------------
def _damage_state(step_dir: Path) -> None:
    raw = (step_dir / "state.json").read_text()
    (step_dir / "state.json").write_text(raw[: len(raw) // 2])


def test_damaged_state_of_the_only_checkpoint_is_refused_never_wiped(capsys, data, run_copy):
    shutil.rmtree(run_copy / "checkpoints" / "step-00000002")  # keep_last=1: step 4 is the only checkpoint
    only = run_copy / "checkpoints" / "step-00000004"
    _damage_state(only)
    before = tree_hashes(run_copy)
    for extra in (["--resume", "auto"], []):  # resuming, or starting over in the same folder
        line = fails(capsys, "train", *run_overrides(data, max_steps=6, keep_last=1), *extra, "--run-dir", run_copy,
                     "--quiet")
        assert f"the newest checkpoint {str(only)!r} is damaged (state.json is not readable JSON; its weights " \
               f"(model.safetensors) are intact)" in line
        assert "going on from step 0 would overwrite it" in line and "restore the damaged file" in line
        assert tree_hashes(run_copy) == before
    line = fails(capsys, "eval", run_copy, "--data", data)
    assert "is damaged (state.json is not readable JSON" in line
    assert tree_hashes(run_copy) == before


def test_damaged_newest_checkpoint_is_not_passed_over_and_the_fix_works(capsys, data, run_copy, tmp_path):
    newest = run_copy / "checkpoints" / "step-00000004"
    (newest / "optimizer.pt").unlink()
    line = fails(capsys, "train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto",
                 "--quiet")
    assert "(optimizer.pt missing; its weights (model.safetensors) are intact)" in line
    assert "going on from the previous checkpoint (step-00000002) would overwrite it" in line
    assert f"move that folder out of {str(run_copy / 'checkpoints')!r}" in line
    shutil.move(newest, tmp_path / "set-aside")  # the fix the message gives
    assert main(["train", *run_overrides(data, max_steps=6), "--run-dir", str(run_copy), "--resume", "auto",
                 "--quiet"]) == 0
    assert [s for s, _ in ckpt.list_checkpoints(run_copy)] == [2, 4, 6]


def test_a_newest_step_that_is_a_link_to_nothing_is_refused_and_removing_it_works(data, run_copy):
    """Round 18 (G401): checkpoints/step-00000008 -> /nonexistent (a disk not mounted, a folder moved) beside step 4:
    eval scored step 4 and a resume went on from step 4, no word of the newer entry, the link left in checkpoints/.
    Refused (real processes) naming the link and its target; removing the link, the fix given, lets the resume go."""
    from reliability_support import cli, cli_error

    link = run_copy / "checkpoints" / "step-00000008"
    link.symlink_to("/nonexistent")
    before = tree_hashes(run_copy)
    said = f"the newest checkpoint {str(link)!r} is a symbolic link to '/nonexistent', which does not exist"
    for argv in (["eval", run_copy], ["train", "--run-dir", run_copy, "--resume", "auto", "--quiet", "max_steps=6"]):
        line = cli_error(argv)
        assert said in line and f"remove the link (rm {str(link)!r}) to go on from the previous checkpoint " \
                                "(step-00000004)" in line, line
        assert tree_hashes(run_copy) == before and link.is_symlink()
    link.unlink()
    done = cli(["train", "--run-dir", run_copy, "--resume", "auto", "--quiet", "max_steps=6"])
    assert done.returncode == 0, done.stderr
    assert [s for s, _ in ckpt.list_checkpoints(run_copy)][-1] == 6


def test_resuming_an_older_step_of_the_same_run_folder_is_refused_and_both_fixes_work(capsys, data, run_copy,
                                                                                      tmp_path):
    """Round 14 (A179): ``--resume X/checkpoints/step-00000002`` into X itself, with step-00000004 on disk, cut
    metrics.jsonl back to step 2, appended the new branch's step 3, and keep_last then deleted step 2 and kept the
    old branch's step 4: one folder, two histories, exit 0. Refused before anything is written, naming the newer
    step and both fixes; a fork into a new --run-dir and the fix of moving the newer step out both work."""
    older = run_copy / "checkpoints" / "step-00000002"
    before = tree_hashes(run_copy)
    line = fails(capsys, "train", "max_steps=3", "keep_last=2", "--run-dir", run_copy, "--resume", older, "--quiet")
    assert f"is step 2 of run folder {str(run_copy)!r}, which holds newer steps (step-00000004)" in line
    assert f"leviathan train --run-dir NEW --resume {str(older)!r}" in line
    assert f"move the newer step folders out of {str(run_copy / 'checkpoints')!r} first" in line
    assert tree_hashes(run_copy) == before
    fork = tmp_path / "fork"  # A180: forks, the original untouched
    assert main(["train", "max_steps=3", "--run-dir", str(fork), "--resume", str(older), "--quiet"]) == 0
    assert [s for s, _ in ckpt.list_checkpoints(fork)] == [3] and tree_hashes(run_copy) == before
    shutil.move(run_copy / "checkpoints" / "step-00000004", tmp_path / "set-aside")
    assert main(["train", "max_steps=3", "--run-dir", str(run_copy), "--resume", str(older), "--quiet"]) == 0
    assert [s for s, _ in ckpt.list_checkpoints(run_copy)] == [2, 3]
    # the newest step itself (nothing newer) resumes as before
    newest = run_copy / "checkpoints" / "step-00000003"
    assert main(["train", "max_steps=4", "--run-dir", str(run_copy), "--resume", str(newest), "--quiet"]) == 0


def test_a_state_json_that_is_not_an_object_names_the_previous_checkpoint(data, run_copy):
    """Round 7 (B5): a newest state.json holding a JSON list counted as complete when the previous checkpoint was
    chosen, so the refusal said "going on from the previous checkpoint (step-00000004)", the damaged folder itself."""
    from reliability_support import cli_error

    newest = run_copy / "checkpoints" / "step-00000004"
    state = newest / "state.json"
    state.write_text(json.dumps([json.loads(state.read_text())]))
    before = tree_hashes(run_copy)
    line = cli_error(["eval", run_copy])
    assert "(state.json is not a JSON object; its weights (model.safetensors) are intact)" in line, line
    assert "going on from the previous checkpoint (step-00000002) would overwrite it" in line, line
    assert [s for s, _ in ckpt.list_checkpoints(run_copy)] == [2]
    assert tree_hashes(run_copy) == before


# ---- torn rows of results.jsonl -----------------------------------------------------------------
class StepsTrainer(FakeTrainer):
    """The fake trainer whose summary's tokens are its steps x the run config's batch_tokens, as real training's
    are: a rerun sweep checks a run folder's sweep_train.json against the row rules (issue 30 round 20, K192)."""

    def __call__(self, cfg, run_dir, resume=None):
        summary = super().__call__(cfg, run_dir, resume)
        return {**summary, "tokens": summary["steps"] * cfg.resolved().batch_tokens}


def _sweep(out: Path, trainer, grid=None, **kw):
    g = load_grid(grid or grid_dict())
    with replaced(trainer, config_fn=sweep_module.build_run_config):  # real run configs: the drift check reads them
        return run_sweep(g, out, SweepOptions(**kw), log=print)


@pytest.fixture
def two_rows(tmp_path) -> Path:
    out = tmp_path / "out"
    _sweep(out, StepsTrainer(), only=TWO)
    assert len(read_results(out)) == 2
    return out


def _tear_first_row(out: Path) -> str:
    lines = (out / "results.jsonl").read_bytes().split(b"\n")
    lines[0] = lines[0][: len(lines[0]) // 2]
    (out / "results.jsonl").write_bytes(b"\n".join(lines))
    return json.loads(lines[1])["name"]


def _latin1_first_row(out: Path) -> str:
    lines = (out / "results.jsonl").read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"name": "', b'"name": "\xe9', 1)
    (out / "results.jsonl").write_bytes(b"\n".join(lines))
    return json.loads(lines[1])["name"]


@pytest.mark.parametrize("damage, why", [
    (_tear_first_row, "line 1 is not a whole JSON value (cut short or damaged)"),
    (_latin1_first_row, "line 1 is not UTF-8 text (byte 0xe9 at column"),
], ids=["torn", "not-utf8"])
def test_damaged_row_is_reported_by_every_reader_and_rerun_by_the_sweep(capsys, two_rows, damage, why):
    kept = damage(two_rows)
    results = two_rows / "results.jsonl"
    where = f"warning: {results}:1: {why}"
    assert [r.name for r in read_results(two_rows)] == [kept]
    assert where in capsys.readouterr().err
    assert main(["analyze", "compare", str(two_rows)]) in (0, 2)
    assert where in capsys.readouterr().err
    assert main(["report", str(two_rows), "--out", str(two_rows / "report"), "--bootstrap", "10"]) in (0, 2)
    err = capsys.readouterr().err
    assert where in err and "Traceback" not in err
    trainer = StepsTrainer()
    rows = _sweep(two_rows, trainer, only=TWO)
    out = capsys.readouterr()
    assert where in out.err and "1 already in" in out.out
    assert [r.name for r in rows] == ["a-dense_tied-s0"]  # the damaged row's run, done again
    assert sorted(r.name for r in read_results(two_rows)) == ["a-dense_tied-s0", "a-leviathan-s0"]


# ---- a sweep whose grid changed -----------------------------------------------------------------
class ConfigTrainer(StepsTrainer):
    """The fake trainer that also writes the run's config.yaml, as real training does (rows then carry it), and
    whose summary is one that config could train: its steps' tokens and its model's parameter counts (a row whose
    numbers contradict its own config is skipped as impossible, round 10's N53 and P59)."""

    def __call__(self, cfg, run_dir, resume=None):
        from leviathan.model.accounting import count_config

        Path(run_dir, "config.yaml").write_text(dump_yaml(cfg.resolved()))
        summary = super().__call__(cfg, run_dir, resume)
        return {**summary, "params": count_config(cfg.resolved().model).as_dict()}


def _changed_grid(**base) -> dict:
    g = grid_dict()
    g["base"] = {**g["base"], **base}
    return g


def test_sweep_rerun_after_the_grid_changed_is_refused(capsys, tmp_path):
    out = tmp_path / "out"
    _sweep(out, ConfigTrainer(), only=TWO)
    assert all(r.config and r.config["optim"]["lr"] for r in read_results(out))
    snapshot = (out / "grid.json").read_bytes()
    results = (out / "results.jsonl").read_bytes()
    assert _sweep(out, ConfigTrainer(), only=TWO) == []  # unchanged: nothing to do, no complaint
    with pytest.raises(Exception) as e:
        _sweep(out, ConfigTrainer(), grid=_changed_grid(optim={"lr": 3e-3}))
    message = str(e.value)
    assert type(e.value).__name__ == "UserError"
    assert "grid 'fake' has changed since these rows were trained (2 difference(s)" in message
    assert "a-dense_tied-s0: optim.lr: 0.0003 in the row, 0.003 now" in message
    assert "sweep into a new --out, or remove those runs' rows" in message
    assert (out / "grid.json").read_bytes() == snapshot and (out / "results.jsonl").read_bytes() == results
    with pytest.raises(Exception, match="max_steps: 4 in the row, 5 now"):
        _sweep(out, ConfigTrainer(), grid=_changed_grid(max_steps=5))
    assert (out / "grid.json").read_bytes() == snapshot


def test_rows_without_a_config_are_accepted_with_a_note(capsys, tmp_path):
    out = tmp_path / "out"
    _sweep(out, FakeTrainer(), only=TWO)  # the plain fake writes no config.yaml: rows record none
    assert all(r.config is None for r in read_results(out))
    capsys.readouterr()
    assert _sweep(out, FakeTrainer(), grid=_changed_grid(optim={"lr": 3e-3}), only=TWO) == []
    assert "note: 2 row(s) record no config (written before rows carried one) and are not checked" in \
        capsys.readouterr().out
