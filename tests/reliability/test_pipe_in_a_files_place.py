"""A named pipe where a JSON file belongs (issue 30 round 23, U385, U411: hangs). ``mkfifo EXPORT/config.json`` made
``LeviathanForCausalLM.from_pretrained(EXPORT)`` wait forever for a writer (its adopted-folder check read the file
whole), and ``json_text.read_file``, the reader of every JSON sidecar, would too. Each now refuses in one line naming
the pipe. Run in a child process with a timeout, so that a hang fails the test instead of stalling the suite."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from reliability_support import REPO

pytestmark = [pytest.mark.reliability]

SCRIPT = r"""
import os, sys, json
from leviathan.errors import UserError
from leviathan import json_text
from leviathan.presets import preset
from leviathan.model.llama import CausalLM
from leviathan.hf.export import from_native
from leviathan.hf import LeviathanForCausalLM, adopt, load_adopted
from transformers import LlamaConfig, LlamaForCausalLM

root = sys.argv[1]
pipe = os.path.join(root, "p.json")
os.mkfifo(pipe)
try:
    json_text.read_file(pipe)
except ValueError as e:
    print("read_file:", e)
export = os.path.join(root, "ex")
from_native(CausalLM(preset("cpu-tiny", vocab_size=300))).save_pretrained(export)
c = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                max_position_embeddings=64)
adopted = os.path.join(root, "ad")
adopt(LlamaForCausalLM(c), seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(adopted)
for folder, load in ((export, LeviathanForCausalLM.from_pretrained), (adopted, load_adopted)):
    os.remove(os.path.join(folder, "config.json"))
    os.mkfifo(os.path.join(folder, "config.json"))
    try:
        load(folder)
    except UserError as e:
        print("load:", str(e).splitlines()[0])
"""


def test_a_pipe_in_a_json_files_place_is_refused_not_waited_on(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=240)
    lines = [line for line in done.stdout.splitlines() if line]
    assert done.returncode == 0 and len(lines) == 3, done.stdout + done.stderr
    assert lines[0].startswith("read_file: it is a named pipe (FIFO), not a regular file"), lines[0]
    for line, folder in zip(lines[1:], ("ex", "ad")):
        assert line.startswith(f"load: {str(tmp_path / folder / 'config.json')!r}") and "named pipe" in line, line
