"""Public functions hold their arguments to the rule a sibling function already applies (issue 30 round 24).

The kind: an argument of the wrong type or meaning was taken unchecked, returning nonsense without a word or failing
deep inside with a raw TypeError. ``analyze`` took what ``write_report`` refuses (W476-W478), ``paired_comparisons``
a negative plateau and eval sets no row holds, or a text read letter by letter (W471-W473); ``read_results`` of a
sweep's runs/ folder was [] (W455); ``load_grid`` kept an override the run config refuses (W497), a data_dir of 5
(W504) and read a sweep's grid.json dict as a grid with an unknown key (W489); ``run_sweep(log=None)`` was "'NoneType'
object is not callable" (W718); ``latest_checkpoint`` of a run's checkpoints folder was None and ``is_complete`` of a
str a raw TypeError (W568, W569); ``BatchLoader`` of a text file said the path does not exist (W382);
``load_run_config(check_data='no')`` ran the check (W426). Each is now one line naming the argument and the fix;
the values that mean something still answer.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import tree_hashes  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability]


def _grid_path(swept: Path) -> str:
    """The grid file the fixture swept (``swept_grid``: ROOT/grid.yaml beside ROOT/sweep)."""
    return str(swept.parent / "grid.yaml")


def test_analyze_refuses_what_write_report_refuses(swept):
    """W476-W478: num_bootstrap=-1, seed=-1 and ladder='nope' returned an Analysis; a plateau of -1 nats too."""
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.report.analysis import analyze

    rows = read_results(swept)
    for kwargs, said in [({"num_bootstrap": -1}, r"analyze: num_bootstrap: must be a whole number >= 0, got -1; pass"),
                         ({"seed": -1}, r"analyze: seed: must be an integer in \[0, 4294967295\]"),
                         ({"ladder": "nope"}, r"analyze: ladder: must be one of dense_tied, .* got 'nope'; pass"),
                         ({"ci": 2.0}, r"analyze: ci: must lie strictly between 0 and 1"),
                         ({"plateau": -1.0}, r"analyze: plateau: must be a finite loss \(nats\) above 0, got -1.0")]:
        with pytest.raises(UserError, match=said):
            analyze(rows, **kwargs)
    assert analyze(rows, num_bootstrap=0, seed=3, ladder="dense_tied", plateau=5.0).num_runs == 2


def test_paired_comparisons_refuses_a_negative_plateau_and_eval_sets_no_row_holds(swept):
    """W471: plateau=-1.0 was taken; W472: eval_sets=['nope'] gave comparisons of n=0; W473: 'val' was iterated as
    'v', 'a', 'l'. The rows' own sets still answer."""
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.method.paired import paired_comparisons

    rows = read_results(swept)
    with pytest.raises(UserError, match=r"paired_comparisons: plateau: must be a finite loss \(nats\) above 0, got "
                                        r"-1.0; pass the unigram plateau's loss"):
        paired_comparisons(rows, plateau=-1.0)
    with pytest.raises(UserError, match=r"paired_comparisons: eval_sets: no row was evaluated on 'nope'; pass a list "
                                        r"of the sets the rows hold \(val\)"):
        paired_comparisons(rows, eval_sets=["nope"])
    for value in ("val", 5, [""]):
        with pytest.raises(UserError, match=r"paired_comparisons: eval_sets: "):
            paired_comparisons(rows, eval_sets=value)
    assert list(paired_comparisons(rows, eval_sets=["val"])[0].eval) == ["val"]


def test_read_results_names_a_folder_inside_a_sweep_and_another_verbs(swept, tmp_path):
    """W455: read_results('sw1/runs') was [] without a word; a run folder too. A sweep folder before its first row
    (its grid.json written) is still no rows; an empty folder, no sweep's, is refused (round 28, U603)."""
    from leviathan.experiments.machinery.results import read_results

    with pytest.raises(UserError, match=r"results '.*runs' holds no results.jsonl: it is a folder inside the sweep "
                                        r"folder '.*'; pass a sweep output dir or its results.jsonl"):
        read_results(swept / "runs")
    run = next((swept / "runs").iterdir())
    with pytest.raises(UserError, match=r"holds no results.jsonl: it is a train run folder"):
        read_results(run)
    (tmp_path / "new").mkdir()
    with pytest.raises(UserError, match=r"holds no results.jsonl, and nothing of a sweep"):
        read_results(tmp_path / "new")
    shutil.copy(swept / "grid.json", tmp_path / "new" / "grid.json")
    assert read_results(tmp_path / "new") == []


def test_load_grid_checks_overrides_and_data_dir_as_the_run_config_does(swept, data):
    """W497: overrides=['optim.lr=nan'] returned a Grid carrying it; W504: data_dir=5 became Path('5'); W489: a sweep's
    grid.json read into a dict was "unknown key 'base_overrides'"."""
    from leviathan.experiments.machinery.grid import load_grid

    grid = _grid_path(swept)
    with pytest.raises(UserError, match=r"grid 'tiny', with the overrides given \('optim.lr=nan'\): optim.lr: expected "
                                        r"a finite number, got nan"):
        load_grid(grid, data_dir=str(data), overrides=["optim.lr=nan"])
    with pytest.raises(UserError, match=r"max_steps: expected an integer, got 2.5"):
        load_grid(grid, overrides=["max_steps=2.5"])
    with pytest.raises(UserError, match=r"load_grid: data_dir: expected a path \(a str or a pathlib.Path\), got 5; "):
        load_grid(grid, data_dir=5)
    record = json.loads((swept / "grid.json").read_text())
    with pytest.raises(UserError, match=r"the grid given \(a dict\) is a sweep's grid.json .*, not a grid; pass the "
                                        r"grid file it records, '.*grid.yaml', or its dict"):
        load_grid(record, data_dir=str(data))
    assert load_grid(grid, overrides=["optim.lr=1e-3", "max_steps=3"]).base_overrides[-2:] == ["optim.lr=1e-3",
                                                                                              "max_steps=3"]
    assert load_grid(grid, overrides=["max_steps=null", "max_tokens=256"]).runs  # together they hold


def test_run_sweep_takes_log_none_as_the_default(swept, tmp_path):
    """W718: run_sweep(grid, folder, log=None) was "'NoneType' object is not callable" after its checks."""
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import run_sweep

    copy = Path(shutil.copytree(swept, tmp_path / "sw"))
    before = tree_hashes(copy / "runs")
    assert run_sweep(load_grid(_grid_path(swept)), copy, log=None) == []
    assert tree_hashes(copy / "runs") == before


def test_checkpoint_layout_names_a_checkpoints_folder_and_takes_a_str(swept):
    """W568: latest_checkpoint('run/checkpoints') was None beside a complete step; W569: is_complete(str) was the raw
    "unsupported operand type(s) for /"; W565: step_of(None) was re's TypeError."""
    from leviathan.checkpoint.layout import is_complete, latest_checkpoint, list_checkpoints, step_of
    from leviathan.errors import ArgumentTypeError

    run = sorted((swept / "runs").iterdir())[0]
    step = latest_checkpoint(run)
    assert step is not None and is_complete(str(step))
    with pytest.raises(UserError, match=r"latest_checkpoint: run_dir '.*checkpoints' is a run's checkpoints folder, "
                                        r"not a run folder; pass the run folder"):
        latest_checkpoint(run / "checkpoints")
    with pytest.raises(UserError, match=r"list_checkpoints: run_dir '.*step-\d+' is a step folder, not a run folder"):
        list_checkpoints(str(step))
    with pytest.raises(ArgumentTypeError, match=r"step_of: name: expected a folder name \(a str such as "):
        step_of(None)


def test_batch_loader_names_a_text_file_given_as_its_data_folder(tmp_path):
    """W382: BatchLoader('corpus/p01.txt', ...) said "data dir ... does not exist; run `leviathan prepare SOURCE --out
    corpus/p01.txt`": the file exists, and preparing into it is no fix."""
    from leviathan.data.loader import BatchLoader

    text = tmp_path / "p01.txt"
    text.write_text("some text to train on\n" * 10)
    with pytest.raises(UserError, match=r"data dir .*p01.txt is a file, not a folder; pass a folder `leviathan "
                                        r"prepare` wrote \(`leviathan prepare .*p01.txt --out DIR` makes one of a "
                                        r"text file\)"):
        BatchLoader(str(text), 16, 2)


def test_load_run_config_refuses_a_text_as_its_switches(data):
    """W426: check_data='no' was read as true and the vocabulary check ran; False still skips it."""
    from leviathan.run_config import load_run_config

    from reliability_support import tiny_overrides

    overrides = tiny_overrides(data, **{"model.vocab_size": 299})
    with pytest.raises(TypeError, match=r"load_run_config: check_data must be True or False, got 'no'; pass "):
        load_run_config(None, overrides, check_data="no")
    with pytest.raises(TypeError, match=r"load_run_config: layered must be True or False, got 1"):
        load_run_config(None, overrides, check_data=False, layered=1)
    assert load_run_config(None, overrides, check_data=False).model.vocab_size == 299
