"""A file or folder of another of the product's kinds, given where results, a config or a sweep is expected, is named
for what it is and the verb that writes it (``leviathan.file_kinds``), in one line, before anything is written.

Issue 30 round 17: D289-D291, E29, E31 (a run config, a grid, a token file as results: a warning per line that it was
a damaged row), E393, E396-E399 (an export's config.json, lm_eval.json, analysis.json, summary.json as a config:
"unknown key ... in RunConfig"), E300 (load_grid of a run config dict named the file 'None'), D298, D299, D303
(`sweep --reuse` of a report, data or run folder: "no rows there yet", exit 0).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error, one_run_grid, run_overrides  # noqa: E402

def _fails(capsys, argv: list) -> str:
    """Run the CLI in this process (``leviathan.cli.main``), expect exit 2 and one line on stderr: that line."""
    from leviathan.cli import main

    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err  # the error line alone: no warning per line before it
    return one_error(err)


RESULTS_FIX = "pass a sweep output dir or its results.jsonl (written by `leviathan sweep`)"


def _run_config(data: Path, folder: Path) -> Path:
    """A train run config file (the finished run's settings as nested YAML)."""
    config: dict = {}
    for item in run_overrides(data):
        key, value = item.split("=", 1)
        node = config
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = yaml.safe_load(value)
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_config_a_grid_or_a_token_file_given_as_results_is_named_with_its_verb(capsys, data, tmp_path):
    """D289, D290, D291, E29, E31: ``report run.yaml``, ``analyze compare g1.yaml`` and ``report DATA/train.bin``
    printed a warning per line that it was a damaged row the sweep would train again, then "no result rows"."""
    cases = ((_run_config(data, tmp_path), "a train run config (read by `leviathan train --config`)"),
             (one_run_grid(data, tmp_path), "a sweep grid (read by `leviathan sweep --grid`)"),
             (data / "train.bin", "a token file of a prepared data folder (written by `leviathan prepare`)"))
    for path, what in cases:
        for argv in (["report", path, "--out", tmp_path / "rep"], ["analyze", "compare", path]):
            assert _fails(capsys, argv) == (f"error: no result rows in {str(path)!r}, which is not a results file: it is "
                                            f"{what}; {RESULTS_FIX}")
    proc = cli(["report", cases[0][0], "--out", tmp_path / "rep"])  # a real process: the same one line, exit 2
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "it is a train run config (read by `leviathan train --config`)" in one_error(proc.stderr)
    assert not (tmp_path / "rep").exists()


def test_a_json_file_leviathan_writes_given_as_a_config_is_named_with_its_verb(finished_run, exported, tmp_path):
    """E393, E396, E397, E398, E399: an export's config.json, lm-eval's lm_eval.json, a report's analysis.json and a
    run's summary.json given as a run config were "unknown key 'embedding' in RunConfig; did you mean ..."."""
    from leviathan.errors import ConfigError
    from leviathan.run_config import load_run_config

    lm_eval = tmp_path / "lm_eval.json"
    lm_eval.write_text(json.dumps({"source": str(exported), "hf_dir": None, "tasks": {}, "verify": {},
                                   "results": {}}))
    analysis = tmp_path / "analysis.json"
    analysis.write_text(json.dumps({"num_runs": 2, "eval_set": "val", "eval_sets": ["val"], "comparisons": {}}))
    cases = ((exported / "config.json", "a Hugging Face model config (config.json, written by `leviathan export` or "
                                        "save_pretrained)"),
             (lm_eval, "lm-eval's results (lm_eval.json, written by `leviathan lm-eval`)"),
             (analysis, "a report's analysis.json (written by `leviathan report`)"),
             (finished_run / "summary.json", "a run's summary.json (written by `leviathan train`)"))
    for path, what in cases:
        with pytest.raises(ConfigError) as caught:
            load_run_config(path)
        assert str(caught.value).startswith(f"config file {str(path)!r} is {what}, not YAML settings; "), caught.value
    proc = cli(["train", "--config", exported / "config.json", "--run-dir", tmp_path / "run"])
    assert proc.returncode == 2 and "is a Hugging Face model config (config.json" in one_error(proc.stderr)
    assert not (tmp_path / "run").exists()


def test_load_grid_of_a_run_config_dict_names_no_file(data, tmp_path):
    """E300: ``load_grid(yaml.safe_load(open('t.yaml')))`` said "grid file 'None' is a run config ... train it with
    `leviathan train --config None`"."""
    from leviathan.errors import ConfigError
    from leviathan.experiments.machinery.grid import load_grid

    with pytest.raises(ConfigError) as caught:
        load_grid(yaml.safe_load(_run_config(data, tmp_path).read_text()))
    said = str(caught.value)
    assert said.startswith("the grid given (a dict) is a run config (it has ") and "None" not in said, said


def test_sweep_reuse_of_a_folder_that_is_not_a_sweep_is_refused_before_out_is_made(capsys, data, finished_run,
                                                                                   tmp_path):
    """D298, D299, D303: ``sweep --reuse`` of a report's folder, a data folder or a train run folder said "no rows
    there yet; nothing reused from it" and trained every run, exit 0; a missing folder the same."""
    from leviathan.ownership import write_marker

    report = tmp_path / "rep"
    report.mkdir()
    write_marker(report, "report")  # as report marks its new folder, before its first file
    (report / "report.md").write_text("# report\n")
    grid = one_run_grid(data, tmp_path)
    cases = ((report, "a report folder (written by `leviathan report`)"),
             (data, "a prepared data folder (written by `leviathan prepare`)"),
             (finished_run, "a train run folder (written by `leviathan train`)"))
    for source, what in cases:
        assert _fails(capsys, ["sweep", "--grid", grid, "--out", tmp_path / "sw", "--reuse", source]) == (
            f"error: --reuse {source} is {what}, not a sweep's folder: it holds no result "
            f"rows to reuse; pass a sweep's --out folder (it holds results.jsonl)")
    assert "does not exist; pass a sweep's --out folder" in _fails(capsys, ["sweep", "--grid", grid, "--out",
                                                                            tmp_path / "sw", "--reuse", tmp_path / "no"])
    (tmp_path / "afile").write_text("x\n")  # round 19 (H192): the folder it lies in was read, "no rows there yet"
    assert _fails(capsys, ["sweep", "--grid", grid, "--out", tmp_path / "sw", "--reuse", tmp_path / "afile"]) == (
        f"error: --reuse {tmp_path / 'afile'} is a file, not a sweep's folder or its results.jsonl: it holds no "
        f"result rows to reuse; pass a sweep's --out folder (it holds results.jsonl)")
    proc = cli(["sweep", "--grid", grid, "--out", tmp_path / "sw", "--reuse", data])  # a real process
    assert proc.returncode == 2 and "is a prepared data folder (written by" in one_error(proc.stderr)
    assert not (tmp_path / "sw").exists()


def test_a_file_nested_too_deeply_given_as_results_or_a_config_is_one_line(capsys, tmp_path):
    """Found while fixing round 17 (fix18b): 100,000 '[' given to ``report`` as results was a RecursionError traceback
    in ``jsonl.read_json_lines`` (and the recogniser, and ``other_file``, parse the file too). The line is a damaged
    row with a warning, then the one error; as a config the YAML reader's "nested too deeply" line stands."""
    deep = tmp_path / "deep.txt"
    deep.write_text("[" * 100_000)
    from leviathan.cli import main

    assert main(["report", str(deep), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "line 1 is not a JSON value Python can hold (its arrays or objects are nested too deeply to read" in err, err
    assert err.splitlines()[-1] == (f"error: no result rows in {str(deep)!r}; pass a sweep output dir or its "
                                    f"results.jsonl (written by `leviathan sweep`)"), err
    assert "nested too deeply to read" in _fails(capsys, ["train", "--config", deep, "--run-dir", tmp_path / "run"])
    assert not (tmp_path / "rep").exists() and not (tmp_path / "run").exists()
