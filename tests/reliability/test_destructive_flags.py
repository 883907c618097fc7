"""A flag that replaces an earlier output replaces only that (issue 30, kind 1): ``export --overwrite`` and
``prepare --overwrite`` delete a folder only when it is provably their own earlier output (the marker the verb
wrote, exactly the files it lists) and no live process holds a lock in it; a refusal names what would be deleted
and how to delete it by hand (``leviathan.ownership``).

Before, ``export RUN DIR --overwrite`` deleted any non-empty DIR (a user's documents, the very run it exported,
a folder whose run another process was training) with exit 0, and ``prepare --overwrite`` any folder holding a
meta.json.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from leviathan.ownership import MARKER

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, tree_hashes, write_corpus  # noqa: E402
from test_one_writer import fails, hold_lock, stop  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture
def earlier_export(finished_run, tmp_path) -> Path:
    from leviathan.cli import main

    out = tmp_path / "hf"
    assert main(["export", str(finished_run), str(out)]) == 0
    return out


def test_export_overwrite_refuses_a_users_folder(finished_run, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thesis.txt").write_text("years of work")
    line = cli_error(["export", finished_run, docs, "--overwrite"])
    assert f"would delete '{docs}' (1 file(s): thesis.txt)" in line
    assert f"it has no {MARKER}" in line and f"delete it by hand first: rm -r {docs}" in line
    assert (docs / "thesis.txt").read_text() == "years of work"


def test_export_overwrite_refuses_the_run_it_exports(capsys, run_copy):
    before = tree_hashes(run_copy)
    line = fails(capsys, "export", run_copy, run_copy, "--overwrite")
    assert "is the same folder as the checkpoint's folder" in line
    assert tree_hashes(run_copy) == before


def test_export_overwrite_replaces_an_earlier_export(capsys, finished_run, earlier_export):
    marker = json.loads((earlier_export / MARKER).read_text())
    assert marker["verb"] == "export" and "model.safetensors" in marker["files"]
    from leviathan.cli import main

    assert main(["export", str(finished_run), str(earlier_export), "--overwrite", "--plain-llama"]) == 0
    assert json.loads((earlier_export / "config.json").read_text())["model_type"] == "llama"


def test_export_overwrite_refuses_an_export_with_a_file_added(capsys, finished_run, earlier_export):
    (earlier_export / "notes.md").write_text("my notes")
    line = fails(capsys, "export", finished_run, earlier_export, "--overwrite")
    assert "it holds files the earlier `leviathan export` did not write (notes.md)" in line
    assert (earlier_export / "notes.md").read_text() == "my notes"


def test_export_overwrite_never_touches_a_locked_folder(capsys, finished_run, earlier_export, tmp_path):
    """A live process writing inside the folder (it holds a lock there, as ``train`` holds RUN/.lock)."""
    before = tree_hashes(earlier_export)
    holder = hold_lock(earlier_export, tmp_path / "held", beside=False)
    try:
        line = fails(capsys, "export", finished_run, earlier_export, "--overwrite")
    finally:
        stop(holder)
    assert f"process {holder.pid}" in line and "is writing there" in line and "nothing was deleted" in line
    after = tree_hashes(earlier_export)
    after.pop(".lock")  # left by the killed holder
    assert after == before


def test_a_users_file_with_a_locks_name_is_a_file_of_the_folder(capsys, finished_run, earlier_export, tmp_path):
    """Round 7 (A1, A5): any ``.NAME.lock`` counted as a lock file, so a user's ``.notes.lock`` in an earlier export
    or data folder was not among its files and ``--overwrite`` deleted it (exit 0). Leviathan's own lock files hold a
    process id (``locking.is_lock_record``); a stale one left by a killed holder is still not the folder's file."""
    (earlier_export / ".notes.lock").write_text("my notes")
    line = fails(capsys, "export", finished_run, earlier_export, "--overwrite")
    assert "it holds files the earlier `leviathan export` did not write (.notes.lock)" in line
    assert (earlier_export / ".notes.lock").read_text() == "my notes"
    from leviathan.cli import main

    corpus = write_corpus(tmp_path / "corpus", num_docs=4)
    data = tmp_path / "data"
    assert main([str(a) for a in _prepare(data, corpus)]) == 0
    (data / ".draft.lock").write_text("a draft")
    line = fails(capsys, *_prepare(data, corpus, "--seed", "3", "--overwrite"))
    assert "did not write (.draft.lock)" in line and (data / ".draft.lock").read_text() == "a draft"
    (earlier_export / ".notes.lock").unlink()
    (earlier_export / ".hf.lock").write_text("12345\nleviathan export RUN hf\n")  # a dead holder's lock record
    assert main(["export", str(finished_run), str(earlier_export), "--overwrite"]) == 0


def _prepare(out: Path, corpus: Path, *extra) -> list:
    return ["prepare", corpus, "--out", out, "--tokenizer", "cl100k_base", "--no-progress", *extra]


def test_prepare_overwrite_refuses_a_folder_with_a_foreign_meta_json(capsys, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", num_docs=4)
    site = tmp_path / "site"
    site.mkdir()
    (site / "meta.json").write_text(json.dumps({"title": "my web site", "splits": {}}))
    (site / "index.html").write_text("<html>")
    before = tree_hashes(site)
    line = fails(capsys, *_prepare(site, corpus, "--overwrite"))
    assert f"--overwrite (overwrite=True) would delete '{site}' (2 file(s): index.html, meta.json)" in line
    assert f"rm -r {site}" in line
    assert tree_hashes(site) == before


def test_prepare_overwrite_replaces_its_own_data_and_old_ones(capsys, tmp_path):
    from leviathan.cli import main

    corpus = write_corpus(tmp_path / "corpus", num_docs=4)
    out = tmp_path / "data"
    assert main([str(a) for a in _prepare(out, corpus)]) == 0
    assert json.loads((out / MARKER).read_text())["verb"] == "prepare"
    assert main([str(a) for a in _prepare(out, corpus, "--seed", "3", "--overwrite")]) == 0
    (out / MARKER).unlink()  # a data folder prepared before markers: recognised by its meta.json's files
    assert main([str(a) for a in _prepare(out, corpus, "--seed", "4", "--overwrite")]) == 0
    (out / "extra.txt").write_text("mine")
    line = fails(capsys, *_prepare(out, corpus, "--seed", "5", "--overwrite"))
    assert "it holds files the earlier `leviathan prepare` did not write (extra.txt)" in line


def test_the_python_api_refuses_a_foreign_folder_too(finished_run, tmp_path):
    """``to_plain_llama(..., overwrite=True)`` (lm-eval's kept export goes through it) is the same check."""
    from leviathan.checkpoint import load_model
    from leviathan.errors import UserError
    from leviathan.hf.export import to_plain_llama

    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "mine.txt").write_text("x")
    model, _ = load_model(finished_run)
    with pytest.raises(UserError, match="would delete"):
        to_plain_llama(model, folder, overwrite=True)
    assert (folder / "mine.txt").read_text() == "x"
    shutil.rmtree(folder)


def test_demo_replaces_only_an_earlier_demo(capsys, data, tmp_path):
    """``demo --run-dir`` replaces an earlier demo: not one whose folder also holds a file of the user's."""
    run = tmp_path / "demo"
    (run / "dense_tied").mkdir(parents=True)
    (run / "demo.json").write_text("{}")
    (run / "notes.txt").write_text("my notes on the demo")
    line = fails(capsys, "demo", "--data-dir", data, "--run-dir", run, "--steps", "1", "--quiet")
    assert f"--run-dir would delete '{run}' (2 file(s): demo.json, notes.txt)" in line and f"rm -r {run}" in line
    assert (run / "notes.txt").read_text() == "my notes on the demo"


def test_an_output_folder_given_as_the_current_folder_is_refused(finished_run, data, earlier_export, tmp_path):
    """Round 5: ``export RUN . --overwrite`` from inside an earlier export, ``export RUN .`` from inside an empty folder
    and ``prepare ... --out . --overwrite`` from inside a data folder ended in a traceback (``'.' has an empty name``,
    ``Device or resource busy``) after the work was done, leaving a ``..old-*`` folder behind. Now one line before
    anything is written: the output is renamed into place, which the current folder cannot be."""
    before = tree_hashes(earlier_export)
    line = cli_error(["export", finished_run, ".", "--overwrite"], cwd=earlier_export)
    assert "out_dir '.' is the current folder" in line and f"out_dir {earlier_export.name})" in line
    assert tree_hashes(earlier_export) == before and sorted(p.name for p in earlier_export.parent.iterdir()) == ["hf"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "is the current folder" in cli_error(["export", finished_run, "."], cwd=empty)
    assert list(empty.iterdir()) == []
    copy = Path(shutil.copytree(data, tmp_path / "data"))
    before = tree_hashes(copy)
    line = cli_error(["prepare", write_corpus(tmp_path / "corpus"), "--out", ".", "--tokenizer", "bpe:300",
                      "--overwrite", "--no-progress"], cwd=copy)
    assert "is the current folder or holds it" in line and tree_hashes(copy) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no lock, temporary or old folder left


def test_an_output_folder_given_with_a_trailing_dot_is_its_own_name(finished_run, tmp_path):
    """``export RUN DIR/.`` (not the current folder) writes DIR like ``export RUN DIR``."""
    from leviathan.cli import main

    (tmp_path / "out").mkdir()
    assert main(["export", str(finished_run), str(tmp_path / "out") + "/."]) == 0
    assert (tmp_path / "out" / "model.safetensors").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.fixture
def bind_mount():
    """A function ``(folder) -> a new folder beside it onto which ``folder`` is bind-mounted``; undone at the end.
    Needs the right to mount (root, as on the CI machine); skipped where ``mount`` is refused."""
    import subprocess

    mounts: list[Path] = []

    def bind(folder: Path) -> Path:
        where = folder.with_name(folder.name + "-bind")
        where.mkdir()
        done = subprocess.run(["mount", "--bind", str(folder), str(where)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot bind-mount here ({done.stderr.strip() or 'mount refused'})")
        mounts.append(where)
        return where

    yield bind
    for where in mounts:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_an_output_folder_that_is_a_mount_point_is_refused_before_any_work(finished_run, data, earlier_export,
                                                                           bind_mount, tmp_path):
    """Round 6: ``export RUN MOUNT --overwrite`` and ``prepare ... --out MOUNT --overwrite`` at an earlier output that
    is a mount point (a bind mount, a volume) ended, after the work, in a ``Device or resource busy`` traceback from
    the rename that puts the new output in place, leaving a ``.NAME.old-*`` folder beside it; ``demo``'s delete
    would have emptied it. A mount point cannot be renamed: refused up front, naming the way out."""
    mount = bind_mount(earlier_export)
    before = tree_hashes(earlier_export)
    line = cli_error(["export", finished_run, mount, "--overwrite"])
    assert f"out_dir '{mount}' is a mount point" in line and f"(out_dir {mount}/NAME)" in line
    copy = Path(shutil.copytree(data, tmp_path / "data"))
    data_mount = bind_mount(copy)
    line = cli_error(["prepare", write_corpus(tmp_path / "corpus"), "--out", data_mount, "--tokenizer", "bpe:300",
                      "--overwrite", "--no-progress"])
    assert f"--out '{data_mount}' is a mount point" in line
    assert "trained BPE" not in line
    assert tree_hashes(earlier_export) == before and tree_hashes(mount) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "data", "data-bind", "hf", "hf-bind"]


def test_demo_refuses_a_link_to_an_earlier_demo_and_keeps_what_it_names(capsys, data, tmp_path):
    """Round 6: ``demo --run-dir LINK`` with LINK a symlink to an earlier demo ended in ``Cannot call rmtree on a
    symbolic link`` (a traceback). Round 29 (W153, W646, W647): replacing the link by a new folder left the earlier
    demo it named as it was, without a word; the link is now refused in one line naming the folder it names (the path
    to give), as prepare and export refuse theirs, and the link and the earlier demo are kept as they were."""
    from leviathan.cli import main

    args = ["demo", "--data-dir", str(data), "--steps", "1", "--seq-len", "32", "--batch-tokens", "64",
            "--eval-tokens", "64", "--variants", "dense_tied", "--quiet"]
    assert main([*args, "--run-dir", str(tmp_path / "earlier")]) == 0
    before = tree_hashes(tmp_path / "earlier")
    (tmp_path / "link").symlink_to("earlier")
    capsys.readouterr()
    assert main([*args, "--run-dir", str(tmp_path / "link")]) == 2
    assert f"--run-dir '{tmp_path / 'link'}' is a symbolic link to '{tmp_path / 'earlier'}'" in capsys.readouterr().err
    assert (tmp_path / "link").is_symlink() and tree_hashes(tmp_path / "earlier") == before


def test_a_demo_stopped_part_way_is_replaced_by_the_rerun_it_advises(data, tmp_path):
    """Round 6: a demo stopped by SIGTERM while its models trained said "run the same command again", and the rerun
    was refused (``--run-dir would delete ... it has no leviathan_output.json``): the marker came only at the end.
    The run folder is claimed when it is made."""
    import signal
    import subprocess
    import time

    from reliability_support import REPO

    args = ["demo", "--data-dir", str(data), "--seq-len", "32", "--batch-tokens", "64", "--eval-tokens", "64",
            "--variants", "dense_tied", "--quiet", "--run-dir", str(tmp_path / "demo")]
    env = {**__import__("os").environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "leviathan", *args, "--steps", "100000"], env=env,
                            stderr=subprocess.PIPE, text=True)
    metrics = tmp_path / "demo" / "dense_tied" / "metrics.jsonl"
    deadline = time.time() + 300
    while not (metrics.is_file() and metrics.read_text().count("\n") >= 2) and time.time() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=300) == 128 + signal.SIGTERM
    assert "run the same command again" in proc.stderr.read()
    from leviathan.cli import main

    assert main([*args, "--steps", "1"]) == 0
    assert json.loads((tmp_path / "demo" / MARKER).read_text())["files"]  # the finished demo lists its files


def test_an_output_folder_that_is_a_link_to_nothing_is_named_before_any_work(finished_run, data, tmp_path):
    """Round 7 (A3, A4, A8): an output given as a symbolic link whose folder does not exist failed after the work, as
    "a file is in the way" (export), "another process may be writing there; retry" (prepare) or "something is in the
    way" (demo)."""
    for flag, argv in [("out_dir", ["export", finished_run]),
                       ("--out", ["prepare", data.parent / "corpus", "--tokenizer", "bpe:300", "--no-progress",
                                  "--out"]),
                       ("--run-dir", ["demo", "--data-dir", data, "--steps", "1", "--variants", "dense_tied",
                                      "--seq-len", "32", "--batch-tokens", "128", "--eval-tokens", "200", "--quiet",
                                      "--run-dir"])]:
        link = tmp_path / f"link{len(flag)}"
        link.symlink_to(tmp_path / "gone")
        line = cli_error([*argv, link])
        assert f"{flag} '{link}' is a symbolic link to '{tmp_path}/gone', which does not exist; remove the link" in line
        assert link.is_symlink() and not (tmp_path / "gone").exists()
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary folder left


def test_an_export_holding_a_users_folder_or_link_is_not_replaced(capsys, finished_run, earlier_export, tmp_path):
    """Round 7 (A2, A11): an empty folder tree or a link to a folder put into an earlier export is nothing
    ``listed_files`` sees, so ``--overwrite`` deleted them (exit 0; a link's target was kept)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thesis.txt").write_text("years of work")
    (earlier_export / "mydocs").symlink_to(docs)
    (earlier_export / "plans" / "2027").mkdir(parents=True)
    line = fails(capsys, "export", finished_run, earlier_export, "--overwrite")
    assert "it holds files the earlier `leviathan export` did not write (mydocs ->, plans/2027/)" in line
    assert (earlier_export / "mydocs").is_symlink() and (earlier_export / "plans" / "2027").is_dir()
    assert (docs / "thesis.txt").read_text() == "years of work"


def _list_in_marker(folder: Path, name: str, whole: bool = False) -> None:
    """Edit ``folder``'s marker to list ``name`` among its files (or, ``whole``, to claim the whole folder)."""
    path = folder / MARKER
    marker = json.loads(path.read_text())
    marker["files"] = None if whole else sorted([*marker["files"], name])
    path.write_text(json.dumps(marker))


@pytest.mark.parametrize("whole", [False, True], ids=["listed", "files-null"])
def test_a_marker_edited_to_list_a_users_file_does_not_make_it_the_verbs(finished_run, data, earlier_export, tmp_path,
                                                                         whole):
    """Round 8 (A4, A5): a user's notes.txt put in an earlier export or data folder, with the folder's marker edited to
    list it (or to claim the whole folder), was deleted by ``export --overwrite`` / ``prepare --overwrite``, exit 0.
    A file the verb never writes, or one whose sha256 is not the one an export's marker records, is not its own; an
    export's marker edited to claim the whole folder keeps its digests and is refused as a marker no verb writes
    (round 30, Y416)."""
    copy = Path(shutil.copytree(data, tmp_path / "data"))
    for folder in (earlier_export, copy):
        (folder / "notes.txt").write_text("mine")
        _list_in_marker(folder, "notes.txt", whole)
    before = {folder: tree_hashes(folder) for folder in (earlier_export, copy)}
    line = cli_error(["export", finished_run, earlier_export, "--overwrite"])
    if whole:  # an export's marker records digests, which a whole-folder marker never holds (round 30, Y416)
        assert "field 'sha256' records digests" in line and "field 'files' is null" in line
    else:
        assert "notes.txt" in line and "delete it by hand first" in line
    line = cli_error(["prepare", write_corpus(tmp_path / "corpus"), "--out", copy, "--tokenizer", "bpe:300",
                      "--overwrite", "--no-progress"])
    assert "never writes (notes.txt)" in line and f"rm -r {copy}" in line
    assert {folder: tree_hashes(folder) for folder in (earlier_export, copy)} == before


def test_a_forged_export_marker_without_digests_does_not_make_a_users_folder_an_export(finished_run, tmp_path):
    """Round 14 (A223): a user's folder holding notes.txt and a marker written by hand, ``{"verb": "export", "files":
    ["notes.txt"]}`` (no sha256, which every export's marker records), was replaced by ``export --overwrite``: the
    notes deleted, exit 0."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    (folder / MARKER).write_text(json.dumps({"format": 1, "verb": "export", "files": ["notes.txt"]}))
    line = cli_error(["export", finished_run, folder, "--overwrite"])
    assert "records no sha256 of its files, which every `leviathan export` records" in line, line
    assert f"rm -r {folder}" in line and (folder / "notes.txt").read_text() == "mine\n"


def test_an_export_whose_file_was_edited_is_not_replaced(finished_run, earlier_export):
    """Round 8: a model card (README.md) the user edited in an earlier export was deleted by ``--overwrite`` like the
    card export wrote; the marker's sha256 tells the two apart."""
    card = earlier_export / "README.md"
    card.write_text(card.read_text() + "\nMy notes on this model.\n")
    line = cli_error(["export", finished_run, earlier_export, "--overwrite"])
    assert "changed since `leviathan export` wrote them" in line and "README.md" in line
    assert card.read_text().endswith("My notes on this model.\n")


def test_a_users_folder_named_like_a_temporary_folder_is_kept(finished_run, run_copy, data, tmp_path):
    """Round 8 (A17, A18): a user's folder that bore the name of a crashed writer's leftover (``.NAME.tmp-PID-x``
    beside a data folder, with PID no live process; ``checkpoints/.tmp-step-N``) was deleted with what it held by the
    next ``prepare`` / ``train``. A leftover is deleted only when it holds nothing but the writer's own files."""
    from leviathan.cli import main

    copy = Path(shutil.copytree(data, tmp_path / "data"))
    mine = [tmp_path / ".data.tmp-999999999-abc", run_copy / "checkpoints" / ".tmp-step-00000006"]
    crashed = run_copy / "checkpoints" / ".tmp-step-00000008-999999999"  # a real leftover: deleted as before
    for folder in [*mine, crashed]:
        folder.mkdir()
    for folder in mine:
        (folder / "keep.txt").write_text("mine")
    (crashed / "model.safetensors").write_bytes(b"half")
    assert main(["prepare", str(write_corpus(tmp_path / "corpus")), "--out", str(copy), "--tokenizer", "bpe:300",
                 "--overwrite", "--no-progress"]) == 0
    assert main(["train", "--run-dir", str(run_copy), "--resume", "auto", "max_steps=6", "--quiet"]) == 0
    assert all((folder / "keep.txt").read_text() == "mine" for folder in mine)
    assert not crashed.exists()


def test_prepare_overwrite_of_a_link_to_a_data_folder_is_refused_and_leaves_nothing(capsys, data, tmp_path):
    """Round 9 (N5): ``prepare --out LINK --overwrite``, LINK naming a data folder, replaced the link by the new folder
    and kept its target, but left a hidden ``.LINK.old-*`` link beside it. Round 29 (W646): the data the link names
    was left as it was, without a word; the link is now refused naming that folder, nothing made or changed."""
    from leviathan.cli import main

    target = Path(shutil.copytree(data, tmp_path / "data"))
    before = tree_hashes(target)
    (tmp_path / "link").symlink_to("data")
    corpus = write_corpus(tmp_path / "corpus", seed=4)
    assert main(["prepare", str(corpus), "--out", str(tmp_path / "link"), "--tokenizer", "bpe:300", "--no-progress",
                 "--overwrite"]) == 2
    assert f"--out '{tmp_path / 'link'}' is a symbolic link to '{target}'" in capsys.readouterr().err
    assert (tmp_path / "link").is_symlink() and tree_hashes(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "data", "link"]
