"""No verb writes over a file it did not create (issue 30, kind 6), and an output folder is never its input.

``train --run-dir``, ``sweep --out``, ``report --out`` (and ``--ablation``), ``lm-eval --out`` and ``analyze
embeddings --out`` used to write their config.yaml / grid.json / README.md / lm_eval.json over a user's file of
the same name. Now a folder holds the marker of the verb that writes it (``leviathan.ownership``); in a folder
without one, a name the verb would write that is already there stops it before any work, and the user's other
files are left alone. A run folder written before markers existed is recognised and resumes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from leviathan.cli import main
from leviathan.ownership import MARKER

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, one_run_grid, run_overrides, tree_hashes  # noqa: E402
from test_bad_input import fails, resume  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _users_folder(path: Path, *names: str) -> Path:
    path.mkdir(parents=True)
    for name in names:
        (path / name).write_text(f"the user's own {name}\n")
    return path


def test_train_refuses_a_folder_holding_a_file_it_would_write(data, tmp_path):
    folder = _users_folder(tmp_path / "exp", "config.yaml", "notes.txt")
    line = cli_error(["train", "--config", folder / "config.yaml", *run_overrides(data), "--run-dir", folder])
    assert "config file" in line or "would write over config.yaml" in line  # the user's file is no run config
    line = cli_error(["train", *run_overrides(data), "--run-dir", folder])
    assert f"`leviathan train` would write over config.yaml in '{folder}', which it did not create" in line
    assert (folder / "config.yaml").read_text() == "the user's own config.yaml\n"
    assert sorted(p.name for p in folder.iterdir()) == ["config.yaml", "notes.txt"]


def test_train_into_a_folder_of_other_files_is_refused_and_leaves_it_as_it_was(data, tmp_path):
    """Round 18 (G157): ``train`` into a user's corpus folder of .txt files wrote the run and its marker among them,
    exit 0, and ``prepare`` then refused the corpus as train's output. A folder holding files the verb does not
    write is refused now (it was kept and the folder marked, before round 18); an empty one is still taken."""
    folder = Path(shutil.copytree(data.parent / "corpus", tmp_path / "corpus"))
    before = tree_hashes(folder)
    line = cli_error(["train", *run_overrides(data, max_steps=2), "--run-dir", folder, "--quiet"])
    assert f"`leviathan train` would write its output among files it did not write in '{folder}'" in line
    assert "choose another --run-dir: a new or empty folder" in line
    assert tree_hashes(folder) == before and not (folder / MARKER).exists()
    proc = cli(["prepare", folder, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--val-fraction", "0.2",
                "--no-progress"])
    assert proc.returncode == 0, proc.stderr  # still a corpus


def test_a_users_file_where_a_lock_goes_is_never_taken_over(capsys, data, tmp_path):
    """Round 7 (B1, B2, B7): a user's ``.lock`` in the run folder (or ``.NAME.lock`` beside a data folder) was taken as
    the lock file: truncated, then deleted on release, even when the run stopped at a config error. Now the verb
    stops before any work, and the file is as it was."""
    folder = _users_folder(tmp_path / "exp", ".lock", "notes.txt")
    line = cli_error(["train", *run_overrides(data, max_steps=2), "--run-dir", folder, "--quiet"])
    assert f"'{folder}/.lock' is a file leviathan did not write" in line and "move it away" in line
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "notes.txt"]
    assert (folder / ".lock").read_text() == "the user's own .lock\n"
    (tmp_path / ".fresh.lock").write_text("my notes\n")
    line = cli_error(["prepare", data.parent / "corpus", "--out", tmp_path / "fresh", "--tokenizer", "bpe:300",
                      "--no-progress"])
    assert f"'{tmp_path}/.fresh.lock' is a file leviathan did not write" in line
    assert (tmp_path / ".fresh.lock").read_text() == "my notes\n" and not (tmp_path / "fresh").exists()


def test_another_runs_checkpoint_is_never_continued_into_a_run_folder(finished_run, run_copy, tmp_path):
    """Round 7 (H1): `train --run-dir A --resume B/checkpoints/step-2` continued run B inside run A's folder: A's
    step-4 checkpoint was replaced by B's continuation, its config.yaml and metrics mixed with B's, exit 0."""
    other = tmp_path / "other"
    shutil.copytree(finished_run, other)
    before = tree_hashes(run_copy)
    line = cli_error(["train", "--run-dir", run_copy, "--resume", other / "checkpoints" / "step-00000002",
                      "--quiet", "max_steps=4"])
    assert f"--resume '{other}/checkpoints/step-00000002' is a checkpoint of another run folder, but run folder " \
           f"'{run_copy}' already holds checkpoints of its own (step-00000002, step-00000004)" in line
    assert tree_hashes(run_copy) == before
    fork = tmp_path / "fork"  # into a new folder it continues, as it always did
    assert cli(["train", "--run-dir", fork, "--resume", other / "checkpoints" / "step-00000002", "--quiet",
                "max_steps=3"]).returncode == 0
    assert (fork / "checkpoints" / "step-00000003").is_dir()


def test_a_run_folder_written_before_markers_resumes(capsys, data, run_copy):
    (run_copy / MARKER).unlink()
    assert main([*resume(run_copy, data, max_steps=6)]) == 0
    assert json.loads((run_copy / MARKER).read_text())["files"] is None  # the whole folder is the run's


def test_a_users_folder_named_like_a_step_is_not_a_run(capsys, data, tmp_path):
    """Round 11 (R71, R154): a new run folder holding only a user's ``checkpoints/step-00000002/notes.txt``: train took
    the step-like name for a run of an earlier version, passed the folder over as a damaged checkpoint, then saved
    step 2 over it, deleting the notes, exit 0. A step folder counts only when it holds what train saves there."""
    folder = tmp_path / "exp"
    (folder / "checkpoints" / "step-00000002").mkdir(parents=True)
    (folder / "checkpoints" / "step-00000002" / "notes.txt").write_text("my notes\n")
    before = tree_hashes(folder)
    line = fails(capsys, "train", *run_overrides(data, max_steps=2), "--run-dir", folder, "--quiet")
    assert f"`leviathan train` would write over checkpoints in '{folder}', which it did not create" in line, line
    assert tree_hashes(folder) == before


def test_a_step_saved_again_keeps_a_users_file_of_the_old_step_folder(capsys, data, finished_run, tmp_path):
    """Round 11 (R79, damage): a resume from step 2 saves step 4 again; the old step-4 folder, holding a user's
    notes.txt, was deleted whole, exit 0. The user's file now stays where it was put, beside the new step's files.
    (Round 14, A179: step 4 is damaged beyond use, so --resume auto goes on from step 2; an explicit older step is
    refused while a newer complete one exists.)"""
    from reliability_support import damage_beyond_use

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    step4 = run / "checkpoints" / "step-00000004"
    (step4 / "notes.txt").write_text("precious\n")
    damage_beyond_use(step4)
    argv = ["train", *run_overrides(data), "--run-dir", str(run), "--resume", "auto", "--quiet"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert (step4 / "notes.txt").read_text() == "precious\n"
    assert f"kept notes.txt (not written by leviathan) in '{step4}'" in err, err
    assert (step4 / "state.json").is_file()
    assert not [p.name for p in (run / "checkpoints").iterdir() if p.name.startswith(".tmp")]
    assert main(["eval", str(run), "--data", str(data), "--max-tokens", "256"]) == 0  # the step with the notes loads


def test_keep_last_keeps_a_users_file_of_a_pruned_step_folder(capsys, data, finished_run, tmp_path):
    """Round 11 (R80): keep_last pruned a step folder holding a user's notes.txt, deleting the notes. Now the step's
    own files go (the checkpoint no longer counts) and the folder stays with the user's file, said in one note."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    step2 = run / "checkpoints" / "step-00000002"
    (step2 / "notes.txt").write_text("precious\n")
    assert main(resume(run, data, max_steps=6, keep_last=1)) == 0
    err = capsys.readouterr().err
    assert sorted(p.name for p in step2.iterdir()) == ["notes.txt"]
    assert f"dropped the checkpoint of step 2 but kept its folder '{step2}' for notes.txt" in err, err
    from leviathan.checkpoint.layout import list_checkpoints
    assert [s for s, _ in list_checkpoints(run)] == [6]
    assert main(resume(run, data, max_steps=8, keep_last=1)) == 0  # goes on past the user's folder
    assert (step2 / "notes.txt").read_text() == "precious\n"


def test_a_step_name_that_is_a_link_is_refused_at_the_save(capsys, data, finished_run, tmp_path):
    """Round 11 (R152): a run's ``checkpoints/step-00000006`` a symbolic link to a user's folder: the save renamed the
    link to a hidden temporary name and warned that it could not delete it. Now it is refused, the link untouched."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("precious\n")
    (run / "checkpoints" / "step-00000006").symlink_to(mine)
    line = fails(capsys, *resume(run, data, max_steps=6))
    assert "is a symbolic link, not a step folder train saved; move it out of" in line, line
    assert (run / "checkpoints" / "step-00000006").is_symlink() and (mine / "notes.txt").read_text() == "precious\n"


def test_a_copied_run_marker_does_not_make_a_users_folder_the_runs(capsys, data, finished_run, tmp_path):
    """Round 8 (G5): a user's folder holding a copy of a run's marker and a config.yaml of the user's: `train
    --run-dir` took the copied whole-folder marker as proof and wrote over the user's config.yaml, exit 0. A
    whole-folder marker now records the folder it was written in; a copy elsewhere proves nothing."""
    folder = _users_folder(tmp_path / "exp", "config.yaml", "notes.txt")
    shutil.copy(finished_run / MARKER, folder / MARKER)
    before = tree_hashes(folder)
    line = fails(capsys, "train", *run_overrides(data, max_steps=2), "--run-dir", folder, "--quiet")
    assert f"`leviathan train` would write over config.yaml in '{folder}', which it did not create" in line
    assert tree_hashes(folder) == before
    # the copied run itself (copytree: another folder) is still the run's: recognised by its checkpoints
    assert json.loads((finished_run / MARKER).read_text())["home"]
    copy = tmp_path / "copy"
    shutil.copytree(finished_run, copy)
    assert main([*resume(copy, data, max_steps=6)]) == 0
    marker = json.loads((copy / MARKER).read_text())
    assert marker["files"] is None and marker["home"] != json.loads((finished_run / MARKER).read_text())["home"]
    moved = tmp_path / "moved"  # a rename keeps the folder (and its home)
    copy.rename(moved)
    assert json.loads((moved / MARKER).read_text())["home"] == marker["home"]


def test_a_copied_sweep_marker_does_not_make_a_users_results_the_sweeps(capsys, data, tmp_path):
    """Round 8 (G4): a copied sweep marker beside a user's results.jsonl of notes: the sweep appended its rows to
    the user's file. Now the folder is judged as one without a marker, and the file is the user's."""
    grid = one_run_grid(data, tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", "--grid", str(grid), "--out", str(out), "--skip-eval"]) == 0
    users = _users_folder(tmp_path / "notes", "results.jsonl")
    shutil.copy(out / MARKER, users / MARKER)
    before = tree_hashes(users)
    line = fails(capsys, "sweep", "--grid", grid, "--out", users, "--skip-eval")
    assert f"`leviathan sweep` would write over results.jsonl in '{users}', which it did not create" in line
    assert tree_hashes(users) == before
    cloned = tmp_path / "cloned"  # the sweep's own folder copied (a clone of committed results) goes on
    shutil.copytree(out, cloned)
    assert main(["sweep", "--grid", str(grid), "--out", str(cloned), "--skip-eval"]) == 0
    assert "1 already in" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["same", "inside"])
def test_a_run_folder_is_never_the_data_folder(capsys, data, tmp_path, where):
    from shutil import copytree

    copy = copytree(data, tmp_path / "data")
    before = tree_hashes(copy)
    run = copy if where == "same" else copy / "run"
    line = fails(capsys, "train", *run_overrides(copy), "--run-dir", run, "--quiet")
    assert "an output folder must be apart from its input" in line
    assert tree_hashes(copy) == before


def test_a_folder_of_another_verb_is_refused(capsys, data, run_copy, tmp_path):
    before = tree_hashes(run_copy)
    results = tmp_path / "sweep"
    results.mkdir()
    (results / MARKER).write_text(json.dumps({"format": 1, "verb": "sweep", "files": None}))
    line = fails(capsys, *resume(results, data))
    # round 27 (R73): the line names the sweep's own command to resume it
    assert "is the output of `leviathan sweep` (its leviathan_output.json says so), not a run of train" in line, line
    assert "to resume the sweep, run the same `leviathan sweep --grid GRID --out" in line, line
    assert tree_hashes(run_copy) == before


def _rows(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text(json.dumps({"name": "a-leviathan-s0", "variant": "leviathan"}) + "\n")
    return folder


@pytest.mark.parametrize("argv, name, verb", [
    (["report", "{rows}", "--out", "{dest}"], "report.md", "report"),
    (["report", "{rows}", "--out", "{dest}"], "analysis.json", "report"),
    (["report", "{rows}", "--ablation", "--out", "{dest}"], "README.md", "report --ablation"),
], ids=["report.md", "analysis.json", "ablation-README"])
def test_reports_never_write_over_a_users_file(capsys, tmp_path, argv, name, verb):
    rows = _rows(tmp_path / "sweep")
    dest = _users_folder(tmp_path / "dest", name)
    line = fails(capsys, *[a.format(rows=rows, dest=dest) for a in argv])
    assert f"`leviathan {verb}` would write over {name} in '{dest}', which it did not create" in line
    assert (dest / name).read_text() == f"the user's own {name}\n"


def test_sweep_never_writes_over_a_users_file(capsys, data, tmp_path):
    import yaml

    grid = tmp_path / "g.yaml"
    grid.write_text(yaml.safe_dump({"name": "g", "data": {"dir": str(data)}, "seeds": [0],
                                    "base": {"max_steps": 1, "data": {"seq_len": 32}},
                                    "sizes": {"a": "cpu-tiny"},
                                    "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}))
    out = _users_folder(tmp_path / "out", "grid.json")
    line = fails(capsys, "sweep", "--grid", grid, "--out", out)
    assert f"`leviathan sweep` would write over grid.json in '{out}'" in line
    assert sorted(p.name for p in out.iterdir()) == ["grid.json"]
    line = fails(capsys, "sweep", "--grid", grid, "--out", data)
    assert "is the same folder as the grid's data folder" in line


def test_a_users_folder_where_the_sweep_trains_a_run_names_the_sweeps_way_out(capsys, data, tmp_path):
    """Round 19 (H185, H187): a user's folder (or an export's) at ``SWEEP/runs/NAME`` was refused with train's fix,
    "choose another --run-dir", an option the sweep does not have. The sweep names its own way out."""
    grid = one_run_grid(data, tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", "--grid", str(grid), "--out", str(out), "--skip-eval"]) == 0
    (out / "results.jsonl").write_text("")  # its row removed, and its run folder replaced by a user's
    shutil.rmtree(out / "runs" / "a-dense_tied-s0")
    _users_folder(out / "runs" / "a-dense_tied-s0", "notes.txt")
    before = tree_hashes(out)
    line = fails(capsys, "sweep", "--grid", grid, "--out", out, "--skip-eval")
    assert "--run-dir" not in line and "move that folder out of the sweep's runs/, or give the sweep another --out" in line
    assert tree_hashes(out) == before
    line = fails(capsys, "train", *run_overrides(data), "--run-dir", out / "runs" / "a-dense_tied-s0", "--quiet")
    assert "choose another --run-dir: a new or empty folder" in line  # train itself keeps its option's name


def test_a_sweep_folder_written_before_markers_is_the_sweeps_own(capsys, data, tmp_path):
    """A sweep folder without a marker (an earlier version's) is recognised by its grid.json, read by the file's one
    reader: one that lists runs is the sweep's and it goes on; a damaged one is a user's file and is refused."""
    grid = one_run_grid(data, tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", "--grid", str(grid), "--out", str(out), "--skip-eval"]) == 0
    (out / MARKER).unlink()
    assert main(["sweep", "--grid", str(grid), "--out", str(out), "--skip-eval"]) == 0
    assert "1 already in" in capsys.readouterr().out
    (out / MARKER).unlink()
    (out / "grid.json").write_text('{"runs": "not a list"}\n')
    line = fails(capsys, "sweep", "--grid", grid, "--out", out, "--skip-eval")
    assert "would write over" in line and "which it did not create" in line


def test_lm_eval_never_writes_over_a_users_summary(capsys, finished_run, tmp_path):
    out = _users_folder(tmp_path / "out", "lm_eval.json")
    line = fails(capsys, "lm-eval", finished_run, "--tasks", "piqa", "--out", out)
    assert f"`leviathan lm-eval` would write over lm_eval.json in '{out}'" in line
    assert (out / "lm_eval.json").read_text() == "the user's own lm_eval.json\n"


def test_an_embeddings_record_is_never_written_over_another_file(capsys, finished_run, tmp_path):
    mine = tmp_path / "analysis.json"
    mine.write_text('{"my": "numbers"}\n')
    line = fails(capsys, "analyze", "embeddings", finished_run, "--out", mine)
    assert "exists and is not an embeddings record" in line and "will not write over it" in line
    assert mine.read_text() == '{"my": "numbers"}\n'


def test_a_data_folder_is_never_inside_its_corpus_nor_holds_it(capsys, tmp_path):
    from reliability_support import write_corpus

    corpus = write_corpus(tmp_path / "corpus", num_docs=4)
    before = tree_hashes(corpus)
    line = fails(capsys, "prepare", corpus, "--out", corpus / "data", "--tokenizer", "cl100k_base", "--no-progress")
    assert "lies inside the source folder" in line
    line = fails(capsys, "prepare", corpus / "doc000.txt", "--out", corpus, "--overwrite", "--val-fraction", "0",
                 "--tokenizer", "cl100k_base", "--no-progress")
    assert "holds the source file" in line and "--overwrite (overwrite=True) would delete it" in line
    assert tree_hashes(corpus) == before


def test_a_damaged_marker_is_named_with_a_safe_fix(capsys, data, run_copy):
    (run_copy / MARKER).write_text("garbage")
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, data, max_steps=6))
    assert f"'{run_copy / MARKER}' is not readable JSON" in line and f"rm {run_copy / MARKER}" in line
    assert "rm -r" not in line  # never advise deleting the run
    # round 7 (K8): a user's own file of that name was only advised to be deleted
    assert "if it is a file of yours, move it out of the folder" in line
    assert tree_hashes(run_copy) == before


def test_bench_never_writes_its_json_over_a_users_file(tmp_path):
    """Round 5: ``bench --json results.json`` wrote its result over a user's results.json, exit 0. Now refused before
    the benchmark runs; an earlier bench result there is replaced as before."""
    from reliability_support import cli_error

    mine = tmp_path / "results.json"
    mine.write_text('{"mine": true}\n')
    line = cli_error(["bench", "--config", "tiny", "--only", "generator", "--quick", "--json", mine])
    assert "is not an earlier `leviathan bench --json` result, so bench will not write over it" in line
    assert mine.read_text() == '{"mine": true}\n'
    assert "is a folder" in cli_error(["bench", "--config", "tiny", "--quick", "--json", tmp_path])


def test_marking_the_same_files_again_leaves_the_marker_as_it_was(tmp_path):
    """A report regenerated into a committed results folder rewrote its marker with a new time stamp: a diff with no
    content in every commit of results. A marker whose file list does not change is left byte for byte."""
    from leviathan.ownership import mark, read_marker

    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "rows.jsonl").write_text("{}\n")
    mark(folder, "report", ["report.md", "analysis.json"])  # a folder with a user's file: the names are listed
    first = (folder / MARKER).read_bytes()
    stamp = json.loads(first)["created"]
    (folder / MARKER).write_bytes(first.replace(stamp.encode(), b"2000-01-01T00:00:00+00:00"))
    before = (folder / MARKER).read_bytes()
    mark(folder, "report", ["report.md", "analysis.json"])
    assert (folder / MARKER).read_bytes() == before
    mark(folder, "report", ["report.md", "analysis.json", "figure.png"])  # a new name: written, listed
    assert read_marker(folder).files == ("analysis.json", "figure.png", "report.md")


def test_a_device_or_a_pipe_as_the_output_file_is_refused_without_reading_it(finished_run, tmp_path):
    """Round 6: ``bench --json /dev/full`` read the endless device to check whether it was an earlier result, until
    memory ran out (a MemoryError traceback); a pipe would block. Refused before anything is read or run."""
    import os

    from reliability_support import cli_error

    line = cli_error(["bench", "--config", "tiny", "--only", "generator", "--quick", "--json", "/dev/full"])
    assert "--json '/dev/full' is not a regular file (a device, a pipe or a socket)" in line
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    line = cli_error(["analyze", "embeddings", finished_run, "--out", fifo])
    assert f"--out '{fifo}' is not a regular file (a device, a pipe or a socket)" in line


def test_collect_results_never_writes_over_a_users_file_or_a_fingerprinted_one(finished_run, data, tmp_path):
    """Round 8 (E1-E7): scripts/collect_results.py wrote its grid.json over a user's grid.json in ``DEST/<grid>``,
    ended in a traceback on a results.jsonl of notes there, collected into a prepared data folder, and ``--rewrite``
    reformatted the tokenizer.json of every step folder and export under the folder given, which then refused to load
    (their files are fingerprinted). Each is refused before anything is written; --rewrite leaves those folders be."""
    import subprocess

    from reliability_support import REPO, one_error

    def collect(*argv) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), *map(str, argv)],
                              capture_output=True, text=True, env={**__import__("os").environ,
                                                                   "PYTHONPATH": str(REPO / "src")}, timeout=300)

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "grid.json").write_text(json.dumps({"name": "g"}))
    (sweep / "results.jsonl").write_text(json.dumps({"name": "r0", "loss": 1.0}) + "\n")
    users = _users_folder(tmp_path / "res" / "g", "grid.json")
    before = tree_hashes(users)
    done = collect(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 2 and "is not a grid.json" in one_error(done.stderr)
    (users / "grid.json").unlink()
    (users / "results.jsonl").write_text("my notes\n")
    done = collect(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 2 and "is not a results file" in one_error(done.stderr)
    assert (users / "results.jsonl").read_text() == "my notes\n" and not (users / "grid.json").exists()
    copy = Path(shutil.copytree(data, tmp_path / "data"))
    done = collect(sweep, "--dest", copy)
    assert done.returncode == 2 and "is the output of `leviathan prepare`" in one_error(done.stderr)
    assert tree_hashes(copy) == tree_hashes(data)
    run = Path(shutil.copytree(finished_run, tmp_path / "results" / "run"))
    assert main(["export", str(run), str(tmp_path / "results" / "hf")]) == 0
    before = tree_hashes(tmp_path / "results")
    done = collect("--rewrite", tmp_path / "results")  # round 15 (B22): a folder with no results file is an error
    assert done.returncode == 2 and "holds no results file leviathan wrote" in one_error(done.stderr), done.stderr
    assert tree_hashes(tmp_path / "results") == before
    # round 11 (R115, R119): a user's JSON files under the folder (an editor's settings, a downloaded model's config)
    # had their absolute paths made relative; only leviathan's own results files are rewritten
    project = tmp_path / "project"
    (project / ".vscode").mkdir(parents=True)
    (project / ".vscode" / "settings.json").write_text('{"python": "/usr/bin/python3"}\n')
    (project / "model").mkdir()
    (project / "model" / "config.json").write_text('{"_name_or_path": "/models/llama"}\n')
    (project / "results.jsonl").write_text(json.dumps({"name": "r0", "variant": "dense_tied",
                                                       "run_dir": str(tmp_path / "runs" / "r0")}) + "\n")
    # round 12 (T164, T165): a user's files that only share a results file's name were rewritten too
    (project / "tool").mkdir()
    (project / "tool" / "analysis.json").write_text('{"input": "/home/me/data.csv"}\n')
    (project / "tool" / "grid.json").write_text('{"a": "/home/me/x"}\n')
    (project / "tool" / "results.jsonl").write_text('{"path": "/home/me/a.txt"}\n')
    before = tree_hashes(project)
    done = collect("--rewrite", project)
    assert done.returncode == 0, done.stderr
    after = tree_hashes(project)
    assert {k for k in after if after[k] != before[k]} == {"results.jsonl"}, done.stdout


def test_an_output_is_never_made_inside_a_run_a_data_folder_or_an_export(finished_run, data, tmp_path):
    """Round 8 (G14): ``train --run-dir RUN/checkpoints`` trained a second run inside the first one's checkpoints
    folder, ``sweep --out RUN/sw`` and ``sweep --out DATA/sw`` and ``train --run-dir DATA/r`` wrote into a run and a
    prepared folder (whose ``--overwrite`` then refused it), exit 0. A sweep's runs and a demo's stay where they are."""
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    copy = Path(shutil.copytree(data, tmp_path / "data"))
    before = {folder: tree_hashes(folder) for folder in (run, copy)}
    line = cli_error(["train", *run_overrides(data), "--run-dir", run / "checkpoints"])
    assert f"--run-dir '{run}/checkpoints' lies inside '{run}', the output of `leviathan train`" in line
    line = cli_error(["train", *run_overrides(data), "--run-dir", copy / "r"])
    assert "the output of `leviathan prepare`" in line
    grid = tmp_path / "grid.yaml"
    grid.write_text(json.dumps({"name": "g", "data": {"dir": str(data)}, "seeds": [0],
                                "base": {"max_steps": 1, "data": {"seq_len": 32}, "batch_tokens": 128},
                                "sizes": {"a": {"preset": "cpu-tiny"}},
                                "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}))
    for out in (run / "sw", copy / "sw"):
        assert "lies inside" in cli_error(["sweep", "--grid", grid, "--out", out])
    assert {folder: tree_hashes(folder) for folder in (run, copy)} == before
    assert sorted(p.name for p in run.iterdir()) == sorted(p.name for p in finished_run.iterdir())


@pytest.fixture(scope="module")
def small_sweep(data, tmp_path_factory) -> Path:
    """A finished sweep of one tiny run (2 steps, its row measured at step 2) and its grid file beside it."""
    root = tmp_path_factory.mktemp("small-sweep")
    grid = root / "grid.yaml"
    grid.write_text(json.dumps({"name": "g", "data": {"dir": str(data)}, "seeds": [0],
                                "base": {"max_steps": 2, "data": {"seq_len": 32}, "batch_tokens": 128,
                                         "micro_batch_size": 4, "eval_tokens": 200, "checkpoint_interval": 0,
                                         "eval_interval": 0, "keep_last": 1, "schedule": {"warmup_steps": 1}},
                                "eval": {"buckets": 2, "seq_len": 32, "batch_size": 4, "max_tokens": 200},
                                "sizes": {"a": {"preset": "cpu-tiny"}},
                                "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}))
    assert main(["sweep", "--grid", str(grid), "--out", str(root / "sweep")]) == 0
    return root / "sweep"


def test_no_other_output_is_written_inside_lm_evals_or_a_reports_folder(small_sweep, exported, finished_run, data,
                                                                         tmp_path):
    """Round 17 (D137-D141, D143): a report, a data folder, a run, an export (at OUT/hf, which the next ``lm-eval
    --keep-export`` deleted: D148) were written inside lm-eval's --out, and a sweep and collect_results inside a
    report's folder, exit 0. lm-eval's folder holds its own kept export only; sweep and collect_results pass through
    the rule the other verbs use (``ownership.HOLDS``)."""
    from reliability_support import REPO, one_error
    from test_companions import _piqa_root

    sweep = Path(shutil.copytree(small_sweep, tmp_path / "sweep"))
    le, rep = tmp_path / "le", sweep / "report"
    proc = cli(["lm-eval", exported, "--tasks", "piqa", "--data-root", _piqa_root(tmp_path / "tasks"), "--threads",
                "1", "--limit", "2", "--out", le])
    assert proc.returncode == 0 and cli(["report", sweep]).returncode == 0, proc.stderr
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("a few words of text.\n" * 50)
    grid = small_sweep.parent / "grid.yaml"
    before = {le: tree_hashes(le), sweep: tree_hashes(sweep)}
    tries = [(le, "--out", ["report", sweep, "--out", le / "rep"]),
             (le, "--out", ["prepare", corpus, "--out", le / "data", "--tokenizer", "bpe:300", "--val-fraction", "0",
                            "--no-progress"]),
             (le, "--run-dir", ["train", *run_overrides(data), "--run-dir", le / "run"]),
             (le, "out_dir", ["export", finished_run, le / "hf"]),
             (le, "--out", ["sweep", "--grid", grid, "--out", le / "sw"]),
             (rep, "--out", ["sweep", "--grid", grid, "--out", rep / "sw"])]
    for parent, flag, argv in tries:
        line = cli_error(argv)
        assert f"{flag} " in line and f"lies inside {str(parent)!r}, the output of `leviathan" in line, (argv, line)
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), str(sweep), "--dest",
                           str(rep / "res")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    line = one_error(done.stderr)
    assert done.returncode == 2 and f"lies inside {str(rep)!r}, the output of `leviathan report`" in line, line
    assert {le: tree_hashes(le), sweep: tree_hashes(sweep)} == before
    assert sorted(p.name for p in le.iterdir()) == [MARKER, "lm_eval.json"]


def test_a_sweep_is_never_made_inside_another_sweeps_runs_folder(small_sweep, tmp_path):
    """Round 8 (G15): ``sweep --out SWEEP/runs`` wrote a second sweep's results.jsonl, grid.json and runs among the
    first one's run folders, exit 0; ``SWEEP/runs/NEW`` would have hidden a sweep among its runs."""
    sweep = Path(shutil.copytree(small_sweep, tmp_path / "sweep"))
    before = tree_hashes(sweep)
    for out in (sweep / "runs", sweep / "runs" / "new"):
        line = cli_error(["sweep", "--grid", small_sweep.parent / "grid.yaml", "--out", out])
        assert f"--out {str(out)!r} lies inside {str(sweep)!r}, the output of `leviathan sweep`" in line
    assert tree_hashes(sweep) == before and sorted(p.name for p in (sweep / "runs").iterdir()) == ["a-dense_tied-s0"]


def test_train_does_not_continue_a_run_a_sweeps_row_measured(small_sweep, tmp_path):
    """Round 8 (A12): ``train --run-dir SWEEP/runs/RUN --resume auto max_steps=4`` trained the sweep's run past its
    row, and keep_last deleted the step-2 checkpoint the row measured, exit 0. It is refused, naming the way to
    continue it in another folder; that way works and leaves the sweep as it was."""
    sweep = Path(shutil.copytree(small_sweep, tmp_path / "sweep"))
    run = sweep / "runs" / "a-dense_tied-s0"
    before = tree_hashes(sweep)
    line = cli_error(["train", "--run-dir", run, "--resume", "auto", "max_steps=4", "--quiet"])
    assert "a row of its results.jsonl measured it at step 2" in line
    step = run / "checkpoints" / "step-00000002"
    assert line.endswith(f"leviathan train --run-dir NEW_DIR --resume {step} [overrides]")
    assert tree_hashes(sweep) == before
    same = cli(["train", "--run-dir", run, "--resume", "auto", "--quiet"])  # the sweep's own line: trains nothing
    assert same.returncode == 0, same.stderr
    assert [p.name for p in (run / "checkpoints").iterdir()] == ["step-00000002"]
    proc = cli(["train", "--run-dir", tmp_path / "new", "--resume", step, "max_steps=4", "--quiet"])
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "new" / "checkpoints" / "step-00000004").is_dir()
    assert tree_hashes(run / "checkpoints") == tree_hashes(small_sweep / "runs" / "a-dense_tied-s0" / "checkpoints")


def test_no_run_or_report_is_written_among_a_sweeps_runs_or_inside_a_run(small_sweep, finished_run, data, tmp_path):
    """Round 9: ``train --run-dir SWEEP/runs`` wrote a run's files among the sweep's run folders (N18), and ``report
    SWEEP --out RUN/checkpoints`` wrote report.md, analysis.json, figures and a marker into a run's checkpoints folder
    (N11), exit 0 each."""
    sweep = Path(shutil.copytree(small_sweep, tmp_path / "sweep"))
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    before = {folder: tree_hashes(folder) for folder in (sweep, run)}
    line = cli_error(["train", *run_overrides(data), "--run-dir", sweep / "runs"])
    assert f"--run-dir {str(sweep / 'runs')!r} is the runs/ folder of {str(sweep)!r}, the output of `leviathan sweep`" \
        in line
    for out in (run / "checkpoints", sweep / "runs"):
        assert f"--out {str(out)!r} lies inside" in cli_error(["report", sweep, "--out", out])
    assert {folder: tree_hashes(folder) for folder in (sweep, run)} == before
    assert cli(["report", sweep]).returncode == 0  # its own report folder, inside the sweep, stays the default


def test_no_output_is_written_among_a_sweeps_embeddings_records(small_sweep, finished_run, data, tmp_path):
    """Round 10 (P87): ``report SWEEP --out SWEEP/embeddings`` wrote report.md, analysis.json, figures and a marker
    among the sweep's embeddings records, exit 0; train, export and lm-eval there likewise. A record of one of the
    sweep's runs written there by hand (``analyze embeddings RUN --out SWEEP/embeddings/RUN.json``) stays allowed."""
    sweep = Path(shutil.copytree(small_sweep, tmp_path / "sweep"))
    records = sweep / "embeddings"
    records.mkdir(exist_ok=True)
    before = tree_hashes(sweep)
    assert f"--out {str(records)!r} lies inside {str(sweep)!r}" in cli_error(["report", sweep, "--out", records])
    assert "is the embeddings/ folder of" in cli_error(["train", *run_overrides(data), "--run-dir", records])
    assert "lies inside" in cli_error(["export", finished_run, records / "e"])
    assert tree_hashes(sweep) == before
    run = sweep / "runs" / "a-dense_tied-s0"
    assert cli(["analyze", "embeddings", run, "--out", records / "a-dense_tied-s0.json"]).returncode == 0


def test_no_verb_writes_its_output_among_a_sweeps_runs_or_into_a_data_folder(small_sweep, finished_run, data, tmp_path):
    """Round 9: ``export RUN SWEEP/runs/NEW`` (N119), ``prepare --out SWEEP/runs/data`` (N120), ``demo --run-dir
    SWEEP/runs/demo`` (N121), ``lm-eval --out SWEEP/runs`` (N116: lm_eval.json and a marker in the runs folder itself)
    and ``--out DATA/le`` (N125), ``collect_results.py --dest SWEEP/runs`` (N113; ``SWEEP/runs/x``, round 22, Q38), ``analyze embeddings RUN --out
    DATA/rec.json`` (N124) wrote there, exit 0 each. An export kept inside its own run folder stays allowed."""
    from reliability_support import REPO

    sweep = Path(shutil.copytree(small_sweep, tmp_path / "sweep"))
    mine = Path(shutil.copytree(data, tmp_path / "data"))
    before = {folder: tree_hashes(folder) for folder in (sweep, mine)}
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("a few words of text.\n" * 50)
    tries = {"out_dir": ["export", finished_run, sweep / "runs" / "new"],
             "--out": ["prepare", corpus, "--out", sweep / "runs" / "data", "--tokenizer", "bpe:300", "--no-progress"],
             "--run-dir": ["demo", "--run-dir", sweep / "runs" / "demo", "--data-dir", data, "--steps", "1", "--quiet"]}
    for flag, argv in tries.items():
        assert f"{flag} " in (line := cli_error(argv)) and f"lies inside {str(sweep)!r}" in line, line
    for out in (sweep / "runs", mine / "le"):
        assert "lies inside" in cli_error(["lm-eval", finished_run, "--tasks", "piqa", "--out", out])
    assert "lies inside" in cli_error(["analyze", "embeddings", finished_run, "--out", mine / "rec.json"])
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1"}
    for dest in (sweep / "runs", sweep / "runs" / "x"):  # round 22 (Q38): a new folder in runs/ wrote x/g/ there
        done = subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), str(sweep), "--dest",
                               str(dest)], env=env, capture_output=True, text=True)
        assert done.returncode == 2 and "lies inside" in done.stderr, done.stderr
    assert {folder: tree_hashes(folder) for folder in (sweep, mine)} == before
    assert sorted(p.name for p in (sweep / "runs").iterdir()) == ["a-dense_tied-s0"]


def test_the_python_export_refuses_a_folder_inside_a_data_folder(data, finished_run, tmp_path):
    """Round 11 (R103): ``to_hf(model, 'data/e')`` wrote an export inside a prepared data folder (the CLI refused
    it since round 9); the check is now the writer's, so every caller has it."""
    from leviathan.checkpoint.read import load_model
    from leviathan.errors import UserError
    from leviathan.hf.export import to_hf, to_plain_llama

    copy = Path(shutil.copytree(data, tmp_path / "data"))
    before = tree_hashes(copy)
    model, _ = load_model(str(finished_run))
    for write in (to_hf, to_plain_llama):
        with pytest.raises(UserError, match="lies inside .*the output of `leviathan prepare`"):
            write(model, copy / "e")
    assert tree_hashes(copy) == before and not (copy / "e").exists()


def test_a_users_backup_of_a_step_folder_named_tmp_is_kept(data, finished_run, tmp_path):
    """Round 12 (T4, damage): a user's copy of step 4 as ``checkpoints/.tmp-keep`` (only step files) was deleted as a
    crashed save's leftover on the next resume, exit 0. Only the names save_checkpoint gives its temporaries count."""
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    keep = Path(shutil.copytree(run / "checkpoints" / "step-00000004", run / "checkpoints" / ".tmp-keep"))
    before = tree_hashes(keep)
    assert main(resume(run, data, max_steps=6)) == 0
    assert tree_hashes(keep) == before


def test_a_users_lm_eval_json_that_only_resembles_one_is_not_written_over(tmp_path):
    """Round 12 (U84, damage): a user's ``o/lm_eval.json`` holding ``{"tasks": 5, "source": null}`` (no marker) was
    taken for an earlier version's output (an object with keys 'tasks' and 'source') and written over, exit 0."""
    from leviathan.eval.harness import _earlier_out

    folder = tmp_path / "o"
    folder.mkdir()
    (folder / "lm_eval.json").write_text(json.dumps({"tasks": 5, "source": None}))
    assert not _earlier_out(folder)
    (folder / "lm_eval.json").write_text(json.dumps({"source": "runs/x", "tasks": {"piqa": {"acc": 0.5}},
                                                      "results": {"results": {}}}))
    assert _earlier_out(folder)  # what an earlier lm-eval wrote is still its own


def test_no_output_is_made_inside_a_runs_checkpoints_folder(capsys, finished_run, tmp_path):
    """Round 12 (T81b, T82, T86): ``export RUN RUN/checkpoints/step-00000009`` wrote an export named like a step
    (train and eval then refused the run: a damaged newest checkpoint), and an export or a record was written inside
    a step folder, where a run's folder itself may hold an export (RUN/hf)."""
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    before = tree_hashes(run / "checkpoints")
    for argv in (["export", run, run / "checkpoints" / "step-00000009"],
                 ["export", run, run / "checkpoints" / "step-00000004" / "hf"],
                 ["analyze", "embeddings", run, "--out", run / "checkpoints" / "step-00000004" / "rec.json"]):
        line = fails(capsys, *argv)
        assert f"lies inside '{run}/checkpoints', which holds the run's step folders only" in line, line
    assert tree_hashes(run / "checkpoints") == before
    assert main(["export", str(run), str(run / "hf")]) == 0


@pytest.mark.parametrize("target", ["backup", "step-00000002"])
def test_keep_last_leaves_a_users_link_among_the_steps_alone(data, finished_run, tmp_path, target):
    """Round 13 (V92b, damage; V92, traceback): ``checkpoints/step-00000003`` a user's link to a backup of a step
    outside the run: keep_last deleted the backup's step files (the user's notes.txt left alone); a link to a step it
    pruned first ended in a FileNotFoundError traceback."""
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    backup = Path(shutil.copytree(run / "checkpoints" / "step-00000002", tmp_path / "backup"))
    (backup / "notes.txt").write_text("mine\n")
    before = tree_hashes(backup)
    link = run / "checkpoints" / "step-00000003"
    link.symlink_to(backup if target == "backup" else "step-00000002")
    assert main(resume(run, data, max_steps=6, keep_last=1)) == 0
    assert tree_hashes(backup) == before and link.is_symlink()


def test_no_output_is_made_inside_a_demos_folder_but_its_arms_may_be_resumed(data, finished_run, tmp_path):
    """Round 14 (A127, A184, A187-A189): a sweep, a data folder, an export and a run written into a finished demo's
    folder (or an export inside one of its arms) were taken without a word, and the same demo command then refused
    its own folder ("holds files the earlier leviathan demo did not write"). A demo's folder is sealed: only its arm
    folders themselves may be named (a train run folder a user resumes)."""
    from leviathan.ownership import check_not_inside, mark

    demo = tmp_path / "demo"
    demo.mkdir()
    shutil.copytree(finished_run, demo / "leviathan")
    mark(demo, "demo", ["leviathan", "demo.json"])
    (demo / "demo.json").write_text("{}")
    before = tree_hashes(demo)
    for argv, flag in ((["export", finished_run, demo / "exp"], "out_dir"),
                       (["export", finished_run, demo / "leviathan" / "hf"], "out_dir"),
                       (["prepare", data / "train.bin", "--out", demo / "data", "--tokenizer", "bpe:300"], "--out"),
                       (["train", "--run-dir", demo / "run", *run_overrides(data)], "--run-dir")):
        line = cli_error(argv)
        assert f"lies inside '{demo}', the output of `leviathan demo`" in line and flag in line, (argv, line)
    assert tree_hashes(demo) == before
    check_not_inside(demo / "leviathan", "--run-dir", ("train", "prepare", "export"))  # an arm: no error


def test_bench_cache_dir_is_never_another_verbs_output(data, tmp_path):
    """Round 14 (A144): ``bench --cache-dir DATA`` wrote its BPE folder inside a prepared data folder (while ``--json``
    inside one was refused)."""
    before = tree_hashes(data)
    for folder, words in ((data, "is the output of `leviathan prepare`"), (data / "sub", "lies inside")):
        line = cli_error(["bench", "--quick", "--only", "modes", "--cache-dir", folder])
        assert f"--cache-dir '{folder}' {words}" in line, line
    assert tree_hashes(data) == before


def test_a_users_folder_without_a_marker_is_not_said_to_have_one(data, tmp_path):
    """Round 15 (A138): a file ``checkpoints`` in a user's folder was refused because "the folder's
    leviathan_output.json does not list it", a file the folder does not have."""
    folder = _users_folder(tmp_path / "fw3", "checkpoints")
    line = cli_error(["train", *run_overrides(data), "--run-dir", folder, "--quiet"])
    assert f"in '{folder}', which it did not create (the folder has no {MARKER}: no leviathan verb made it)" in line
    assert (folder / "checkpoints").read_text() == "the user's own checkpoints\n"


def test_no_other_verbs_output_is_written_inside_a_sweeps_or_a_reports_folder(small_sweep, exported, data, tmp_path):
    """Round 16 (C203, C204, C251): ``prepare --out SWEEP/data``, ``lm-eval --out SWEEP/report/lm`` and ``bench --json
    SWEEP/bench.json`` wrote among a sweep's (or its report's) files, exit 0, while report and train refused theirs
    inside another output. A sweep's folder holds its runs, its reports and sweeps (stages, shards) only; a report's
    folder nothing else (``ownership.HOLDS``)."""
    sweep = Path(shutil.copytree(small_sweep, tmp_path / "sweep"))
    assert cli(["report", sweep]).returncode == 0  # SWEEP/report: its own report folder, the default
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("a few words of text.\n" * 50)
    before = tree_hashes(sweep)
    tries = {"--out": (sweep, ["prepare", corpus, "--out", sweep / "data", "--tokenizer", "bpe:300", "--val-fraction",
                               "0", "--no-progress"]),
             "--json": (sweep, ["bench", "--only", "train", "--quick", "--config", "tiny", "--json",
                                sweep / "bench.json"]),
             "out_dir": (sweep, ["export", sweep / "runs" / "a-dense_tied-s0", sweep / "hf"]),
             "--run-dir": (sweep / "report", ["train", *run_overrides(data), "--run-dir", sweep / "report" / "r"])}
    for flag, (parent, argv) in tries.items():
        line = cli_error(argv)
        assert f"{flag} " in line and f"lies inside {str(parent)!r}, the output of `leviathan" in line, line
    line = cli_error(["lm-eval", exported, "--tasks", "piqa", "--out", sweep / "report" / "lm"])
    assert f"lies inside {str(sweep / 'report')!r}, the output of `leviathan report`" in line, line
    assert tree_hashes(sweep) == before
    assert sorted(p.name for p in sweep.iterdir()) == ["grid.json", MARKER, "report", "results.jsonl", "runs"]


def test_no_record_or_benchmark_is_written_inside_a_train_run(finished_run, tmp_path):
    """Round 17 (E352, D245, D249, D250, D251): ``analyze embeddings RUN --out RUN/emb.json`` (or into another run)
    and ``bench --json RUN/b.json`` wrote among a train run's files, exit 0, where the same commands refuse a data
    folder. A train run's folder is train's: both are refused naming it, and the run is left as it was."""
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    before = tree_hashes(run)
    for flag, argv in (("--out", ["analyze", "embeddings", run, "--out", run / "emb.json"]),
                       ("--json", ["bench", "--quick", "--only", "train", "--config", "tiny", "--json",
                                   run / "b.json"])):
        line = cli_error(argv)
        assert f"{flag} " in line and f"lies inside {str(run)!r}, the output of `leviathan train`" in line, (argv, line)
    assert tree_hashes(run) == before
