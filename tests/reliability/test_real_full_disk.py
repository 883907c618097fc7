"""A real full disk: a small tmpfs mounted for the test, real ``leviathan`` processes writing onto it.

``test_full_disk.py`` and ``test_storage_failures.py`` inject the failure at each write site; this file checks
the same promise end to end, where the file system itself refuses the write part-way through a file (the
case an injected exception cannot show: a token file, a checkpoint or an export half on disk when space runs
out). Each verb must end in one line naming the full disk, exit 2, and leave nothing a later command takes as
valid. Needs the right to mount (root, as on the CI machine); skipped where ``mount`` is refused.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from leviathan.train import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, run_overrides, tree_hashes, write_corpus  # noqa: E402

pytestmark = pytest.mark.reliability

FULL = "no space left on device (the disk is full, or out of inodes: `df -h`, `df -i`); free disk space"


def _du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def small_disk(tmpfs):
    """A function ``(size in bytes) -> folder on a tmpfs of that size`` (conftest's ``tmpfs``)."""
    return lambda size: tmpfs(f"size={size}")


def test_prepare_onto_a_disk_that_fills_part_way(tmp_path, small_disk):
    corpus = write_corpus(tmp_path / "corpus", num_docs=200)  # ~100 KB of text: more tokens than 16 KB holds
    disk = small_disk(16 * 1024)
    line = cli_error(["prepare", corpus, "--out", disk / "data", "--tokenizer", "cl100k_base", "--no-progress"])
    assert FULL in line, line
    assert not (disk / "data").exists()  # the temporary folder is gone, nothing renamed into place
    assert [p.name for p in disk.iterdir()] == []


def test_a_checkpoint_that_does_not_fit(data, finished_run, small_disk):
    needed = _du(finished_run)
    disk = small_disk(needed + 512 * 1024)  # the run and its next metrics fit, one more checkpoint (2 MB) does not
    run = disk / "run"
    shutil.copytree(finished_run, run)
    before = tree_hashes(run / "checkpoints")
    proc = cli(["train", *run_overrides(data, max_steps=6), "--run-dir", run, "--resume", "auto", "--quiet"])
    assert proc.returncode == 2, proc.stderr
    line = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert len(line) == 1 and line[0].startswith("error: could not save the checkpoint of step 6 of run '"), proc.stderr
    assert FULL in line[0]
    assert tree_hashes(run / "checkpoints") == before  # no half-written step-6, no temporary folder
    assert ckpt.latest_checkpoint(run).name == "step-00000004"


def test_an_export_that_does_not_fit(finished_run, small_disk):
    disk = small_disk(32 * 1024)  # smaller than the weights
    line = cli_error(["export", finished_run, disk / "hf"])
    assert FULL in line, line
    assert line.startswith(f"error: '{disk / 'hf'}': ")  # round 6: safetensors' failure named no file
    assert not (disk / "hf").exists()
    assert [p.name for p in disk.iterdir()] == []


def _fill(disk: Path) -> None:
    """Write zeros into ``disk`` until the file system refuses: not one block left."""
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    try:
        with open(disk / "filler", "ab") as f:
            while True:
                f.write(b"\0")
                f.flush()
    except OSError:
        pass


def test_a_resume_on_a_disk_already_full_names_the_file_and_keeps_the_run(data, finished_run, small_disk):
    disk = small_disk(_du(finished_run) + 1024 * 1024)
    run = disk / "run"
    shutil.copytree(finished_run, run)
    _fill(disk)
    before = tree_hashes(run)
    line = cli_error(["train", *run_overrides(data, max_steps=6), "--run-dir", run, "--resume", "auto", "--quiet"])
    assert f"error: '{run}" in line and FULL in line, line  # which file the disk refused (a flush names none)
    assert tree_hashes(run) == before  # config.yaml, metrics.jsonl, the checkpoints: as they were


@pytest.fixture(scope="module")
def swept(two_run_sweep, tmp_path_factory) -> Path:
    from reliability_support import copied_sweep

    return copied_sweep(two_run_sweep, tmp_path_factory, "full-disk-sweep")


def test_a_report_that_does_not_fit_leaves_whole_figures_and_reruns_after_room_is_made(swept, small_disk):
    """Round 5: a report onto a full disk named no file, left a truncated figure under its own name, and had not
    claimed the figures it wrote, so the rerun after making room was refused ('would write over loss_curves.png ...
    which it did not create'). Figures are now written whole or not at all, the folder is claimed before the first one,
    and the same command finishes once there is room."""
    disk = small_disk(64 * 1024)
    out = disk / "report"
    line = cli_error(["report", swept, "--out", out, "--bootstrap", "5"])
    assert FULL in line and f"'{out}/" in line and ".png'" in line, line  # names the figure the disk refused
    for figure in out.glob("*.png"):
        assert figure.read_bytes().endswith(b"IEND\xaeB`\x82"), figure  # a whole PNG, or none
    assert not [p for p in out.iterdir() if ".tmp" in p.name]
    done = subprocess.run(["mount", "-o", "remount,size=4m", str(disk)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    proc = cli(["report", swept, "--out", out, "--bootstrap", "5"])
    assert proc.returncode == 0, proc.stderr
    assert (out / "report.md").is_file() and (out / "analysis.json").is_file()


def test_a_read_only_disk_names_the_file_asked_for(finished_run, small_disk):
    """Round 5: on a read-only mount the line named '.record.json.tmpPID', a temporary file the user never asked
    for (removing it answered EROFS too, which replaced the first error)."""
    disk = small_disk(1024 * 1024)
    done = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    line = cli_error(["analyze", "embeddings", finished_run, "--out", disk / "record.json", "--probes", "2"])
    assert f"error: '{disk}/record.json': read-only file system" in line, line


def test_bench_finds_a_read_only_json_target_before_the_benchmark(tmp_path, small_disk):
    """Round 5 left this: ``bench --json`` onto a read-only disk ran the whole benchmark first. Now the line comes
    before any timing (no section's log line on stderr), naming the file; a missing folder likewise."""
    disk = small_disk(1024 * 1024)
    done = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    argv = ["bench", "--config", "tiny", "--only", "generator", "--quick", "--json"]
    proc = cli([*argv, disk / "bench.json"])
    assert proc.returncode == 2 and f"error: '{disk}/bench.json': read-only file system" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # the error line alone: nothing was timed
    assert "no-such-folder' does not exist; create it first" in cli_error([*argv, tmp_path / "no-such-folder" / "bench.json"])


def test_a_file_size_limit_is_named_as_such(tmp_path):
    """Round 5: ``ulimit -f 8`` (a real limit, set in the child) made numpy's short write of a token file, which
    carries no errno, read as 'input/output error (the disk ... failed a write)'. It is the size limit, and the
    line says so; no data folder is left."""
    import os
    import resource

    from reliability_support import REPO, one_error

    corpus = write_corpus(tmp_path / "corpus", num_docs=200)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, "-m", "leviathan", "prepare", str(corpus), "--out", str(tmp_path / "data"),
                           "--tokenizer", "cl100k_base", "--no-progress"], env=env, capture_output=True, text=True,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192)), timeout=300)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert "(its train.bin, written in the temporary folder '.data.tmp-" in line, line  # round 14 (A79)
    assert "): a file grew past the size limit" in line and "keep_last" not in line, line
    assert not (tmp_path / "data").exists() and not [p for p in tmp_path.iterdir() if ".tmp" in p.name]


def test_a_sweep_or_demo_that_cannot_save_names_its_own_rerun(data, tmp_path, small_disk):
    """Round 7 (B75, B76): a checkpoint a sweep (under ``ulimit -f``) or a demo (on a full disk) could not save ended
    in train's advice "continue with --resume auto", a flag neither verb has. Each names its own rerun."""
    import os
    import resource

    from reliability_support import REPO, one_error
    from test_row_identity import grid_file

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, "-m", "leviathan", "sweep", "--grid", str(grid_file(tmp_path, data)),
                           "--out", str(tmp_path / "sweep")], env=env, capture_output=True, text=True, timeout=600,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384)))
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert "a file grew past the size limit" in line and "--resume" not in line, line
    assert line.endswith("after making room, run the same `leviathan sweep` command again (it resumes this run from "
                         "its last checkpoint)"), line
    disk = small_disk(64 * 1024)
    line = cli_error(["demo", "--data-dir", data, "--run-dir", disk / "demo", "--steps", "2", "--seq-len", "32",
                      "--batch-tokens", "128", "--eval-tokens", "64", "--variants", "dense_tied", "--quiet"])
    assert FULL in line and "--resume" not in line, line
    assert line.endswith("after making room, run the same `leviathan demo` command again"), line


def _collect(argv: list, **kwargs) -> subprocess.CompletedProcess:
    """``python scripts/collect_results.py <argv>`` in a real process."""
    import os

    from reliability_support import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), *map(str, argv)], env=env,
                          stderr=subprocess.PIPE, text=True, timeout=300, **kwargs)


def test_collect_results_meets_each_storage_failure_in_one_line(swept, tmp_path, small_disk):
    """Round 8 (S-*-collect): scripts/collect_results.py ended in a traceback for every storage failure: a full
    disk, a read-only one, a parent path that is a file, a 300-byte name, a file-size limit, no permission."""
    import resource

    from reliability_support import one_error

    (tmp_path / "file").write_text("a file")
    full = small_disk(64 * 1024)
    (full / "filler").write_bytes(b"\0" * (64 * 1024 - 4096))
    read_only = small_disk(64 * 1024)
    subprocess.run(["mount", "-o", "remount,ro", str(read_only)], check=True)
    cases = {full / "res": "no space left on device", read_only / "res": "read-only file system",
             tmp_path / "file" / "res": "a file is in the way where a folder is expected",
             tmp_path / ("x" * 300): "the file name is too long"}
    for dest, problem in cases.items():
        done = _collect([swept, "--dest", dest])
        assert done.returncode == 2 and problem in one_error(done.stderr), done.stderr
    done = _collect([swept, "--dest", tmp_path / "limited"],
                    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512)))
    assert done.returncode == 2 and "a file grew past the size limit" in one_error(done.stderr), done.stderr
    assert not list((tmp_path / "limited").rglob("results.jsonl"))


def test_a_print_that_fails_names_the_standard_output_not_the_disk(swept, tmp_path):
    """Round 8 (S-devfull-*): a verb's printed result sent to a full disk (``> /dev/full``) ended in "no space left on
    device; free disk space (delete old runs or checkpoints ...)", naming nothing, although the report or data folder
    had been written whole; collect_results in a traceback. The line names the standard output; a reader that left
    early (``| head``) is no error."""
    from reliability_support import one_error

    with open("/dev/full", "w") as full:
        done = cli(["report", swept, "--out", tmp_path / "report"])
        assert done.returncode == 0
        for argv in (["params", "--json"], ["analyze", "compare", swept, "--json"],
                     ["report", swept, "--out", tmp_path / "again"]):
            proc = subprocess.run([sys.executable, "-m", "leviathan", *map(str, argv)], stdout=full, text=True,
                                  stderr=subprocess.PIPE, env=_env(), timeout=300)
            assert proc.returncode == 2, proc.stderr
            assert "could not print to the standard output ('/dev/full')" in one_error(proc.stderr)
        assert (tmp_path / "again" / "report.md").is_file()
        done = _collect([swept, "--dest", tmp_path / "res"], stdout=full)
        assert done.returncode == 2 and "could not print to the standard output" in one_error(done.stderr)
    head = subprocess.run(f"{sys.executable} -m leviathan params --json | head -c 1", shell=True, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert head.stdout == "[" and head.stderr == ""


def _env() -> dict:
    import os

    from reliability_support import REPO

    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}


def test_bake_adopted_onto_a_read_only_disk_names_the_folder_asked_for(small_disk):
    """Round 8 (F4): ``bake_adopted(model, RO/x)`` raised ``Read-only file system: 'RO/.x.tmp-pye8eij3'``, the name of
    a temporary folder the user never asked for (the CLI's export takes its lock first, which names the folder)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import adopt, bake_adopted

    disk = small_disk(64 * 1024)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    model = adopt(LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64,
                                               num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)))
    with pytest.raises(OSError) as caught:
        bake_adopted(model, disk / "x")
    assert caught.value.filename == str(disk / "x")


def test_the_python_apis_writes_onto_a_read_only_or_full_disk_are_the_verbs_line(data, small_disk):
    """Round 14 (B260, B344): ``bake_adopted(adopted, 'rofs/b')`` and ``Tokenizer.save('rofs/tok')`` on a read-only
    disk, or onto a full one, raised the raw OSError ("[Errno 30] Read-only file system", "[Errno 28] No space left
    on device"; the tokenizer's own file a bare Exception "(os error 28)") with no fix. Each is an
    ``errors.StorageError`` naming the path asked for, the problem and the fix; nothing is left on the disk."""
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.errors import StorageError
    from leviathan.hf import bake_adopted
    from test_storage_failures import _adopted_model

    tokenizer, model = load_tokenizer(str(data)), _adopted_model()
    read_only, full = small_disk(64 * 1024), small_disk(64 * 1024)
    subprocess.run(["mount", "-o", "remount,ro", str(read_only)], check=True)
    (full / "filler").write_bytes(b"\0" * (64 * 1024 - 8192))
    cases = [(lambda: bake_adopted(model, read_only / "b"), f"'{read_only}/b': read-only file system; choose a "
              f"location on a writable disk (out_dir)"),
             (lambda: tokenizer.save(read_only / "tok"), f"'{read_only}/tok': read-only file system; choose a "
              f"location on a writable disk (its directory argument)"),
             (lambda: bake_adopted(model, full / "b"), f"'{full}/b"),
             (lambda: tokenizer.save(full / "tok"), f"'{full}/tok")]
    for call, said in cases:
        with pytest.raises(StorageError) as caught:
            call()
        assert str(caught.value).startswith(said), str(caught.value)
        if said.startswith(f"'{full}"):
            assert FULL in str(caught.value) and "keep_last" not in str(caught.value), str(caught.value)
    assert list(read_only.iterdir()) == []


def test_lm_eval_with_a_full_temporary_disk_names_the_file_and_tmpdir(finished_run, tmp_path, small_disk):
    """Round 8 (L5): lm-eval writes its task files and the model's export into a temporary folder; when that disk
    refused a write (a file-size limit, a full /tmp) the line named no file and advised `--run-dir / --out`, which do
    not move it. It names the file and TMPDIR; nothing is left in the temporary disk, and --out gets no result."""
    import os

    from reliability_support import REPO, one_error
    from test_companions import _piqa_root

    disk = small_disk(64 * 1024)
    (disk / "filler").write_bytes(b"\0" * (64 * 1024 - 4096))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TMPDIR": str(disk)}
    proc = subprocess.run([sys.executable, "-m", "leviathan", "lm-eval", str(finished_run), "--tasks", "piqa",
                           "--data-root", str(_piqa_root(tmp_path / "tasks")), "--threads", "1", "--out",
                           str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert f"'{disk}/leviathan-lm-eval-" in line and "no space left on device" in line and "TMPDIR" in line, line
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]
    assert not (tmp_path / "out" / "lm_eval.json").exists()


def test_a_checkpoint_that_does_not_fit_is_named_a_full_disk(data, finished_run, small_disk):
    """Round 11 (R81): a step saved again onto a disk with less room than a step folder: the old step stayed intact,
    but the line said "input/output error (the disk or its file system failed a write)": the failed write was judged
    after its partial folder had been deleted, when the disk had room again."""
    from reliability_support import damage_beyond_use

    disk = small_disk(_du(finished_run) + 1024 * 1024)
    run = disk / "run"
    shutil.copytree(finished_run, run)
    # round 14 (A179): step 4 damaged beyond use, so --resume auto goes on from step 2 (an explicit older step is
    # refused while a newer complete one exists); the room it freed is taken again
    (disk / "filler").write_bytes(b"\0" * damage_beyond_use(run / "checkpoints" / "step-00000004"))
    before = tree_hashes(run)
    line = cli_error(["train", *run_overrides(data), "--run-dir", run, "--resume", "auto", "--quiet"])
    assert FULL in line and "could not save the checkpoint of step" in line, line
    assert {k: v for k, v in tree_hashes(run).items() if "checkpoints" in k} == \
        {k: v for k, v in before.items() if "checkpoints" in k}


def test_every_public_write_onto_a_read_only_or_full_disk_is_the_verbs_line(data, swept, tmp_path, small_disk):
    """Round 17 (E145, E149, E152, E153, E154): ``write_report``, ``train`` and ``prepare`` onto a read-only or a
    full disk raised the raw OSError ("[Errno 30] Read-only file system: 'ro/rep'", prepare's "'ro/.d.lock'",
    "[Errno 28] No space left on device: 'full/rep/loss_curves.png'", or a path in prepare's temporary folder). Each is
    an ``errors.StorageError`` naming the folder asked for, the problem and the fix with the API's argument."""
    from leviathan.data.prepare import prepare
    from leviathan.errors import StorageError
    from leviathan.experiments.report import write_report
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    read_only, full = small_disk(64 * 1024), small_disk(64 * 1024)
    subprocess.run(["mount", "-o", "remount,ro", str(read_only)], check=True)
    (full / "filler").write_bytes(b"\0" * (64 * 1024 - 8192))
    corpus, cfg = write_corpus(tmp_path / "corpus", num_docs=4), load_run_config(None, run_overrides(data))
    cases = [(lambda: write_report(swept, read_only / "rep", num_bootstrap=5), f"'{read_only}/rep': read-only"),
             (lambda: prepare(corpus, read_only / "d", "bpe:300", progress=False), f"'{read_only}/d' (its lock file"),
             (lambda: write_report(swept, full / "rep", num_bootstrap=5), f"'{full}/rep"),
             (lambda: train(cfg, full / "run", quiet=True), f"'{full}/run"),
             (lambda: prepare(corpus, full / "d", "bpe:300", progress=False), f"'{full}/d")]
    for call, said in cases:
        with pytest.raises(StorageError) as caught:
            call()
        line = str(caught.value)
        assert line.startswith(said) and line.endswith(("(out_dir)", "(run_dir)")), line
        assert said.startswith(f"'{read_only}") or FULL in line, line
