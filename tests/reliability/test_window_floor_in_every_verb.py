"""A split shorter than one evaluation window is refused by eval as by train and sweep, and only after its file is
held to meta.json (issue 30 round 29: V23 "silent", V54).

V23: ``eval RUN --data D`` of a folder whose val split holds fewer tokens than one window (seq_len + 1) printed a
loss "on 79 tokens", exit 0, where train and sweep refuse the folder (round 28, T13): ``commands.eval.
_check_window_fits``. V54: a folder holding another preparation's meta.json (val 18 tokens in meta, 14,112 in
val.bin) was refused by train as a val split "fewer than one evaluation window": the wrong cause; train now holds
val.bin to meta.json (``TokenDataset``) before it speaks of the window.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, write_corpus  # noqa: E402


def _short_val(data: Path, tmp_path: Path) -> Path:
    """A folder prepared with ``data``'s tokenizer whose val split is one short sentence (well under 129 tokens)."""
    (tmp_path / "v.txt").write_text("The cat sat on the mat and the dog ran far away. \n")
    out = tmp_path / "dtv"
    done = cli(["prepare", write_corpus(tmp_path / "corpus", num_docs=4), "--out", out, "--tokenizer",
                data / "tokenizer.json", "--val-source", tmp_path / "v.txt"])
    assert done.returncode == 0, done.stderr
    return out


def test_eval_refuses_a_split_shorter_than_a_window(data, finished_run, tmp_path):
    short = _short_val(data, tmp_path)
    line = cli_error(["eval", finished_run, "--data", short, "--seq-len", "120"])
    assert f"--data '{short}': its val split holds " in line and "fewer than one evaluation window (--seq-len 120 + 1)" \
        in line and "or lower --seq-len" in line, line
    capped = cli_error(["eval", finished_run, "--data", short, "--seq-len", "120", "--max-tokens", "8"])
    assert "--max-tokens 8 is fewer than one evaluation window (--seq-len 120 + 1 tokens)" in capped, capped  # W692


def test_train_names_another_preparations_meta_before_the_window(data, tmp_path):
    short = _short_val(data, tmp_path)
    mixed = tmp_path / "dsw"
    shutil.copytree(data, mixed)
    shutil.copy(short / "meta.json", mixed / "meta.json")
    line = cli_error(["train", "--config", "tiny", f"data.path={mixed}", "max_steps=1", "schedule.warmup_steps=0", "--run-dir", tmp_path / "r"])
    assert f"{mixed / 'val.bin'} holds " in line and "the file is truncated or from another preparation" in line, line
    assert "evaluation window" not in line and not (tmp_path / "r").exists()
