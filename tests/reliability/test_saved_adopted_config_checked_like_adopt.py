"""``load_adopted`` holds a saved config.json to ``adopt``'s own check of the transformers settings (issue 30 round 28,
U237-U240, U732-U805): round 27 (fix27a) made ``adopt(config)`` refuse an unknown activation, a dropout past 1, a
negative norm epsilon or no positions in one line, but a folder whose config.json says so loaded and ended in the raw
KeyError / RuntimeError at build or at the first forward. One line naming the file and the setting, nothing built.
"""

from __future__ import annotations

import json
import shutil

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import load_adopted  # noqa: E402
from test_hf_keywords_at_the_boundary import adopted_folder  # noqa: E402,F401  (a fixture)

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("key, value, said", [
    ("hidden_act", "nope", "LlamaConfig.hidden_act"),
    ("attention_dropout", 5.0, "LlamaConfig.attention_dropout"),
    ("rms_norm_eps", -1.0, "LlamaConfig.rms_norm_eps"),
    ("max_position_embeddings", 0, "LlamaConfig.max_position_embeddings"),
    ("pad_token_id", 500, "LlamaConfig.pad_token_id"),
])
def test_a_setting_adopt_refuses_is_refused_in_a_saved_config(adopted_folder, tmp_path, key, value, said):
    copy = tmp_path / "copy"
    shutil.copytree(adopted_folder, copy)
    raw = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**raw, key: value}))
    with pytest.raises(UserError) as caught:
        load_adopted(copy)
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"{str(copy / 'config.json')!r}: {said}"), line
    assert "config.json was edited" in line, line


def test_the_saved_folder_as_written_still_loads(adopted_folder):
    assert load_adopted(adopted_folder) is not None
