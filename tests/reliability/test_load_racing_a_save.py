"""A load of a save_pretrained folder that races a save into it reads one save whole, never a mix (issue 30 round 23,
U515): two processes saving adopted models of ranks 4 and 8 into one folder, and a third calling ``load_adopted`` on
it, got a raw FileNotFoundError for model.safetensors, transformers' "Error no file named model.safetensors", and "the
weights ... do not fit the sizes its config.json gives ...: config.json was edited" for a folder caught between two
saves. ``save_whole`` now renames under the folder's exclusive flock and the loaders read under its shared one
(``leviathan.swap_lock``).

The race is made certain, not hoped for: the writer process stops for 3 s in the middle of its renames (the new
weights in place, the earlier config.json not yet replaced), and the test loads the folder then: with
``load_adopted`` (an adopted save) and ``LeviathanForCausalLM.from_pretrained`` (``from_native``'s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.reliability

REPO = Path(__file__).resolve().parents[2]

WRITER = r"""
import sys, time
from pathlib import Path
import torch
from transformers import LlamaConfig, LlamaForCausalLM
import leviathan.replace_together as together
from leviathan.hf import adopt
from leviathan.hf.export import from_native
from leviathan import CausalLM, ModelConfig

root = Path(sys.argv[1])
real = together.replace_together

def model(kind, width):
    torch.manual_seed(width)
    if kind == "adopted":
        c = LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                        num_attention_heads=2, num_key_value_heads=2)
        return adopt(LlamaForCausalLM(c), seed_dim=8, modes=2, knots=8, rank=width)
    return from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=width, num_hidden_layers=1,
                                            num_attention_heads=4, max_position_embeddings=64)))

for kind, first, second in (("adopted", 4, 8), ("native", 32, 64)):
    together.replace_together = real
    model(kind, first).save_pretrained(root / kind)

    def halting(pairs, aside, remove=(), kind=kind):  # the weights, a pause, then config.json (save_whole's order)
        pairs = list(pairs)
        done = real(pairs[:-1], aside)
        (root / f"{kind}.mid-swap").touch()
        time.sleep(3)
        return done + real(pairs[-1:], aside, remove)

    together.replace_together = halting
    model(kind, second).save_pretrained(root / kind)
"""


def _wait_for(marker: Path, writer: subprocess.Popen) -> None:
    deadline = time.time() + 120
    while not marker.exists():
        assert writer.poll() is None, writer.stderr.read()
        assert time.time() < deadline, "the writer never reached its renames"
        time.sleep(0.02)


def test_a_load_during_a_save_waits_for_it_and_reads_the_new_save_whole(tmp_path):
    from leviathan.hf import LeviathanForCausalLM, load_adopted

    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], env=env, stderr=subprocess.PIPE,
                              text=True)
    try:
        _wait_for(tmp_path / "adopted.mid-swap", writer)
        started = time.monotonic()
        assert load_adopted(tmp_path / "adopted").config.leviathan_generator["rank"] == 8  # the second save, whole
        assert time.monotonic() - started > 1.0  # it waited for the renames to end
        _wait_for(tmp_path / "native.mid-swap", writer)
        started = time.monotonic()
        assert LeviathanForCausalLM.from_pretrained(tmp_path / "native").config.hidden_size == 64
        assert time.monotonic() - started > 1.0
    finally:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()


TOKENIZER_WRITER = r"""
import sys, time
from pathlib import Path
import leviathan.replace_together as together
from leviathan.data.tokenizer import load_tokenizer, train_bpe

data, folder, marker, text = sys.argv[1:5]
load_tokenizer(data).save(folder)
real = together.replace_together

def halting(pairs, aside, remove=()):  # tokenizer.json, a pause, then its record (atomic_write_together's order)
    pairs = list(pairs)
    done = real(pairs[:-1], aside)
    Path(marker).touch()
    time.sleep(3)
    return done + real(pairs[-1:], aside, remove)

together.replace_together = halting
train_bpe([Path(text).read_text()], 280).save(folder)
"""


def test_a_tokenizer_load_during_a_save_waits_for_it(tmp_path, data):
    """The same kind in ``Tokenizer.save`` / ``load_tokenizer``: a load among the renames read the new tokenizer.json
    beside the earlier save's record, and blamed an edit ("not the file Tokenizer.save wrote")."""
    from leviathan.data.tokenizer import load_tokenizer

    text = sorted((data.parent / "corpus").iterdir())[0]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    writer = subprocess.Popen([sys.executable, "-c", TOKENIZER_WRITER, str(data), str(tmp_path / "t"),
                               str(tmp_path / "mid-swap"), str(text)], env=env, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(tmp_path / "mid-swap", writer)
        started = time.monotonic()
        assert load_tokenizer(tmp_path / "t").vocab_size <= 280  # the second save, whole
        assert time.monotonic() - started > 1.0
    finally:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
