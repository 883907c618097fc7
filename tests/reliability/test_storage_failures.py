"""Every storage failure at every write site of every verb ends in one line, ``error: <problem>; <fix>``, exit 2,
naming the right cause, with nothing half-written left looking valid (issue 30, storage failures).

No mount is needed: the write functions are wrapped so that the write of one named file fails with one errno, as
the kernel would (a full disk, a quota, a read-only or failing disk, a file where a folder belongs, a name too long,
a file-size limit). ``test_full_disk.py`` covers the writers that report failures without an errno (torch.save,
safetensors). The default suite runs each site once and each errno once; the whole matrix is marked slow.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from leviathan.cli import main
from leviathan.ownership import MARKER

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error, run_overrides, tree_hashes, write_corpus  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

# errno -> what the line must say
CAUSES = {
    errno.ENOSPC: "no space left on device (the disk is full, or out of inodes: `df -h`, `df -i`)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EIO: "input/output error",
    errno.ENOTDIR: "a file is in the way where a folder is expected",
    errno.ENAMETOOLONG: "the file name is too long for the file system",
    errno.EFBIG: "a file grew past the size limit",
}


def _fails_here(target: str, path) -> bool:
    """Whether writing ``path`` is the write of ``target`` (itself, or its temporary file ``.NAME.tmp*``)."""
    try:
        name = os.path.basename(os.fsdecode(path))
    except TypeError:  # a file descriptor
        return False
    return name == target or name.startswith(f".{target}.tmp")


def inject(monkeypatch, target: str, code: int) -> None:
    """Make every write (open for writing, os.open with O_WRONLY/O_RDWR+O_CREAT, mkdir) of ``target`` fail with
    ``code``."""
    def error(path):
        return OSError(code, os.strerror(code), os.fspath(path))

    real_open, real_os_open, real_mkdir = builtins.open, os.open, os.mkdir

    def fake_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+") and _fails_here(target, file):
            raise error(file)
        return real_open(file, mode, *args, **kwargs)

    def fake_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and _fails_here(target, path):
            raise error(path)
        return real_os_open(path, flags, *args, **kwargs)

    def fake_mkdir(path, *args, **kwargs):
        if _fails_here(target, path):
            raise error(path)
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)


# ---- the write sites: (target file, command) --------------------------------------------------------
def _train(ctx, run="run"):
    return ["train", *run_overrides(ctx["data"], max_steps=2, checkpoint_interval=0), "--run-dir",
            ctx["tmp"] / run, "--quiet"]


def _prepare(ctx):
    return ["prepare", ctx["corpus"], "--out", ctx["tmp"] / "prepared", "--tokenizer", "cl100k_base", "--no-progress"]


def _sweep(ctx):
    grid = ctx["tmp"] / "g.yaml"
    grid.write_text(yaml.safe_dump({
        "name": "g", "data": {"dir": str(ctx["data"])}, "seeds": [0],
        "base": {"data": {"seq_len": 32}, "batch_tokens": 128, "micro_batch_size": 4, "max_steps": 1,
                 "eval_interval": 0, "eval_tokens": 100, "checkpoint_interval": 0, "device": "cpu",
                 "schedule": {"warmup_steps": 0}},
        "eval": {"buckets": 2, "max_tokens": 100, "batch_size": 4},
        "sizes": {"a": {"preset": "cpu-tiny", "hidden_size": 16, "num_attention_heads": 2}},
        "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}))
    return ["sweep", "--grid", grid, "--out", ctx["tmp"] / "sweep"]


def _report(ctx):
    return ["report", ctx["sweep"], "--out", ctx["tmp"] / "report", "--bootstrap", "5"]


def _export(ctx):
    return ["export", ctx["run"], ctx["tmp"] / "hf"]


def _record(ctx):
    return ["analyze", "embeddings", ctx["run"], "--out", ctx["tmp"] / "record.json", "--probes", "2"]


SITES = {
    "train:run-folder": ("run", _train),
    "train:lock": (".lock", _train),
    "train:config.yaml": ("config.yaml", _train),
    "train:versions.json": ("versions.json", _train),
    "train:run.json": ("run.json", _train),
    "train:marker": (MARKER, _train),
    "train:metrics.jsonl": ("metrics.jsonl", _train),
    "train:summary.json": ("summary.json", _train),
    "train:checkpoint-state": ("state.json", _train),
    "prepare:tokens": ("train.bin", _prepare),
    "prepare:frequencies": ("train_freq.npy", _prepare),
    "prepare:meta.json": ("meta.json", _prepare),
    "prepare:lock": (".prepared.lock", _prepare),
    "prepare:marker": (MARKER, _prepare),
    "export:config.json": ("config.json", _export),
    "sweep:grid.json": ("grid.json", _sweep),
    "sweep:results.jsonl": ("results.jsonl", _sweep),
    "sweep:run-summary": ("sweep_train.json", _sweep),
    "sweep:lock": (".lock", _sweep),
    "report:report.md": ("report.md", _report),
    "report:figure": ("loss_curves.png", _report),
    "report:marker": (MARKER, _report),
    "analyze:record": ("record.json", _record),
}
CODES = list(CAUSES)
# the default suite: every site once (errnos in turn) and every errno once (at the cheapest site)
QUICK = [(site, CODES[k % len(CODES)]) for k, site in enumerate(SITES)] + \
        [("train:config.yaml", code) for code in CODES if code != CODES[1]]
FULL = [(site, code) for site in SITES for code in CODES if (site, code) not in QUICK]


def _id(case):
    site, code = case
    return f"{site}-{errno.errorcode[code]}"


@pytest.fixture(scope="module")
def swept(data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("storage-sweep")
    ctx = {"data": data, "tmp": out}
    assert main([str(a) for a in _sweep(ctx)]) == 0
    return out / "sweep"


def _check(capsys, monkeypatch, tmp_path, data, finished_run, swept, case) -> None:
    site, code = case
    target, command = SITES[site]
    ctx = {"data": data, "tmp": tmp_path, "corpus": write_corpus(tmp_path / "corpus", num_docs=4),
           "run": finished_run, "sweep": swept}
    argv = [str(a) for a in command(ctx)]
    inject(monkeypatch, target, code)
    status = main(argv)
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert status == 2, err
    line = one_error(err)
    assert CAUSES[code] in line, line
    assert target in line, line  # the path of the failed write is named
    leftovers = [str(p) for p in tmp_path.rglob("*") if ".tmp" in p.name]
    assert leftovers == [], leftovers  # no temporary file or folder left behind
    if site.startswith("prepare"):
        assert not (tmp_path / "prepared").exists()  # no data folder that looks complete
    if site.startswith("export"):
        assert not (tmp_path / "hf").exists()
    if site == "analyze:record":
        assert not (tmp_path / "record.json").exists()


@pytest.mark.parametrize("case", QUICK, ids=_id)
def test_a_storage_failure_is_one_line(capsys, monkeypatch, tmp_path, data, finished_run, swept, case):
    _check(capsys, monkeypatch, tmp_path, data, finished_run, swept, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", FULL, ids=_id)
def test_a_storage_failure_is_one_line_everywhere(capsys, monkeypatch, tmp_path, data, finished_run, swept, case):
    _check(capsys, monkeypatch, tmp_path, data, finished_run, swept, case)


def test_a_permission_error_on_a_read_only_disk_is_named_read_only(monkeypatch):
    """The kernel answers some writes on a read-only mount with EACCES: the line says read-only, not permission."""
    from leviathan import errors

    monkeypatch.setattr(errors, "_read_only", lambda path: True)
    message = errors.storage_error_message(OSError(errno.EACCES, "Permission denied", "/mnt/ro/run/config.yaml"))
    assert "read-only file system" in message and "permission denied" not in message


def test_a_storage_line_names_the_verbs_own_output_option_and_the_folder_asked_for(tmp_path):
    """Round 14 (A52, A55, A57, A58, A79): every verb's storage line advised "lower keep_last" and "(--run-dir /
    --out)", options `export` and `prepare` do not have, and named the verb's temporary file or lock file (gone by
    then) instead of the output folder the user gave (a real process under `ulimit -f`:
    test_real_full_disk.py::test_a_file_size_limit_is_named_as_such)."""
    from leviathan import errors

    line = errors.storage_error_message(OSError(errno.ENOSPC, "No space", "/d/.data.tmp-9704-a8da09e2/train.bin"),
                                        "prepare")
    assert line.startswith("'/d/data' (its train.bin, written in the temporary folder '.data.tmp-9704-a8da09e2'): "
                           "no space left on device"), line
    assert "keep_last" not in line and line.endswith("(--out)"), line
    line = errors.storage_error_message(OSError(errno.EROFS, "Read-only", "/d/.e.lock"), "export")
    assert line == ("'/d/e' (its lock file '.e.lock'): read-only file system; choose a location on a writable disk "
                    "(export's OUT_DIR argument)"), line
    line = errors.storage_error_message(OSError(errno.ENOSPC, "No space", "/r/config.yaml"), "train")
    assert "lower keep_last" in line and line.endswith("(--run-dir)"), line
    assert "choose another location (" not in errors.storage_error_message(OSError(errno.EACCES, "x", "/a"), "eval")


def test_an_input_the_user_cannot_read_is_not_told_to_be_made_writable(finished_run, tmp_path):
    """Round 6: ``eval RUN`` whose model.safetensors the user cannot read said "make it writable (chmod / chown)";
    the fix names access, read or write. A real process without the right to read the file: a non-root user, or root
    without the capabilities that override file permissions (``setpriv``)."""
    import shutil
    import subprocess

    from reliability_support import REPO

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    weights = sorted((run / "checkpoints").glob("step-*"))[-1] / "model.safetensors"
    if os.geteuid() == 0:
        os.chown(weights, 65534, 65534)  # nobody's: root without its capabilities cannot read it either
    weights.chmod(0o600)
    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root without setpriv: every file is readable")
        caps = "-dac_override,-dac_read_search,-fowner"
        prefix = ["setpriv", "--bounding-set", caps, "--inh-caps", caps]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run([*prefix, sys.executable, "-m", "leviathan", "eval", str(run)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert f"'{weights}': permission denied; give yourself access to it (chmod / chown: read" in line
    assert "make it writable" not in line


def test_a_symbolic_link_that_leads_nowhere_is_named_as_such(data, finished_run, tmp_path):
    """Round 7 (B60-B65, B71): an output path that is (or lies under) a link that loops, or a link to a missing
    folder, was "something is in the way: the path already exists (a file where a folder belongs?)" (mkdir's EEXIST)
    or "a file is in the way" (ENOTDIR) in train, prepare, export, sweep and report: `ls` shows a link, not a file."""
    from reliability_support import cli_error

    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    loop = f"{str(tmp_path / 'loop1')!r} is a symbolic link that leads back to itself (it names 'loop2'); remove or "
    line = cli_error(["train", *run_overrides(data), "--run-dir", tmp_path / "loop1", "--quiet"])
    assert line.startswith(f"error: {loop}"), line
    line = cli_error(["prepare", data.parent / "corpus", "--tokenizer", "bpe:300", "--out", tmp_path / "loop1" / "d"])
    assert loop in line, line
    line = cli_error(["export", finished_run, tmp_path / "dangling"])
    # export names the link before any work, with its flag (round 7's other half: ownership.check_output_link)
    assert f"{str(tmp_path / 'dangling')!r} is a symbolic link to {str(tmp_path / 'nowhere')!r}, which does not " \
           f"exist; " in line and "remove the link (rm " in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "loop1", "loop2"]  # nothing made or left


def test_a_corpus_folder_holding_a_link_that_leads_nowhere_names_it(tmp_path):
    """Round 18 (G391, G392): ``leviathan prepare FOLDER`` (and the API's ``prepare``) of a corpus folder holding a
    symbolic link to a missing file, or one that loops, printed a FileNotFoundError traceback from the folder's stat.
    One line names the link, nothing is written."""
    from reliability_support import cli, cli_error

    from leviathan.data.prepare import prepare
    from leviathan.errors import UserError

    corpus = write_corpus(tmp_path / "corpus", num_docs=4)
    (corpus / "dead.txt").symlink_to("/nonexistent")
    line = cli_error(["prepare", corpus, "--tokenizer", "bpe:300", "--val-fraction", "0", "--out", tmp_path / "d"])
    assert line == f"error: {str(corpus / 'dead.txt')!r} in the corpus folder {str(corpus)!r} is a symbolic link to " \
                   f"'/nonexistent', which does not exist; remove the link (rm {corpus / 'dead.txt'}) or point it at " \
                   f"the file it stands for", line
    (corpus / "dead.txt").unlink()
    (corpus / "sub").mkdir()  # a link in a sub-folder too (G471)
    (corpus / "sub" / "loop.txt").symlink_to("loop.txt")
    with pytest.raises(UserError, match="loop.txt. in the corpus folder .* is a symbolic link that leads back to it"):
        prepare(str(corpus), tmp_path / "d", "bpe:300", val_fraction=0, progress=False)
    assert not (tmp_path / "d").exists()
    (corpus / "sub" / "loop.txt").unlink()
    assert cli(["prepare", corpus, "--tokenizer", "bpe:300", "--val-fraction", "0", "--out", tmp_path / "d"]) \
        .returncode == 0


LOOP_INPUTS = {
    "eval": lambda run, data, loop: ["eval", loop],
    "generate": lambda run, data, loop: ["generate", loop, "--prompt", "hi"],
    "export": lambda run, data, loop: ["export", loop, loop.parent / "hf"],
    "eval --text": lambda run, data, loop: ["eval", run, "--text", loop],
    "eval --data": lambda run, data, loop: ["eval", run, "--data", loop],
    "prepare": lambda run, data, loop: ["prepare", loop, "--tokenizer", "bpe:300", "--out", loop.parent / "d"],
    "prepare under it": lambda run, data, loop: ["prepare", loop / "a.txt", "--tokenizer", "bpe:300", "--out",
                                                 loop.parent / "d"],
    "train --config": lambda run, data, loop: ["train", "--config", loop, "--run-dir", loop.parent / "r"],
    "train data.path": lambda run, data, loop: ["train", *run_overrides(data), f"data.path={loop}", "--run-dir",
                                                loop.parent / "r"],
    "sweep --grid": lambda run, data, loop: ["sweep", "--grid", loop, "--out", loop.parent / "s"],
    "report": lambda run, data, loop: ["report", loop, "--out", loop.parent / "rep"],
    "analyze compare": lambda run, data, loop: ["analyze", "compare", loop],
    "analyze embeddings": lambda run, data, loop: ["analyze", "embeddings", loop],
    "lm-eval": lambda run, data, loop: ["lm-eval", loop, "--tasks", "piqa"],
}


@pytest.mark.parametrize("verb", list(LOOP_INPUTS))
def test_an_input_that_is_a_symbolic_link_that_loops_is_named_as_such(capsys, data, finished_run, tmp_path, verb):
    """Round 7 left this, round 8 fixed it: a link that loops, given where a verb reads (a checkpoint, a text, a
    source, a config, a grid, results, a data folder), "does not exist" (or "unknown config 'loop1'", "no result
    rows", and for data.path pathlib's RuntimeError traceback) while `ls` lists it."""
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    assert main([str(a) for a in LOOP_INPUTS[verb](finished_run, data, tmp_path / "loop1")]) == 2
    line = one_error(capsys.readouterr().err)
    assert "is a symbolic link that leads back to itself (it names 'loop2')" in line, line
    assert "does not exist" not in line and "unknown" not in line and "no result rows" not in line
    assert "choose another location" not in line, line  # an output's fix for an input (round 35, AH40)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop1", "loop2"]  # nothing made


@pytest.mark.parametrize("verb", ["train data.path", "sweep --data-dir"])
def test_a_data_folder_that_is_a_looping_link_gets_an_inputs_fix(capsys, data, finished_run, tmp_path, verb):
    """Round 35 (AH40, AH49): a looping link as data.path or sweep's --data-dir raised pathlib's "Symlink loop"
    RuntimeError in ``build_run_config`` (``Path.resolve``), which the CLI read as a failed write: the line ended
    "or choose another location (--run-dir)" / "(--out)", the output's fix for an input. ``os.path.realpath`` now,
    and the loop is named by ``data_folder_problem``; a sweep's data dir with no vocab_size was "not prepared (no
    meta.json)" (``grid`` names it by ``errors.missing``)."""
    from reliability_support import one_run_grid

    links = tmp_path / "links"
    links.mkdir()
    (links / "loop1").symlink_to("loop2")
    (links / "loop2").symlink_to("loop1")
    loop = links / "loop1"
    argv = {"train data.path": ["train", *run_overrides(data), f"data.path={loop}", "--run-dir", tmp_path / "r"],
            "sweep --data-dir": ["sweep", "--grid", one_run_grid(data, tmp_path), "--out", tmp_path / "s",
                                 "--data-dir", loop]}[verb]
    assert main([str(a) for a in argv]) == 2
    line = one_error(capsys.readouterr().err)
    assert "is a symbolic link that leads back to itself (it names 'loop2')" in line, line
    assert "choose another location" not in line and "--run-dir" not in line and "(--out)" not in line, line
    assert not (tmp_path / "r").exists() and not (tmp_path / "s").exists()


def test_an_input_that_is_a_link_to_nothing_names_what_it_names(capsys, finished_run, tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    assert main(["eval", str(tmp_path / "dangling")]) == 2
    line = one_error(capsys.readouterr().err)
    assert f"is a symbolic link to {str(tmp_path / 'gone')!r}, which does not exist, so it cannot be read" in line


def test_a_companion_file_that_is_a_link_to_nothing_or_a_device_is_named(data, finished_run, swept, tmp_path):
    """Round 18 (G400, G407, G411, G236): a data folder whose train_freq.npy or meta.json, or a sweep whose
    results.jsonl, is a symbolic link to nothing was "not found: it is not a prepared data folder", "is not a prepared
    data folder (no meta.json)" and "no result rows" (real processes); an adopted folder whose config.json is a link
    to /dev/zero "has no config.json". Each names the file and what it is (``errors.not_a_file``)."""
    import shutil

    from leviathan.errors import UserError
    from leviathan.hf import load_adopted
    from reliability_support import cli_error

    gone = str(tmp_path / "gone")
    folders = {}
    for name, source, file in (("d400", data, "train_freq.npy"), ("d411", data, "meta.json"),
                               ("s407", swept, "results.jsonl")):
        folders[name] = shutil.copytree(source, tmp_path / name)
        (folders[name] / file).unlink()
        (folders[name] / file).symlink_to(gone)
    said = f"is a symbolic link to {gone!r}, which does not exist, so it cannot be read (repair or remove the link)"
    lines = [cli_error(["analyze", "embeddings", finished_run, "--data", folders["d400"], "--out",
                        tmp_path / "e.json"]),
             cli_error(["report", folders["s407"], "--out", tmp_path / "rep", "--bootstrap", "5"]),
             cli_error(["eval", finished_run, "--data", folders["d411"]])]
    files = (("d400", "train_freq.npy"), ("s407", "results.jsonl"), ("d411", "meta.json"))
    for line, (name, file) in zip(lines, files):
        assert f"{str(folders[name] / file)!r} {said}" in line, line
    assert not (tmp_path / "e.json").exists() and not (tmp_path / "rep").exists()
    (tmp_path / "ad").mkdir()
    (tmp_path / "ad" / "config.json").symlink_to("/dev/zero")
    with pytest.raises(UserError, match="config.json' is a character device, not a regular file"):
        load_adopted(tmp_path / "ad")


def test_the_readers_name_a_name_too_long_or_a_device_in_one_error(tmp_path):
    """Round 18 (G233, G238, G240, G241): ``load_tokenizer``, ``load_adopted`` and ``load_run_config`` given a
    300-byte name raised the raw "[Errno 36] File name too long" of ``Path.is_file``; ``load_tokenizer('/dev/zero')``
    said "no such built-in, file or directory" of a file that is there. Each is one error saying what the name is;
    the readers that take a missing file as none (meta.json, a marker, grid.json, embeddings records) do so."""
    from leviathan.config import ConfigError
    from leviathan.data.companions import load_train_freq
    from leviathan.data.meta import find_meta
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.experiments.machinery.embedding_files import read_records
    from leviathan.experiments.machinery.sweep_grid import SweepGrid, read_sweep_grid
    from leviathan.ownership import read_marker
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted
    from leviathan.run_config import load_run_config

    long = str(tmp_path / ("n" * 300))
    too_long = "is 300 bytes, more than the 255 the file system allows for one name"
    for call in (load_tokenizer, load_adopted, load_run_config):
        with pytest.raises((UserError, ConfigError), match=too_long):
            call(long)
    assert find_meta(long) is None and read_marker(long) is None and read_records(long) == []
    assert read_sweep_grid(long) == SweepGrid()
    with pytest.raises(UserError, match="train_freq.npy' is missing"):
        load_train_freq(long)
    with pytest.raises(UserError, match="tokenizer '/dev/zero' is a character device, not a regular file"):
        load_tokenizer("/dev/zero")


def test_an_output_name_with_no_room_for_its_hidden_neighbours_is_named_as_the_users(capsys, finished_run, tmp_path):
    """Round 9 (N79, N80): ``prepare --out NAME`` and ``export RUN NAME`` with a 250-byte NAME (a name the file system
    takes) failed on ``.NAME.lock``, naming that file, one the user never gave. The refusal names the folder's name,
    the limit and the longest name that works, before any work; a name that fits is prepared."""
    corpus = write_corpus(tmp_path / "corpus")
    long = tmp_path / ("n" * 250)
    for argv in (["prepare", corpus, "--out", long, "--tokenizer", "bpe:300", "--no-progress"],
                 ["export", finished_run, long]):
        assert main([str(a) for a in argv]) == 2
        line = one_error(capsys.readouterr().err)
        assert "the output folder's name is 250 bytes long" in line and "choose a name of at most 223 bytes" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
    assert main(["prepare", str(corpus), "--out", str(tmp_path / ("n" * 223)), "--tokenizer", "bpe:300",
                 "--no-progress"]) == 0


def test_a_folder_a_verb_replaces_or_prunes_that_cannot_be_wholly_deleted_is_named(data, finished_run, tmp_path,
                                                                                   immutable):
    """Round 10 (P20-P23): a file that could not be deleted (here immutable) left a hidden ``.data.old-*`` or
    ``.exp.old-*`` folder after `prepare --overwrite` / `export --overwrite`, and a half-deleted step folder after
    `train`'s keep_last, each without a word (exit 0); `demo` replacing its earlier output named 'metrics.jsonl'
    without its folder. Now a warning line names what is left and the file that stayed (the new output is in place),
    and demo's error names the file's path."""
    import shutil

    from reliability_support import cli, make_data

    own = make_data(tmp_path / "own")
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5)
    immutable(own / "val.bin")
    proc = cli(["prepare", corpus, "--out", own, "--overwrite", "--tokenizer", "bpe:300", "--no-progress"])
    assert proc.returncode == 0, proc.stderr
    assert "warning: the replaced data folder, moved aside to " in proc.stderr and "val.bin': operation not " \
        "permitted); the new data is in place in " in proc.stderr, proc.stderr

    assert cli(["export", finished_run, tmp_path / "exp"]).returncode == 0
    immutable(tmp_path / "exp" / "README.md")
    proc = cli(["export", finished_run, tmp_path / "exp", "--overwrite"])
    assert proc.returncode == 0 and "warning: the replaced export, moved aside to " in proc.stderr, proc.stderr
    assert "README.md': operation not permitted); the new export is in place" in proc.stderr

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    step2 = run / "checkpoints" / "step-00000002"
    immutable(step2 / "state.json")
    proc = cli(["train", "--run-dir", run, "--resume", "auto", *run_overrides(data, max_steps=6, keep_last=1),
                "--quiet"])
    assert proc.returncode == 0, proc.stderr
    assert f"warning: the old checkpoint (dropped by keep_last=1) '{step2}' could not be deleted ('{step2}/state.json'" \
        in proc.stderr, proc.stderr

    demo = ["demo", "--run-dir", tmp_path / "d", "--data-dir", data, "--steps", "1", "--variants", "dense_tied",
            "--quiet", "--sequential", "--seq-len", "32", "--batch-tokens", "128"]
    assert cli(demo).returncode == 0
    metrics = immutable(tmp_path / "d" / "dense_tied" / "metrics.jsonl")
    proc = cli(demo)
    assert proc.returncode == 2 and f"could not delete the earlier demo in '{tmp_path / 'd'}' that --run-dir " \
        f"replaces ('{metrics}': operation not permitted)" in one_error(proc.stderr), proc.stderr


def test_a_step_saved_again_over_one_that_cannot_be_deleted_keeps_the_new_one(data, finished_run, tmp_path, immutable):
    """Round 10 (P92, damage): `train --resume RUN/checkpoints/step-2` into its own run saves step 4 again; the old
    step-4 folder was moved aside and deleted before the new one was renamed into place, so a file of it that could
    not be deleted (immutable) ended the save with an error and neither step 4 was left: the old one deleted but for
    that file, the new one removed as a failed save. Now the new step is in place first, and what is left of the old
    one is named in a warning."""
    import shutil

    from reliability_support import cli, damage_beyond_use

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    step4 = run / "checkpoints" / "step-00000004"
    damage_beyond_use(step4)  # round 14 (A179): --resume auto goes on from step 2; an explicit older step is refused
    immutable(step4 / "rng.pt")
    proc = cli(["train", "--run-dir", run, "--resume", "auto", *run_overrides(data), "--quiet"])
    assert proc.returncode == 0, proc.stderr
    assert "warning: the replaced checkpoint of step 4, moved aside to " in proc.stderr, proc.stderr
    assert f"the new one is saved as '{step4}'" in proc.stderr
    assert sorted(p.name for p in step4.iterdir()) == sorted(p.name for p in (step4.parent / "step-00000002").iterdir())
    assert cli(["eval", run, "--max-tokens", "64"]).returncode == 0


def test_a_warning_under_too_few_open_files_is_one_line(finished_run):
    """Round 10 (P101): `eval RUN` under `ulimit -n 6` could not load the fused spline kernel and printed Python's
    two-line warning (``spline_kernel.py:183: RuntimeWarning: leviathan: ...`` and the source line ``return library()
    is not None``); a warning is one ``warning:`` line."""
    import subprocess

    from reliability_support import REPO

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(["bash", "-c", f"ulimit -n 6; exec {sys.executable} -m leviathan eval {finished_run} "
                                         f"--max-tokens 64"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert all(line.startswith(("warning: ", "note: ")) for line in lines), proc.stderr
    assert "Warning:" not in proc.stderr and "library()" not in proc.stderr


def test_no_usable_temporary_directory_is_one_line(tmp_path):
    """Round 11 (R90): under ``ulimit -f 0`` every folder tempfile tries refuses its probe file, and the import of
    torch asks tempfile for one: ``leviathan eval`` ended in a 30-frame FileNotFoundError traceback. Now one line naming
    the folders, the likely causes and TMPDIR."""
    import resource
    import subprocess

    from reliability_support import REPO

    def no_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "leviathan", "eval", str(tmp_path / "no-run")], env=env,
                          capture_output=True, text=True, timeout=300, preexec_fn=no_files)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert "no usable temporary directory" in line and "ulimit -f 0" in line and "TMPDIR" in line, line


def test_a_refused_export_overwrite_of_an_immutable_folder_leaves_nothing_beside_it(finished_run, tmp_path, immutable):
    """Round 11 (R13): ``export RUN exp --overwrite`` with exp itself immutable ended in one clear error, but left an
    empty hidden ``.exp.old-*`` folder beside exp without a word."""
    from reliability_support import cli

    assert cli(["export", finished_run, tmp_path / "exp"]).returncode == 0
    before = tree_hashes(tmp_path / "exp")
    immutable(tmp_path / "exp")
    proc = cli(["export", finished_run, tmp_path / "exp", "--overwrite"])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp"]
    assert tree_hashes(tmp_path / "exp") == before


def test_an_mplconfigdir_that_is_a_file_is_one_warning_line(tmp_path):
    """Round 11 (R89): MPLCONFIGDIR naming a file: a right report, but two raw matplotlib lines on stderr ("mkdir -p
    failed ...", "Matplotlib created a temporary cache directory ..."). Now one warning line of ours."""
    import subprocess

    config = tmp_path / "mpl"
    config.write_text("not a folder\n")
    code = "from leviathan.experiments.plots import pyplot; pyplot().figure()"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "MPLCONFIGDIR": str(config)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [f"warning: MPLCONFIGDIR '{config}' is a file, not a folder; matplotlib's cache went to a temporary "
                     f"folder this time (point MPLCONFIGDIR at a writable folder, or unset it)"], proc.stderr


def test_a_sweep_whose_results_file_cannot_be_written_stops_before_training(data, tmp_path, immutable):
    """Round 8's leftover: a sweep learnt that its results.jsonl was immutable only after training, when the row
    could not be appended. Now it stops before the first run with one line."""
    from reliability_support import cli_error
    from test_row_identity import grid_file

    grid = grid_file(tmp_path, data)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "--grid", str(grid), "--out", str(sweep), "--only", "a-dense_tied-*"]) == 0
    immutable(sweep / "results.jsonl")
    line = cli_error(["sweep", "--grid", grid, "--out", sweep])
    assert "results.jsonl' cannot be written (read-only or immutable), so the rows of the runs this sweep trains " \
           "would be lost" in line, line
    assert not (sweep / "runs" / "a-dense_untied-s0" / "checkpoints").exists()


def test_a_row_that_does_not_fit_is_one_line_and_leaves_no_torn_line(data, tmp_path):
    """Round 12 (T52, T54): a sweep appending a row past a file-size limit (or onto a full disk) ended in a traceback
    ("OSError: short write to sweep/results.jsonl: 337 of 3828 bytes", no errno) and left a torn line. Now one line
    naming the cause, and the file holds its whole rows only."""
    import subprocess

    from reliability_support import REPO
    from test_row_identity import grid_file

    grid = grid_file(tmp_path, data)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "--grid", str(grid), "--out", str(sweep)]) == 0
    results = sweep / "results.jsonl"
    first = results.read_text().splitlines()[0] + "\n"
    results.write_text(first)
    limit_kb = (len(first.encode()) + 200) // 1024 + 1  # room for the first row, not for the second
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(["bash", "-c", f"ulimit -f {limit_kb}; exec {sys.executable} -m leviathan sweep --grid "
                           f"{grid} --out {sweep}"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"'{results}': a file grew past the size limit" in one_error(proc.stderr), proc.stderr
    assert results.read_text() == first


# A real ``leviathan`` process whose second figure write fails with ENOSPC ("enospc") or waits for a SIGTERM ("pause",
# after touching argv[2], the marker the test waits for): the moment a report rerun into its own folder had replaced
# some figures and not the rest (round 14, B289, B324).
SECOND_FIGURE = r"""
import errno, os, sys, time
from leviathan import io as lio
how, marker = sys.argv[1], sys.argv[2]
real, seen = lio.atomic_write_bytes, []
def atomic_write_bytes(path, data):
    if str(path).endswith(".png"):
        seen.append(path)
        if len(seen) == 2 and how == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        if len(seen) == 2:
            open(marker, "w").close()
            time.sleep(600)
    return real(path, data)
lio.atomic_write_bytes = atomic_write_bytes
from leviathan.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.fixture(scope="module")
def two_run_sweep(data, tmp_path_factory) -> Path:
    from test_row_identity import grid_file

    root = tmp_path_factory.mktemp("two-run-sweep")
    assert main(["sweep", "--grid", str(grid_file(root, data)), "--out", str(root / "sweep")]) == 0
    return root / "sweep"


def _report_and_a_rerun_of_other_rows(two_run_sweep, tmp_path) -> tuple[Path, list[str], dict]:
    """A report of the sweep in ``tmp_path/rep``, and the argv of a rerun into it of the sweep's first row alone."""
    from reliability_support import cli

    out, fewer = tmp_path / "rep", tmp_path / "fewer"
    assert cli(["report", two_run_sweep, "--out", out, "--bootstrap", "5"]).returncode == 0
    fewer.mkdir()
    (fewer / "results.jsonl").write_text((two_run_sweep / "results.jsonl").read_text().splitlines()[0] + "\n")
    (fewer / "grid.json").write_text((two_run_sweep / "grid.json").read_text())
    assert len(list(out.glob("*.png"))) >= 2
    return out, ["report", str(fewer), "--out", str(out), "--bootstrap", "5"], tree_hashes(out)


def _second_figure(how: str, argv: list[str], tmp_path: Path):
    import subprocess

    from reliability_support import REPO

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen([sys.executable, "-c", SECOND_FIGURE, how, str(tmp_path / "paused"), *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_a_report_rerun_that_fails_at_its_second_figure_leaves_the_earlier_report_whole(two_run_sweep, tmp_path):
    """Round 14 (B289): a report rerun into its own --out on a nearly full disk failed at frontier.png after
    loss_curves.png had been replaced by the new report's figure: the folder mixed two reports (report.md the old
    one's). A report is now put in place as a whole: the failure leaves every file of the earlier report as it was,
    no staging folder behind, and the line names the figure in --out."""
    out, argv, before = _report_and_a_rerun_of_other_rows(two_run_sweep, tmp_path)
    proc = _second_figure("enospc", argv, tmp_path)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    line = one_error(err)
    assert "no space left on device" in line and f"'{out}/" in line and ".png'" in line and ".stage-" not in line
    assert tree_hashes(out) == before
    assert sorted(p.name for p in out.iterdir()) == sorted(before)


def test_a_report_rerun_stopped_by_sigterm_among_its_figures_leaves_the_earlier_report_whole(two_run_sweep, tmp_path):
    """Round 14 (B324): a SIGTERM while a report rerun wrote its figures left three new figures beside the old
    report.md, though the stop line says nothing half-written is taken as valid. The folder is now byte-identical to
    before, and the same command then replaces the whole report."""
    import signal
    import time

    out, argv, before = _report_and_a_rerun_of_other_rows(two_run_sweep, tmp_path)
    proc = _second_figure("pause", argv, tmp_path)
    deadline = time.time() + 300
    while not (tmp_path / "paused").exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "paused").exists(), proc.communicate()[1]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM and "stopped by SIGTERM" in err, err
    assert tree_hashes(out) == before
    assert sorted(p.name for p in out.iterdir()) == sorted(before)
    from reliability_support import cli

    rerun = cli(argv)
    assert rerun.returncode == 0, rerun.stderr
    assert "fewer" in (out / "report.md").read_text() and tree_hashes(out) != before


def test_a_report_rerun_over_a_folder_in_a_figures_place_changes_nothing(two_run_sweep, tmp_path):
    """Round 21 (N269): a report rerun into its own --out where a folder stood in place of one figure replaced the
    files before it in name order and stopped there, leaving the new analysis.json beside the old report.md, and the
    line named the staging folder's file. The folder in the way is refused before anything moves, named in --out."""
    from reliability_support import cli

    out, argv, _ = _report_and_a_rerun_of_other_rows(two_run_sweep, tmp_path)
    (out / "loss_curves.png").unlink()
    (out / "loss_curves.png").mkdir()
    before = tree_hashes(out)
    proc = cli(argv)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert f"'{out}/loss_curves.png'" in line and "a folder is in the way" in line and ".stage-" not in line, line
    assert tree_hashes(out) == before and sorted(p.name for p in out.iterdir()) == sorted([*before, "loss_curves.png"])


def test_a_report_rerun_whose_swap_fails_half_way_puts_every_earlier_file_back(two_run_sweep, tmp_path, monkeypatch,
                                                                               capsys):
    """Round 21 (N191): a file of --out that could not be replaced (``chattr +i``; here the rename of report.md
    fails with EPERM as an immutable file's does) stopped the swap half-way: the folder mixed two reports. Every
    rename done before the failing one is undone: the earlier report is byte-identical, no staging folder is left,
    and the line names the file in --out."""
    import errno

    out, argv, before = _report_and_a_rerun_of_other_rows(two_run_sweep, tmp_path)
    real, failed = os.replace, []

    def replace(src, dst, *args, **kwargs):  # the new report.md's rename into --out fails once (not the undoing)
        if Path(dst) == out / "report.md" and ".stage-" in str(src) and not failed:
            failed.append(src)
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(src))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    assert main(argv) == 2
    line = one_error(capsys.readouterr().err)
    assert f"'{out}/report.md'" in line and ".stage-" not in line, line
    assert tree_hashes(out) == before and sorted(p.name for p in out.iterdir()) == sorted(before)


def _limited(size: int):
    """A ``preexec_fn`` that sets the child's file-size limit (``ulimit -f``) to ``size`` bytes."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_a_file_size_limit_is_fixed_by_raising_it_not_by_room(finished_run, tmp_path):
    """Round 14 (B244): ``(ulimit -f 50; leviathan lm-eval RUN ...)`` named the size limit but advised "make room
    there, or point TMPDIR at a disk with room": room is not the problem. lm-eval's line, and the line of a printed
    output redirected into a file under the limit, advise raising the limit (ulimit -f), not room."""
    import subprocess

    from reliability_support import REPO
    from test_companions import _piqa_root

    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "leviathan", "lm-eval", str(finished_run), "--tasks", "piqa",
                           "--data-root", str(_piqa_root(tmp_path / "tasks")), "--threads", "1", "--limit", "2",
                           "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=_limited(64 * 1024))
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert f"'{tmp_path}/leviathan-lm-eval-" in line and "a file grew past the size limit" in line, line
    assert "raise the limit (ulimit -f unlimited)" in line and "room" not in line, line
    with open(tmp_path / "printed.json", "w") as printed:
        proc = subprocess.run([sys.executable, "-m", "leviathan", "params", "--json"], env=env, stdout=printed,
                              stderr=subprocess.PIPE, text=True, timeout=300, preexec_fn=_limited(100))
    line = one_error(proc.stderr)
    assert proc.returncode == 2 and "could not print to the standard output" in line, proc.stderr
    assert "raise the limit (ulimit -f unlimited)" in line and "room" not in line, line


def _adopted_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import adopt

    return adopt(LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                              num_attention_heads=2, num_key_value_heads=2)),
                 seed_dim=8, modes=2, knots=8, rank=4)


def test_the_python_apis_writes_meet_storage_failures_in_the_verbs_words(data, tmp_path):
    """Round 14 (B260, B344): ``bake_adopted(adopted, path)`` and ``Tokenizer.save(path)`` with a 300-byte name, a
    path under a file or onto an existing file raised the raw OSError ("[Errno 36] File name too long",
    NotADirectoryError, FileExistsError) with no fix. Each is an ``errors.StorageError`` now: the verbs' line naming
    the path, the problem and the fix with the API's argument, a UserError, and still the OSError it was."""
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.errors import StorageError, UserError
    from leviathan.hf import bake_adopted

    tokenizer, model = load_tokenizer(str(data)), _adopted_model()
    (tmp_path / "afile").write_text("a file")
    long = tmp_path / ("x" * 300)
    cases = [(lambda: tokenizer.save(tmp_path / "afile" / "tok"), f"'{tmp_path}/afile':",  # the file itself (B224)
              "a file is in the way where a folder is expected; remove or rename that file, or choose another "
              "location (its directory argument)"),
             (lambda: tokenizer.save(tmp_path / "afile"), f"'{tmp_path}/afile'", "something is in the way: the path "
              "already exists (a file where a folder belongs?); move it away, or choose another location (its "
              "directory argument)"),
             (lambda: tokenizer.save(long), f"'{long}", "the file name is too long for the file system; choose a "
              "shorter name or a less deeply nested location (its directory argument)"),
             (lambda: bake_adopted(model, long), f"'{long}", "the file name is too long for the file system; choose "
              "a shorter name or a less deeply nested location (out_dir)")]
    for call, where, said in cases:
        with pytest.raises(StorageError) as caught:
            call()
        assert isinstance(caught.value, UserError) and isinstance(caught.value, OSError) and caught.value.errno
        assert str(caught.value).startswith(where) and said in str(caught.value), str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_every_public_write_of_the_python_api_meets_storage_failures_in_the_verbs_words(data, finished_run, swept,
                                                                                         tmp_path):
    """Round 17 (E278, E280, E282, E287, E290, E291): ``write_report``, ``train``, ``to_hf``, ``prepare``,
    ``run_sweep`` (and ``write_record``, of the same kind) given a 300-byte name or a path under a file raised the raw OSError ("[Errno 36] File name too long",
    NotADirectoryError, FileExistsError from prepare's lock) where the CLI says one line with the fix. Each is an
    ``errors.StorageError`` (``storage.api_write``): the path, the problem and the fix naming the API's argument."""
    from leviathan.checkpoint import load_model
    from leviathan.errors import StorageError
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.embedding_files import record_of_run, write_record
    from leviathan.experiments.machinery.sweep import run_sweep
    from leviathan.data.prepare import prepare
    from leviathan.experiments.report import write_report
    from leviathan.hf.export import to_hf
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train
    from reliability_support import one_run_grid

    (tmp_path / "afile").write_text("a file")
    long, under = tmp_path / ("n" * 260), tmp_path / "afile"
    grid, cfg = load_grid(str(one_run_grid(data, tmp_path))), load_run_config(None, run_overrides(data))
    corpus = write_corpus(tmp_path / "corpus", num_docs=4)
    too_long, in_the_way = "the file name is too long for the file system; choose a shorter name", "in the way"
    cases = [(lambda: write_report(swept, long, num_bootstrap=5), too_long, "(out_dir)"),
             (lambda: write_report(swept, under / "rep", num_bootstrap=5), in_the_way, "(out_dir)"),
             (lambda: train(cfg, long, quiet=True), too_long, "(run_dir)"),
             (lambda: to_hf(load_model(str(finished_run))[0], long), too_long, "(out_dir)"),
             (lambda: prepare(corpus, under / "d", "bpe:300", progress=False), in_the_way, "(out_dir)"),
             (lambda: run_sweep(grid, under / "sw"), in_the_way, "(out_dir)"),
             (lambda: run_sweep(grid, long), too_long, "(out_dir)"),
             (lambda: write_record(long / "r.json", record_of_run(str(finished_run))), too_long, "(path)")]
    for call, said, option in cases:
        with pytest.raises(StorageError) as caught:
            call()
        line = str(caught.value)
        assert line.startswith(f"'{tmp_path}") and said in line and line.endswith(option), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "corpus", "g.yaml"]


def test_append_result_meets_storage_failures_in_one_line_and_keeps_the_file_whole(swept, tmp_path):
    """Round 18 (G122, G126, G168, G169, G230, G243): ``append_result`` given a sweep folder, a path under a file, a
    300-byte name, or a results file at the process's ``ulimit -f`` (a real limit, in a real process) raised the raw
    OSError ("[Errno 27] File too large", naming no fix). Each is one ``StorageError`` naming the path and the fix
    (its argument ``path``), and the file under the limit keeps its rows, whole."""
    import subprocess

    from leviathan.errors import StorageError
    from leviathan.experiments.machinery.results import append_result, read_results
    from reliability_support import REPO

    row = read_results(swept)[0]
    (tmp_path / "afile").write_text("a file")
    # the sweep folder itself is refused before the open, naming its results.jsonl (round 29, W300:
    # test_append_result_given_a_sweep_folder.py)
    cases = [(tmp_path / "afile" / "r.jsonl", f"'{tmp_path}/afile': a file is in the way where a folder is expected"),
             (tmp_path / ("n" * 300), f"'{tmp_path}/{'n' * 300}': the file name is too long for the file system")]
    for path, said in cases:
        with pytest.raises(StorageError) as caught:
            append_result(path, row)
        assert str(caught.value).startswith(said), str(caught.value)
    big = tmp_path / "big.jsonl"
    big.write_bytes((swept / "results.jsonl").read_bytes() * 8)
    before = big.read_bytes()
    script = (f"from leviathan.experiments.machinery.results import append_result, read_results\n"
              f"append_result({str(big)!r}, read_results({str(swept)!r})[0])")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")}, preexec_fn=_limited(len(before) + 10))
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"leviathan.errors.StorageError: '{big}': a file grew past the size limit"), proc.stderr
    assert last.endswith("(path)") and big.read_bytes() == before


def test_a_verb_whose_api_write_fails_names_the_verbs_option_not_the_apis_argument(swept, tmp_path):
    """Round 17: the CLI verbs call the API writes that now raise ``StorageError`` worded for the API ("(out_dir)");
    the verb's line still names its own option (``cli.one_line_errors`` words it again for the verb), in a real
    process."""
    from reliability_support import cli_error

    (tmp_path / "afile").write_text("a file")
    line = cli_error(["report", swept, "--out", tmp_path / "afile" / "rep", "--bootstrap", "5"])
    assert line == (f"error: '{tmp_path}/afile': a file is in the way where a folder is expected; remove or rename "
                    f"that file, or choose another location (--out)"), line

def test_tensorboards_writer_thread_failing_is_one_line_naming_its_events_file(finished_run, tmp_path, immutable):
    """Round 18 (F79, F109): TensorBoard's writer thread printed its own 15-line traceback ("Exception in thread
    Thread-1") when a write failed, and the main thread's error then named no file (EFBIG under ``ulimit -f``) or
    broke the error line itself with a ``bytes`` name (EPERM in an immutable folder: "TypeError: a bytes-like object
    is required"). Each is one line naming the events file, exit 2, and nothing else on stderr but train's lines."""
    import shutil
    import subprocess

    from reliability_support import REPO

    from leviathan import errors

    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "leviathan", "train", "--config", str(finished_run / "config.yaml"), "--run-dir",
            str(tmp_path / "r109"), "max_steps=40", "checkpoint_interval=1000", "log_interval=1"]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, preexec_fn=_limited(3072))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "Exception in thread" not in proc.stderr, \
        proc.stderr
    line = one_error(proc.stderr)
    assert f"error: '{tmp_path}/r109/tensorboard/events.out.tfevents." in line, line
    assert "a file grew past the size limit" in line, line
    assert errors.storage_error_message(PermissionError(1, "Operation not permitted", b"r/tensorboard/ev")) \
        .startswith("'r/tensorboard/ev': operation not permitted; ")
    run = Path(shutil.copytree(finished_run, tmp_path / "r80"))
    immutable(run / "tensorboard")
    proc = subprocess.run([sys.executable, "-m", "leviathan", "train", "--run-dir", str(run), "--resume", "auto",
                           "max_steps=6"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"error: '{run}/tensorboard/events.out.tfevents." in one_error(proc.stderr), proc.stderr
    assert "operation not permitted" in one_error(proc.stderr), proc.stderr


def test_a_task_data_root_that_is_a_looping_link_is_named(monkeypatch, tmp_path):
    """Round 35 (AH40's kind): ``task_data_root`` (lm-eval's data folder from $LEVIATHAN_DATA) resolved a looping link
    with ``Path.resolve``, whose "Symlink loop" RuntimeError the CLI named as a failed write (the output's fix)."""
    from leviathan.errors import UserError
    from leviathan.eval.tasks import task_data_root

    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path / "loop1"))
    with pytest.raises(UserError, match=r"\(named by \$LEVIATHAN_DATA\) is a symbolic link that leads back to itself"):
        task_data_root()
