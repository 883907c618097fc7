"""docs/USING.md runs: its ``python`` blocks are executed in order, in one namespace, in an empty folder.

The blocks are the documentation's own asserts (falling losses, equal logits, a baked checkpoint that transformers
loads); this test only makes them run, so the recipes cannot rot. A failing block is named by its first line in
the file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

DOC = Path(__file__).resolve().parents[2] / "docs" / "USING.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[tuple[int, str]]:
    text = DOC.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in FENCE.finditer(text)]


def test_the_doc_has_a_block_for_each_recipe():
    text = "\n".join(code for _, code in blocks())
    for needle in ("LeviathanGenerator(", "adopt(", "load_adopted(", "bake_adopted(", "transformers.Trainer(",
                   "resume_from_checkpoint=True", "LeviathanForCausalLM(", "fit=Fit("):
        assert needle in text, needle


def test_using_md_snippets_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "using_md"}
    for line, code in blocks():
        try:
            exec(compile(code, f"{DOC}:{line}", "exec"), namespace)
        except Exception as e:  # name the block, keep the traceback
            raise AssertionError(f"docs/USING.md block at line {line} failed: {type(e).__name__}: {e}") from e
