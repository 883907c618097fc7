"""scripts/collect_results.py: a sweep folder's rows merge into the committed results folder, never replace it."""

import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "collect_results.py"


@pytest.fixture(scope="module")
def collect(script_module):
    return script_module("collect_results.py")


def _sweep(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "grid.json").write_text(json.dumps({"name": "g"}))
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _names(path: Path) -> list[str]:
    return [json.loads(line)["name"] for line in path.read_text().splitlines()]


def test_rows_of_a_second_sweep_folder_are_added_after_the_committed_ones(collect, tmp_path):
    # a round whose pairs ran from two worktrees: the second collect must not drop the first one's rows
    first = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}, {"name": "r1", "final_val_loss": 2.0}])
    second = _sweep(tmp_path / "b", [{"name": "r2", "final_val_loss": 3.0}, {"name": "r0", "final_val_loss": 1.0}])
    dest = tmp_path / "results"
    assert collect.main([str(first), "--dest", str(dest)]) == 0
    assert collect.main([str(second), "--dest", str(dest)]) == 0
    assert _names(dest / "g" / "results.jsonl") == ["r0", "r1", "r2"]
    before = (dest / "g" / "results.jsonl").read_bytes()
    assert collect.main([str(second), "--dest", str(dest)]) == 0  # collecting again changes nothing
    assert (dest / "g" / "results.jsonl").read_bytes() == before


def test_a_run_with_two_different_rows_stops_before_writing(collect, tmp_path, capsys):
    first = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    second = _sweep(tmp_path / "b", [{"name": "r0", "final_val_loss": 1.5}, {"name": "r1", "final_val_loss": 2.0}])
    dest = tmp_path / "results"
    collect.main([str(first), "--dest", str(dest)])
    before = (dest / "g" / "results.jsonl").read_bytes()
    assert collect.main([str(second), "--dest", str(dest)]) == 2
    assert "error: run 'r0' has a row in the results folder and a different one" in capsys.readouterr().err
    assert (dest / "g" / "results.jsonl").read_bytes() == before


def test_a_sweep_of_data_prepared_again_is_collected_with_its_plateau(collect, tmp_path, monkeypatch, capsys):
    """The o200k-fair secondaries (issue 29) trained from a worktree whose data folder was prepared again after the
    fingerprint became version 2: collect_results refused them against the version-1 rows ("other settings"), and,
    run from another checkout, wrote the grid's unigram entropy null over the committed one (``data/...`` is
    relative to the worktree the sweep ran in)."""
    import numpy as np

    counts = {"tokenizer": "bpe:300", "vocab_size": 300, "train_tokens": 1000, "val_tokens": 100}
    dest = tmp_path / "results"
    first = _sweep(tmp_path / "a", [{"name": "r0", "data": {"fingerprint": "old", **counts}}])
    grid = {"name": "g", "data_dir": "data/prep", "data_fingerprint": "old", "unigram_entropy": 1.5}
    (first / "grid.json").write_text(json.dumps(grid))
    assert collect.main([str(first), "--dest", str(dest)]) == 0
    worktree = tmp_path / "worktree"
    second = _sweep(worktree / "runs" / "g", [{"name": "r1", "data": {"fingerprint": "new", "fingerprint_version": 2,
                                                                     "legacy_fingerprint": "old", **counts}}])
    (second / "grid.json").write_text(json.dumps({**grid, "data_fingerprint": "new", "unigram_entropy": None}))
    monkeypatch.chdir(tmp_path)  # not the worktree: its data/prep is found from the sweep folder's parents
    assert collect.main([str(second), "--dest", str(dest)]) == 0
    assert _names(dest / "g" / "results.jsonl") == ["r0", "r1"]
    assert json.loads((dest / "g" / "grid.json").read_text())["unigram_entropy"] == 1.5  # kept, not nulled
    (worktree / "data" / "prep").mkdir(parents=True)
    np.save(worktree / "data" / "prep" / "train_freq.npy", np.array([1, 1, 0, 2], dtype=np.int64))
    (dest / "g" / "grid.json").write_text(json.dumps({**grid, "unigram_entropy": None}))
    assert collect.main([str(second), "--dest", str(dest)]) == 0
    assert json.loads((dest / "g" / "grid.json").read_text())["unigram_entropy"] == pytest.approx(1.0397, abs=1e-4)
    # a sweep of other data is still refused, nothing written
    third = _sweep(tmp_path / "c", [{"name": "r2", "data": {"fingerprint": "z", "fingerprint_version": 2,
                                                           "legacy_fingerprint": "y", **counts}}])
    (third / "grid.json").write_text(json.dumps({**grid, "data_fingerprint": "z", "data_fingerprint_version": 2,
                                                 "data_legacy_fingerprint": "y"}))
    assert collect.main([str(third), "--dest", str(dest)]) == 2
    assert "data fingerprint" in capsys.readouterr().err
    assert _names(dest / "g" / "results.jsonl") == ["r0", "r1"]


def test_the_report_takes_the_plateau_from_a_data_folder_only_when_it_is_the_sweeps(tmp_path, monkeypatch):
    """grid.json's data_dir is relative to the folder the sweep ran in; a report run elsewhere read the unigram
    entropy of whatever data folder lay at that path there (noticed in issue 29's collection)."""
    import numpy as np

    from leviathan.experiments.machinery.sweep_grid import SweepGrid
    from leviathan.experiments.machinery.data_match import grid_plateau

    prep = tmp_path / "data" / "prep"
    prep.mkdir(parents=True)
    np.save(prep / "train_freq.npy", np.array([1, 1, 0, 2], dtype=np.int64))
    monkeypatch.chdir(tmp_path)
    other = SweepGrid(name="g", runs=[], data_dir="data/prep", data_fingerprint="f" * 64, data_fingerprint_version=2,
                      unigram_entropy=1.5)
    assert grid_plateau(other) == 1.5  # not a prepared folder of that fingerprint: the stored value
    unrecorded = SweepGrid(name="g", runs=[], data_dir="data/prep")
    assert grid_plateau(unrecorded) == pytest.approx(1.0397, abs=1e-4)  # nothing stored, nothing to check: the folder
    assert grid_plateau(SweepGrid(name="g", runs=[], data_dir="data/none", unigram_entropy=2.0)) == 2.0


def test_the_report_takes_the_plateau_from_the_sweeps_own_data_folder(tmp_path, monkeypatch):
    """The same rule's other side: a prepared folder whose fingerprint grid.json records is read (and preferred to
    the stored value); one of another preparation is not."""
    from leviathan.data.prepare import prepare
    from leviathan.experiments.machinery.provenance import data_provenance
    from leviathan.experiments.machinery.sweep_grid import SweepGrid
    from leviathan.experiments.machinery.data_match import grid_plateau
    from leviathan.experiments.method.plateau import unigram_entropy

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("the cat sat on the mat. " * 40 + "a dog ran far away. " * 25)
    (corpus / "b.txt").write_text("birds sing in the morning light. " * 30)
    prep = tmp_path / "data" / "prep"
    prepare(str(corpus), prep, tokenizer="bpe:300", val_fraction=0.5, progress=False, log=lambda msg: None)
    monkeypatch.chdir(tmp_path)
    mine = data_provenance(prep)
    own = SweepGrid(name="g", runs=[], data_dir="data/prep", data_fingerprint=mine.fingerprint,
                    data_fingerprint_version=mine.fingerprint_version, unigram_entropy=9.0)
    assert grid_plateau(own) == pytest.approx(unigram_entropy(prep)) != 9.0
    other = SweepGrid(name="g", runs=[], data_dir="data/prep", data_fingerprint="0" * 64,
                      data_fingerprint_version=mine.fingerprint_version, unigram_entropy=9.0)
    assert grid_plateau(other) == 9.0


def test_collect_takes_the_plateau_only_from_a_data_folder_of_the_sweeps_fingerprint(collect, tmp_path, monkeypatch):
    """collect_results looks for grid.json's relative ``data_dir`` from here and above the sweep; a folder of that
    name holding another preparation (another checkout's ``data/prep``) gave its plateau to the sweep's copy. Now a
    folder counts only when its fingerprint is the one grid.json records, and the search goes on past one that is
    not (noticed in the issue 29/33 sessions)."""
    from leviathan.data.prepare import prepare
    from leviathan.experiments.machinery.provenance import data_provenance
    from leviathan.experiments.method.plateau import unigram_entropy

    def prepared(folder: Path, text: str) -> Path:
        corpus = folder.parent / (folder.name + "-text")
        corpus.mkdir(parents=True)
        (corpus / "a.txt").write_text(text)
        (corpus / "b.txt").write_text("a second book of other words. " * 30)
        prepare(str(corpus), folder, tokenizer="bpe:300", val_fraction=0.3, progress=False, log=lambda msg: None)
        return folder

    own = prepared(tmp_path / "worktree" / "data" / "prep", "the cat sat on the mat. " * 40 + "a dog ran. " * 30)
    stranger = prepared(tmp_path / "here" / "data" / "prep", "birds sing in the morning light. " * 50)
    mine = data_provenance(own)
    assert mine.fingerprint != data_provenance(stranger).fingerprint
    sweep = _sweep(tmp_path / "worktree" / "runs" / "g", [{"name": "r0"}])
    (sweep / "grid.json").write_text(json.dumps({"name": "g", "data_dir": "data/prep",
                                                 "data_fingerprint": mine.fingerprint,
                                                 "data_fingerprint_version": mine.fingerprint_version}))
    monkeypatch.chdir(tmp_path / "here")  # its data/prep is found first, and is another preparation
    assert collect.main([str(sweep), "--dest", str(tmp_path / "results")]) == 0
    stored = json.loads((tmp_path / "results" / "g" / "grid.json").read_text())["unigram_entropy"]
    assert stored == pytest.approx(unigram_entropy(own)) != pytest.approx(unigram_entropy(stranger))


@pytest.mark.parametrize("grid_json", [None, "{not json", "[1, 2]"], ids=["missing", "damaged", "not-a-grid"])
def test_a_sweep_without_a_readable_grid_json_is_one_error(collect, tmp_path, capsys, grid_json):
    """Round 12 (T101): a sweep folder whose grid.json was deleted ended in a FileNotFoundError traceback."""
    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    (sweep / "grid.json").unlink()
    if grid_json is not None:
        (sweep / "grid.json").write_text(grid_json)
    assert collect.main([str(sweep), "--dest", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert "error: " in err and "grid.json" in err and "Traceback" not in err, err
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs", ""])
def test_a_grid_name_that_is_no_folder_name_writes_nothing(collect, tmp_path, capsys, name):
    """Round 12 (T188, T189, T191): grid.json's name "../escape" or an absolute path made collect write outside
    --dest; an empty one ended in a TypeError after D/results.jsonl was written."""
    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    (sweep / "grid.json").write_text(json.dumps({"name": name}))
    dest = tmp_path / "d" / "results"
    assert collect.main([str(sweep), "--dest", str(dest)]) == 2
    assert "grid" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_rewrite_names_a_path_it_cannot_use_and_a_damaged_file_it_leaves(collect, tmp_path, capsys):
    """Round 12 (T197-T200): --rewrite of a folder holding a results.jsonl with a non-UTF-8 line or a grid.json that
    is not JSON ended in tracebacks; of a file or a missing path it rewrote nothing, exit 0, without a word."""
    folder = tmp_path / "res" / "g"
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_bytes(json.dumps({"name": "r0", "variant": "dense_tied"}).encode() + b"\n\xff\n")
    (folder / "grid.json").write_text("{bad")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert collect.main(["--rewrite", str(tmp_path / "res")]) == 0
    err = capsys.readouterr().err
    assert "results.jsonl' as it is: it is not UTF-8 text" in err and "grid.json' as it is: it is not readable " \
        "JSON" in err, err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    for path in (folder / "grid.json", tmp_path / "nothere"):
        assert collect.main(["--rewrite", str(path)]) == 2
        assert "pass the folder whose results files to make portable" in capsys.readouterr().err


def test_a_sweep_folder_that_is_not_there_or_no_folder_at_all_is_an_error(collect, tmp_path, capsys):
    """Issue 30 round 14 (B215, B216): a sweep folder that does not exist was "no results.jsonl yet, skipped", exit 0,
    and no folder at all printed nothing, exit 0."""
    assert collect.main([str(tmp_path / "nonexist"), "--dest", str(tmp_path / "dest")]) == 2
    assert f"sweep folder '{tmp_path / 'nonexist'}' does not exist; nothing was written" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        collect.main(["--dest", str(tmp_path / "dest")])
    assert info.value.code == 2 and "give the sweep folders to collect" in capsys.readouterr().err
    assert not (tmp_path / "dest").exists()


def test_a_users_results_jsonl_without_a_grid_json_is_not_collected_into(collect, tmp_path, capsys):
    """Issue 30 round 14 (B189): a user's DEST/g/results.jsonl holding {"name": "mine", "x": 1}, with no grid.json
    beside it, had the sweep's rows appended to it and a grid.json added, exit 0."""
    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    mine = tmp_path / "dest" / "g" / "results.jsonl"
    mine.parent.mkdir(parents=True)
    mine.write_text('{"name": "mine", "x": 1}\n')
    assert collect.main([str(sweep), "--dest", str(tmp_path / "dest")]) == 2
    assert "has no grid.json beside it, as collect_results writes both" in capsys.readouterr().err
    assert mine.read_text() == '{"name": "mine", "x": 1}\n' and sorted(p.name for p in mine.parent.iterdir()) == [
        "results.jsonl"]


def _script(*argv, cwd=None, **popen):
    """``python scripts/collect_results.py <argv>`` in a real process."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src")}
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, argv)], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120, **popen)


def _tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_empty_path_is_refused_not_read_as_the_current_folder(tmp_path):
    """Round 15 (B186, damage; B185): ``--rewrite ""`` rewrote every results file under the folder it ran in, and
    ``--dest ""`` created the grid's folder there, exit 0. "" is refused in one line; nothing changes."""
    sweep = _sweep(tmp_path / "sw1", [{"name": "r0", "final_val_loss": float("inf"), "run_dir": "/abs/runs/r0"}])
    before = _tree(tmp_path)
    for argv in (["--rewrite", ""], [sweep, "--dest", ""], ["", "--dest", tmp_path / "d"]):
        done = _script(*argv, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "is an empty path (\"\"), which would be read as the current folder" in done.stderr
    assert _tree(tmp_path) == before


def test_rewrite_leaves_a_file_whose_values_it_would_change_and_a_verbs_live_output(collect, tmp_path, capsys):
    """Round 15 (B189, B370, B186, B25): --rewrite turned a row's Infinity or NaN into null, dropped a key given twice,
    cut a run_dir '/etc/passwd' to 'etc/passwd', and rewrote an lm-eval folder's own lm_eval.json. Each such file is
    left byte for byte, with a warning naming why; a collected file beside them is still made portable."""
    res = tmp_path / "res"
    files = {"inf/results.jsonl": '{"name": "r0", "variant": "v", "tokens_per_s": Infinity, "run_dir": "/x/runs/r0"}\n',
             "nan/results.jsonl": '{"name": "r0", "variant": "v", "final_val_loss": NaN, "run_dir": "/x/runs/r0"}\n',
             "twice/results.jsonl": '{"name": "r0", "variant": "v", "x": 1, "x": 2, "run_dir": "/x/runs/r0"}\n',
             "out/results.jsonl": '{"name": "r0", "variant": "v", "run_dir": "/etc/passwd"}\n',
             "le1/lm_eval.json": '{"source": "/x/runs/r0", "tasks": [], "results": {}, "hf_dir": "/tmp/x/hf"}\n',
             "le1/leviathan_output.json": json.dumps({"format": 1, "verb": "lm-eval", "files": None}),
             "ok/results.jsonl": '{"name": "r0", "variant": "v", "run_dir": "/x/runs/r0"}\n'}
    for name, text in files.items():
        (res / name).parent.mkdir(parents=True, exist_ok=True)
        (res / name).write_text(text)
    assert collect.main(["--rewrite", str(res)]) == 0
    err = capsys.readouterr().err
    for name, why in (("inf", "line 1 holds Infinity, which a rewrite would turn into null"),
                      ("nan", "line 1 holds NaN"), ("twice", "line 1 gives key 'x' twice"),
                      ("out", "line 1 has run_dir '/etc/passwd', an absolute path outside any sweep's runs/ folder")):
        assert f"warning: left '{res / name / 'results.jsonl'}' as it is: {why}" in err, err
    assert f"warning: left '{res / 'le1' / 'lm_eval.json'}' as it is: its folder is the output of `leviathan " \
           f"lm-eval`" in err
    assert {n: (res / n).read_text() for n in files if not n.startswith("ok")} == {
        n: t for n, t in files.items() if not n.startswith("ok")}
    assert json.loads((res / "ok" / "results.jsonl").read_text())["run_dir"] == "runs/r0"


def test_rewrite_that_left_every_file_does_not_say_they_hold_no_machine_path(collect, tmp_path, capsys):
    """Round 17 (E187): --rewrite of a sweep folder whose row holds an absolute run_dir warned that results.jsonl and
    grid.json were left as they are (the sweep's own output), then summed up "nothing to rewrite: the 2 results
    file(s) ... hold no machine path", false for results.jsonl. The files left are counted apart."""
    sweep = tmp_path / "sw"
    sweep.mkdir()
    (sweep / "results.jsonl").write_text('{"name": "r0", "variant": "v", "run_dir": "/x/sw/runs/r0"}\n')
    (sweep / "leviathan_output.json").write_text(json.dumps({"format": 1, "verb": "sweep", "files": None}))
    assert collect.main(["--rewrite", str(sweep)]) == 0
    err = capsys.readouterr().err
    assert f"nothing rewritten under '{sweep}': 1 of its 1 results file(s) were left as they are (the warnings " \
           f"above say why)" in err, err
    assert "hold no machine path" not in err, err


def test_rewrite_of_a_folder_without_results_files_says_so(collect, tmp_path, capsys):
    """Round 15 (B22): --rewrite of a prepared data folder printed nothing, exit 0."""
    data = tmp_path / "data_rw"
    data.mkdir()
    (data / "meta.json").write_text('{"vocab_size": 5}')
    assert collect.main(["--rewrite", str(data)]) == 2
    assert f"--rewrite '{data}' holds no results file leviathan wrote" in capsys.readouterr().err
    assert (data / "meta.json").read_text() == '{"vocab_size": 5}'


def test_a_row_with_a_run_dir_outside_any_runs_folder_is_not_copied_and_the_count_is_of_rows_copied(
        collect, tmp_path, capsys):
    """Round 15 (B269, B21): a row whose run_dir was '/etc/passwd' was collected as 'etc/passwd'; and the summary said
    "(7 rows)" when a skipped row left 6 written."""
    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0, "run_dir": "/etc/passwd"},
                                    {"name": "r1", "final_val_loss": 1.0, "metrics": "/home/someone/m.jsonl"},
                                    {"name": "r2", "final_val_loss": 1.0, "run_dir": "/x/runs/r2"}])
    assert collect.main([str(sweep), "--dest", str(tmp_path / "d")]) == 0
    out, err = capsys.readouterr()
    assert "run_dir '/etc/passwd', an absolute path outside any sweep's runs/ folder" in err
    assert "metrics '/home/someone/m.jsonl'" in err
    assert _names(tmp_path / "d" / "g" / "results.jsonl") == ["r2"] and "(1 rows)" in out, out


def test_collect_into_a_reports_folder_or_under_a_file_names_the_folder_and_the_file(collect, tmp_path, capsys):
    """Round 15 (B148, B224): --dest of a `leviathan report` folder wrote DEST/<grid> inside the report; --dest pf/c
    with pf a file named 'pf/c/g' as the file in the way."""
    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    rep = tmp_path / "rep1"
    rep.mkdir()
    (rep / "leviathan_output.json").write_text(json.dumps({"format": 1, "verb": "report", "files": ["report.md"]}))
    assert collect.main([str(sweep), "--dest", str(rep)]) == 2
    assert f"--dest '{rep}' is the folder of one grid's `leviathan report`" in capsys.readouterr().err
    assert sorted(p.name for p in rep.iterdir()) == ["leviathan_output.json"]
    (tmp_path / "pf").write_text("x\n")
    assert collect.main([str(sweep), "--dest", str(tmp_path / "pf" / "c")]) == 2
    assert f"error: '{tmp_path / 'pf'}': a file is in the way where a folder is expected" in capsys.readouterr().err


def test_rewrite_on_a_read_only_disk_names_no_dest(collect, tmp_path, capsys, monkeypatch):
    """Round 15 (B26): --rewrite onto a read-only folder advised "(--dest)", which --rewrite does not take."""
    import errno
    import os

    import leviathan.io

    folder = tmp_path / "k2"
    folder.mkdir()
    (folder / "results.jsonl").write_text('{"name": "r0", "variant": "v", "run_dir": "/x/runs/r0"}\n')

    def read_only(path, text, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(leviathan.io, "atomic_write_text", read_only)
    assert collect.main(["--rewrite", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "read-only file system" in err and "--dest" not in err and "--rewrite of a copy" in err, err


def _wait_for_the_scripts_first_line(pid: int) -> None:
    """Until the script's first lines catch SIGTERM (bit 15 of SigCgt in /proc/PID/status; the interpreter alone
    catches only SIGINT). A stop before that meets the interpreter's own start-up, which no script can word (a SIGINT
    in its first milliseconds ends it by the default action, or with "Fatal Python error: init_import_site"), and on
    a loaded machine the fixed delays can fall there."""
    import time

    status = Path(f"/proc/{pid}/status")
    if not status.exists():  # not Linux: the fixed delays alone
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        if int(fields["SigCgt"].strip(), 16) >> (15 - 1) & 1:
            return
        time.sleep(0.002)
    raise AssertionError("collect_results.py did not catch SIGTERM within 60 s")


@pytest.mark.parametrize("signame, after", [("SIGINT", 0.0), ("SIGINT", 0.05), ("SIGINT", 0.15), ("SIGTERM", 0.1),
                                            ("SIGTERM", 0.2)])
def test_a_stop_is_one_line_and_leaves_no_staging_folder(tmp_path, signame, after):
    """Round 15 (B254, B255): Ctrl-C into collect_results.py ended in a KeyboardInterrupt traceback; SIGTERM killed it
    without a word and left /tmp/collect-XXXXXXXX behind. Either stop is one line now, the staging folder removed."""
    import os
    import signal
    import subprocess
    import sys
    import time

    sweep = _sweep(tmp_path / "a", [{"name": f"r{i}", "final_val_loss": 1.0} for i in range(3)])
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src"), "TMPDIR": str(scratch)}
    proc = subprocess.Popen([sys.executable, str(SCRIPT), str(sweep), "--dest", str(tmp_path / "d")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_the_scripts_first_line(proc.pid)
    time.sleep(after)
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err
    if proc.returncode != 0:  # it may have finished first
        assert err.count("\n") == 1 and err.startswith("stopped by ") and "collect_results.py" in err, err
        assert proc.returncode == (130 if signame == "SIGINT" else 143), (proc.returncode, err)
    assert not list(scratch.iterdir()), (proc.returncode, err)


def test_rewrite_names_each_file_as_it_is_rewritten_before_a_failure(tmp_path, monkeypatch):
    """Round 15 (B186): --rewrite stopped half-way by a read-only file said only the file it stopped at; the files it
    had already rewritten went unnamed. Each is printed as it is replaced, so the lines before the error list them."""
    res = tmp_path / "res"
    for name in ("a", "b"):
        (res / name).mkdir(parents=True)
        (res / name / "results.jsonl").write_text('{"name": "r0", "variant": "v", "run_dir": "/x/runs/r0"}\n')
    script = tmp_path / "ro.py"  # a read-only folder does not stop root: refuse the second write in the process
    script.write_text(f"""import errno, os, runpy, sys
import leviathan.io
real = leviathan.io.atomic_write_text
def write(path, text, *a, **k):
    if "/b/" in str(path):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    return real(path, text, *a, **k)
leviathan.io.atomic_write_text = write
sys.argv = [{str(SCRIPT)!r}, "--rewrite", {str(res)!r}]
runpy.run_path({str(SCRIPT)!r}, run_name="__main__")
""")
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src")})
    assert done.returncode == 2 and f"rewrote {res / 'a' / 'results.jsonl'}" in done.stdout, (done.stdout, done.stderr)
    assert "read-only file system" in done.stderr and "--dest" not in done.stderr, done.stderr


def test_a_full_disk_at_grid_json_leaves_neither_file_in_place(tmp_path):
    """Round 16 (C33): each of a grid's two files went into ``DEST/<grid>`` by its own atomic write, so a disk that
    filled at grid.json left results.jsonl there without it (and report read it unchecked). Both are written beside
    their targets before either is renamed: a first collect leaves no folder, a second leaves the earlier pair."""
    import os
    import subprocess
    import sys

    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    dest = tmp_path / "res"
    script = tmp_path / "full.py"  # ENOSPC at any write of a grid.json under dest, in a real process
    script.write_text(f"""import builtins, errno, os, runpy, sys
real = builtins.open
def full_open(file, mode="r", *a, **k):
    if str(file).startswith({str(dest)!r}) and "grid.json" in os.path.basename(str(file)) and set(mode) & set("wxa"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
    return real(file, mode, *a, **k)
builtins.open = full_open
sys.argv = [{str(SCRIPT)!r}, {str(sweep)!r}, "--dest", {str(dest)!r}]
runpy.run_path({str(SCRIPT)!r}, run_name="__main__")
""")
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src")}

    def run():
        return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)

    done = run()
    assert done.returncode == 2 and "no space left on device" in done.stderr and "grid.json" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert not dest.exists(), sorted(str(p) for p in dest.rglob("*"))
    done = subprocess.run([sys.executable, str(SCRIPT), str(sweep), "--dest", str(dest)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    before = {p.name: p.read_bytes() for p in (dest / "g").iterdir()}
    (sweep / "results.jsonl").write_text('{"name": "r0", "final_val_loss": 1.0}\n{"name": "r1", "final_val_loss": 2.0}\n')
    done = run()
    assert done.returncode == 2 and "no space left on device" in done.stderr, done.stderr
    assert {p.name: p.read_bytes() for p in (dest / "g").iterdir()} == before


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_stop_once_the_files_are_in_place_says_the_work_is_complete(tmp_path, signame):
    """Round 17 (E387): a SIGTERM that came while collect_results.py put a grid's files in place was delivered once
    they were there, whole, and the line said "stopped ... before ... finished ...; run the same command again", the
    "SWEEP -> DEST/g (N rows)" line unprinted. The stop is now said after the work: the rows line, then one line that
    the work is complete, exit 128 + the signal's number."""
    import os
    import subprocess
    import sys

    sweep = _sweep(tmp_path / "a", [{"name": f"r{i}", "final_val_loss": 1.0} for i in range(3)])
    script = tmp_path / "stop.py"  # the stop arrives inside the write that puts the files in place
    script.write_text(f"""import os, runpy, signal, sys
import leviathan.io
real = leviathan.io.atomic_write_together
def write(files, *a, **k):
    real(files, *a, **k)
    if any(str(path).startswith({str(tmp_path / "d")!r}) for path in files):  # not the staging folder's writes
        os.kill(os.getpid(), signal.{signame})
leviathan.io.atomic_write_together = write
sys.argv = [{str(SCRIPT)!r}, {str(sweep)!r}, "--dest", {str(tmp_path / "d")!r}]
runpy.run_path({str(SCRIPT)!r}, run_name="__main__")
""")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src")})
    name = "Ctrl-C (SIGINT)" if signame == "SIGINT" else signame
    assert done.stdout == f"{sweep} -> {tmp_path / 'd' / 'g'} (3 rows)\n", (done.stdout, done.stderr)
    assert done.stderr == (f"stopped by {name} as `python scripts/collect_results.py` was ending, after it had "
                           f"finished: its work is complete (what it printed and wrote stands); nothing needs running "
                           f"again\n"), done.stderr
    assert done.returncode == (130 if signame == "SIGINT" else 143)
    assert _names(tmp_path / "d" / "g" / "results.jsonl") == ["r0", "r1", "r2"]


def test_a_stop_as_it_prints_its_last_line_is_never_a_silent_kill(tmp_path):
    """The landing CI of 3b9aad4 (test_a_stop_is_one_line...[SIGINT-0.15]): a Ctrl-C that came after "-> DEST" was
    printed, while the interpreter finalized (which first puts the signals' default actions back), killed the process
    without a word, status -2 (20 of 20 tries here). The script now ends by ``os._exit`` once its streams are flushed:
    such a stop finds it gone (status 0) or is said in one line."""
    import os
    import signal
    import subprocess
    import sys
    import time

    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src")}
    for attempt in range(8):
        proc = subprocess.Popen([sys.executable, str(SCRIPT), str(sweep), "--dest", str(tmp_path / f"d{attempt}")],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert "->" in proc.stdout.readline()
        time.sleep(0.01)  # past the microseconds between the verb's handlers and the late ones (a known gap, which a
        # stop sent at once can hit: a KeyboardInterrupt traceback); inside the old finalization: 20 of 20 silent kills
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 130), (attempt, proc.returncode, err)
        assert err.count("\n") == (proc.returncode == 130), err


def test_a_train_run_or_a_report_folder_is_named_not_skipped_as_a_sweep_not_finished(tmp_path):
    """Round 18 (F120, F122): a train run folder or a report folder given as a sweep was "RUN: no results.jsonl yet,
    skipped", exit 0, as if it were a sweep that had not finished. Each is named as what it is (``file_kinds``), exit
    2, nothing written; a folder of no known kind keeps the note (a real process)."""
    from leviathan.ownership import write_marker

    sweep = _sweep(tmp_path / "sw", [{"name": "r0", "final_val_loss": 1.0}])
    run, report, plain = tmp_path / "run1", tmp_path / "rep1", tmp_path / "plain"
    run.mkdir()
    write_marker(run, "train")  # as train marks its new folder, before its first file
    (run / "checkpoints").mkdir()
    report.mkdir()
    (report / "report.md").write_text("# report\n")
    write_marker(report, "report", ["report.md"])
    plain.mkdir()
    for folder, kind in ((run, "a train run folder (written by `leviathan train`)"),
                         (report, "a report folder (written by `leviathan report`)")):
        done = _script(sweep, folder, "--dest", tmp_path / "dest")
        assert done.returncode == 2 and done.stderr == (
            f"error: sweep folder '{folder}' is {kind}, not a sweep's folder: it holds no result rows to collect; "
            f"nothing was written; pass the --out folder of a sweep (it holds results.jsonl)\n"), done.stderr
        assert not (tmp_path / "dest").exists()
    done = _script(plain, "--dest", tmp_path / "dest")
    assert done.returncode == 0 and done.stderr == f"{plain}: no results.jsonl yet, skipped\n", done.stderr


def test_a_full_temporary_directory_is_named_with_tmpdir_not_dest(tmp_path):
    """Round 18 (F19): with $TMPDIR on a full disk (and --dest on a roomy one) the line blamed --dest: "no space left
    on device; free disk space or write to another disk (--dest)". The rows are staged in the temporary directory:
    the line names it and TMPDIR. A real process whose writes under $TMPDIR fail with ENOSPC, as on a full tmpfs."""
    import os
    import subprocess
    import sys

    sweep = _sweep(tmp_path / "a", [{"name": "r0", "final_val_loss": 1.0}])
    temp, dest = tmp_path / "tmp", tmp_path / "res"
    temp.mkdir()
    script = tmp_path / "full.py"
    script.write_text(f"""import builtins, errno, os, runpy, sys
real = builtins.open
def full_open(file, mode="r", *a, **k):
    if str(file).startswith({str(temp) + os.sep!r}) and set(mode) & set("wxa"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
    return real(file, mode, *a, **k)
builtins.open = full_open
sys.argv = [{str(SCRIPT)!r}, {str(sweep)!r}, "--dest", {str(dest)!r}]
runpy.run_path({str(SCRIPT)!r}, run_name="__main__")
""")
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src"), "TMPDIR": str(temp)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: '{temp}/collect-") and "no space left on device" in done.stderr
    assert done.stderr.endswith(f"collect_results stages the rows it collects into a temporary folder under {temp}: "
                                f"make room there, or point TMPDIR at a disk with room (TMPDIR=DIR python "
                                f"scripts/collect_results.py ...)\n"), done.stderr
    assert "--dest" not in done.stderr and not dest.exists() and not list(temp.glob("collect-*"))
