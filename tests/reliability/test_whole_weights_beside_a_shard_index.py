"""A folder holding a sharded save and a whole weights file is refused, naming both (issue 30 round 29, W96, W129).

W96: a whole model.safetensors added beside a sharded save (its index records the shards only) loaded without a
word; W129: when that file was another model's (another seed), its weights were loaded under this save's config.json
and index. transformers prefers the whole file, and both of leviathan's checks stepped aside (``shard_index`` for a
folder with a whole file, ``weights_digest`` for one with an index). ``shard_index._refuse_whole_beside_index`` now
refuses the pair before transformers reads either, for ``load_adopted`` and ``LeviathanForCausalLM.from_pretrained``.
"""

from __future__ import annotations

import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, adopt, load_adopted  # noqa: E402

from test_adopted_load_failures_in_one_line import saves  # noqa: E402,F401
from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402

pytestmark = pytest.mark.reliability

NAMED = (r"holds both the whole weights file model\.safetensors and the shard index model\.safetensors\.index\.json "
         r"of a sharded save: .*transformers would load model\.safetensors and leave the recorded shards unread\); "
         r"move the one that is not this save's out of the folder")


def _refused(load, folder):
    with pytest.raises(UserError, match=rf"^'{folder}' {NAMED}") as e:
        load(folder)
    assert "\n" not in str(e.value)


def test_another_models_whole_file_beside_the_shards_is_refused(saves, tmp_path):  # noqa: F811
    """W129 (another seed's weights), and W96 (the same model's whole file)."""
    torch.manual_seed(5)
    adopt(transformers.LlamaConfig(**LLAMA), **GEN).save_pretrained(tmp_path / "other")
    for source in (tmp_path / "other", saves / "whole"):
        folder = shutil.copytree(saves / "sharded", tmp_path / f"sharded-{source.name}")
        shutil.copy(source / "model.safetensors", folder / "model.safetensors")
        _refused(load_adopted, folder)


def test_the_native_loader_refuses_the_pair_too(saves, tmp_path):  # noqa: F811
    LeviathanForCausalLM.from_pretrained(saves / "native").save_pretrained(tmp_path / "whole")
    folder = shutil.copytree(saves / "native", tmp_path / "native")
    shutil.copy(tmp_path / "whole" / "model.safetensors", folder / "model.safetensors")
    _refused(LeviathanForCausalLM.from_pretrained, folder)


def test_the_sharded_save_alone_still_loads(saves):  # noqa: F811
    assert load_adopted(saves / "sharded") is not None
