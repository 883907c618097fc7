"""A keyword ``save_pretrained`` (or ``from_pretrained``) does not take is named, before anything is written (issue 30
round 29, W165).

W165: ``bake_adopted(model, DIR, unknown_option=1)`` (a typo of an option: ``safe_serialisation=False``) passed the
keyword to transformers' ``save_pretrained``, which gathers what it does not know for the hub upload and dropped it
without a word. ``save_folder._refuse_unknown_keywords`` (called by ``check_save_arguments``, so by an adopted model's
and a LeviathanForCausalLM's ``save_pretrained`` too) names it and the keywords save_pretrained takes, read from
transformers' own signature. ``to_hf``, ``to_plain_llama`` and ``export_for_harness`` take no ``**kwargs`` (Python
names an unknown keyword), and ``load_adopted``'s unknown keyword is already one line (round 24, W597's kind);
``LeviathanForCausalLM.from_pretrained``'s was transformers' raw "LeviathanForCausalLM.__init__() got an unexpected
keyword argument", now the same line (``modeling.unknown_keyword``).
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, adopt, bake_adopted  # noqa: E402
from leviathan.hf.export import from_native  # noqa: E402

from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402
from test_model_inputs_held_like_their_siblings import _model  # noqa: E402

pytestmark = pytest.mark.reliability


def _adopted():
    torch.manual_seed(0)
    return adopt(transformers.LlamaConfig(**LLAMA), **GEN)


@pytest.mark.parametrize("who, save", [
    ("bake_adopted", lambda folder, **kw: bake_adopted(_adopted(), folder, **kw)),
    ("save_pretrained", lambda folder, **kw: _adopted().save_pretrained(folder, **kw)),
    ("save_pretrained", lambda folder, **kw: from_native(_model()).save_pretrained(folder, **kw)),
], ids=["bake_adopted", "adopted", "native"])
def test_an_unknown_save_keyword_is_named_and_nothing_is_written(tmp_path, who, save):
    with pytest.raises(UserError, match=rf"^{who}: safe_serialisation=False is no keyword of save_pretrained, which "
                                        r"would drop it without a word; check the spelling.*\(the keywords it takes: "
                                        r"is_main_process, state_dict, .*max_shard_size, variant.*\); nothing was "
                                        r"written$") as e:
        save(tmp_path / "out", safe_serialisation=False)
    assert "\n" not in str(e.value) and not (tmp_path / "out").exists()


def test_the_keywords_save_pretrained_takes_still_save(tmp_path):
    assert bake_adopted(_adopted(), tmp_path / "baked", max_shard_size="5GB", token=None).is_dir()
    _adopted().save_pretrained(tmp_path / "saved", max_shard_size="20KB")
    assert (tmp_path / "saved" / "model.safetensors.index.json").is_file()


def test_from_pretrained_names_a_keyword_it_does_not_take(tmp_path):
    from_native(_model()).save_pretrained(tmp_path / "native")
    with pytest.raises(UserError, match=r"^from_pretrained\('.*native'\): 'unknown_option' is no option of "
                                        r"from_pretrained .*check its spelling, or leave it out") as e:
        LeviathanForCausalLM.from_pretrained(tmp_path / "native", unknown_option=1)
    assert "\n" not in str(e.value)
