"""A named pipe or a folder standing where a file belongs is named as what it is (issue 30 round 23, U379, U383,
U384, U388, U390, U394, U398, U399, U400, U401, U402, U408, U409). Each reader asked ``is_file()`` and, when it said
no, called the file missing ("holds no tokenizer.json", "state.json missing", "train.bin is missing"), while ``ls``
lists it; round 22's S528 named a folder in the weights file's place. Every check of a file a folder records now
says what stands there (``errors.not_a_file``): the tokenizer's folder, an export's marker, a checkpoint's state.json
and its damage check, a data folder's splits and meta.json record; and, beyond the ids, ``find_checkpoint`` of a
step folder, ``io.metrics_file``, ``merge_sweeps``' grid.json, ``write_sweep_records``' results.jsonl, and a
tokenizer folder's leviathan_tokenizer.json (a pipe there was read as no record, its checks skipped)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402
from test_task_files import PIQA  # noqa: E402

pytestmark = [pytest.mark.reliability]

PIPE = "is a named pipe (FIFO), not a regular file"
FOLDER = "is a folder, not a file"
STEP = Path("checkpoints") / "step-00000004"


def _replace(path: Path, kind: str) -> Path:
    """``path`` removed and a named pipe ('pipe') or an empty folder ('folder') made in its place."""
    path.unlink()
    os.mkfifo(path) if kind == "pipe" else path.mkdir()
    return path


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _words(kind: str) -> str:
    return PIPE if kind == "pipe" else FOLDER


@pytest.mark.parametrize("kind", ["pipe", "folder"])
def test_load_tokenizer_names_what_stands_in_tokenizer_jsons_place(data, tmp_path, kind):
    """U379 (a saved BPE folder, a pipe), U383 (the same, a folder), U384 (a data copy, a folder): "records tokenizer
    'bpe:300' but holds no tokenizer.json"."""
    from leviathan.data.tokenizer import load_tokenizer

    saved = tmp_path / "tk"
    saved.mkdir()
    shutil.copy(data / "leviathan_tokenizer.json", saved)
    (saved / "tokenizer.json").touch()
    folders = [saved, _copy(data, tmp_path / "dat")]
    for folder in folders:
        bad = _replace(folder / "tokenizer.json", kind)
        with pytest.raises(UserError) as e:
            load_tokenizer(str(folder))
        line = str(e.value)
        assert line.startswith(f"{str(bad)!r} {_words(kind)}") and "holds no" not in line, line
        assert "copy the tokenizer.json back" in line and "\n" not in line, line


def test_load_tokenizer_names_a_pipe_in_its_records_place(data, tmp_path):
    """U379's kind: a saved BPE folder whose leviathan_tokenizer.json is a pipe loaded its tokenizer.json as a folder
    without a record, the record's checks (its name, ids, sha256) skipped without a word."""
    from leviathan.data.tokenizer import load_tokenizer

    folder = tmp_path / "tk"
    folder.mkdir()
    shutil.copy(data / "tokenizer.json", folder)
    os.mkfifo(folder / "leviathan_tokenizer.json")
    with pytest.raises(UserError) as e:
        load_tokenizer(str(folder))
    line = str(e.value)
    assert line.startswith(f"{str(folder / 'leviathan_tokenizer.json')!r} {PIPE}") and "record" in line, line


def test_load_tokenizer_of_an_adopted_save_names_a_pipe_in_tokenizer_jsons_place(data, tmp_path):
    """U408: an adopted save with the data's tokenizer saved beside it; its tokenizer.json a named pipe."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.hf import adopt

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, max_position_embeddings=64)
    folder = tmp_path / "ad"
    adopt(LlamaForCausalLM(config), seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(folder)
    load_tokenizer(str(data)).save(folder)
    bad = _replace(folder / "tokenizer.json", "pipe")
    with pytest.raises(UserError, match=f"^{str(bad)!r} {PIPE}".replace("(", r"\(").replace(")", r"\)")):
        load_tokenizer(str(folder))


def test_an_exports_recorded_files_are_named_as_a_pipe_not_missing(exported, tmp_path):
    """U388 (generation_config.json, from_pretrained), U398 (leviathan_tokenizer.json, load_tokenizer): "is missing,
    but leviathan_output.json records it"."""
    import leviathan.hf  # noqa: F401  (registers the Auto classes)
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.hf import LeviathanForCausalLM

    for name, load in (("generation_config.json", LeviathanForCausalLM.from_pretrained),
                       ("leviathan_tokenizer.json", load_tokenizer)):
        folder = _copy(exported, tmp_path / name)
        bad = _replace(folder / name, "pipe")
        with pytest.raises(UserError) as e:
            load(str(folder))
        line = str(e.value)
        assert line.startswith(f"{str(bad)!r} {PIPE}") and "is missing" not in line, line
        assert "but leviathan_output.json records it" in line and "export the checkpoint again" in line, line


def test_lm_eval_names_a_pipe_in_an_exports_config_json(exported, tmp_path):
    """U409, the CLI in a real process: exit 2 and "'E/config.json' is missing, but leviathan_output.json records
    it"."""
    folder = _copy(exported, tmp_path / "e1")
    bad = _replace(folder / "config.json", "pipe")
    root = tmp_path / "tasks"
    (root / "piqa").mkdir(parents=True)
    (root / "piqa" / "valid.jsonl").write_text(__import__("json").dumps(PIQA) + "\n")
    (root / "piqa" / "valid-labels.lst").write_text("0\n")
    line = cli_error(["lm-eval", folder, "--tasks", "piqa", "--limit", "1", "--data-root", root])
    assert line.startswith(f"error: {str(bad)!r} {PIPE}") and "is missing" not in line, line


@pytest.mark.parametrize("name", ["state.json", "optimizer.pt", "config.yaml"])
def test_a_pipe_in_the_newest_steps_place_is_named_in_the_damage_line(run_copy, name):
    """U390 (state.json), U399 (optimizer.pt), U400 (config.yaml): "is damaged (state.json missing; ...)"; and
    ``find_checkpoint`` of the step folder itself, which said "incomplete (missing state.json)"."""
    from leviathan.checkpoint.find import find_checkpoint
    from leviathan.checkpoint.read import load_model

    _replace(run_copy / STEP / name, "pipe")
    with pytest.raises(UserError) as e:
        load_model(str(run_copy))
    line = str(e.value)
    assert f"is damaged ({name} {PIPE}" in line and "missing" not in line, line
    with pytest.raises(UserError) as e:
        find_checkpoint(run_copy / STEP)
    assert f"is incomplete ({name} {PIPE}" in str(e.value) and "missing" not in str(e.value), str(e.value)


def test_a_pipe_in_a_recorded_companions_place_is_named_at_resume(run_copy):
    """U401: a resume whose newest rng.pt is a pipe: "'.../rng.pt' is missing, but state.json records it"."""
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    bad = _replace(run_copy / STEP / "rng.pt", "pipe")
    with pytest.raises(UserError) as e:
        train(load_run_config(run_copy / "config.yaml", ["max_steps=6"]), run_copy, resume="auto", quiet=True)
    line = str(e.value)
    assert line.startswith(f"{str(bad)!r} {PIPE}") and "but state.json records it" in line, line


@pytest.mark.parametrize("kind", ["pipe", "folder"])
def test_a_data_folders_split_file_is_named_as_what_stands_there(data, tmp_path, kind):
    """U394 (BatchLoader, train.bin), U402 (EvalStream.from_split, val.bin): "train.bin is missing; the data dir is
    incomplete"."""
    from leviathan.data.loader import BatchLoader
    from leviathan.eval.stream import EvalStream

    for split, read in (("train", lambda d: BatchLoader(d, 32, 4)), ("val", lambda d: EvalStream.from_split(d, "val"))):
        folder = _copy(data, tmp_path / split)
        bad = _replace(folder / f"{split}.bin", kind)
        with pytest.raises(UserError) as e:
            read(str(folder))
        line = str(e.value)
        assert line.startswith(f"{bad} {_words(kind)}") and "is missing" not in line, line


def test_other_readers_name_a_pipe_in_a_files_place(finished_run, tmp_path):
    """The kind beyond the ids: ``metrics_file`` said "no metrics file at", ``merge_sweeps`` "has no grid.json",
    ``write_sweep_records`` "holds no results.jsonl", for a pipe standing there."""
    from leviathan.experiments.machinery.embedding_files import write_sweep_records
    from leviathan.experiments.machinery.shards import merge_sweeps
    from leviathan.io import metrics_file

    run = _copy(finished_run, tmp_path / "run")
    bad = _replace(run / "metrics.jsonl", "pipe")
    with pytest.raises(UserError, match=f"^{str(bad)!r} is a named pipe"):
        metrics_file(run)
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    os.mkfifo(sweep / "grid.json")
    os.mkfifo(sweep / "results.jsonl")
    (tmp_path / "other").mkdir()  # a second folder: one named twice is said first (round 35, AI170)
    with pytest.raises(UserError, match=f"^{str(sweep / 'grid.json')!r} is a named pipe"):
        merge_sweeps([sweep, tmp_path / "other"])
    with pytest.raises(UserError, match=f"^{str(sweep / 'results.jsonl')!r} is a named pipe"):
        write_sweep_records(sweep)
