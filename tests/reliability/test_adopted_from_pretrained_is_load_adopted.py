"""An adopted class's own ``from_pretrained`` is ``load_adopted``: the same rules either way in (issue 30 round 30).

``type(model).from_pretrained(folder)`` (``LeviathanLlamaForCausalLM``) skipped load_adopted's checks of the keywords
and the folder: ``output_loading_info='no'`` or ``1`` was read as true and returned (model, info) (Y714, Y715),
``foo=1`` was transformers' raw "LlamaForCausalLM.__init__() got an unexpected keyword argument 'foo'" (Y718), and
another adopted model's model.safetensors (another seed, the same shapes) loaded without a word, where load_adopted
refuses it by the weights digest config.json records (Y720). ``adoption._adopted_from_pretrained`` calls
load_adopted (its old body is ``_AdoptedMixin._from_folder``, what load_adopted calls) and refuses a folder of
another class, and positional model arguments, in one line.
"""

from __future__ import annotations

import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import ArgumentTypeError, UserError  # noqa: E402
from leviathan.hf import adopt, load_adopted  # noqa: E402
from leviathan.hf.adoption import adopted_class  # noqa: E402

from test_adopted_load_failures_in_one_line import saves  # noqa: E402,F401
from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402

pytestmark = pytest.mark.reliability

CLS = adopted_class(transformers.LlamaForCausalLM)


@pytest.mark.parametrize("value", ["no", 1])
def test_output_loading_info_is_a_switch(saves, value):  # noqa: F811
    """Y714, Y715."""
    with pytest.raises(ArgumentTypeError, match=rf"output_loading_info must be True or False, got {value!r}; pass "
                                                r"output_loading_info=True or output_loading_info=False"):
        CLS.from_pretrained(saves / "whole", output_loading_info=value)


def test_an_unknown_keyword_is_one_line(saves):  # noqa: F811
    """Y718."""
    with pytest.raises(UserError, match=r"'foo' is no option of from_pretrained .*check its spelling, or leave it "
                                        r"out") as e:
        CLS.from_pretrained(saves / "whole", foo=1)
    assert "\n" not in str(e.value)


def test_another_saves_weights_are_refused_by_the_digest(saves, tmp_path):  # noqa: F811
    """Y720."""
    folder = shutil.copytree(saves / "whole", tmp_path / "a")
    torch.manual_seed(3)
    adopt(transformers.LlamaConfig(**LLAMA), **GEN).save_pretrained(tmp_path / "b")
    shutil.copy(tmp_path / "b" / "model.safetensors", folder / "model.safetensors")
    with pytest.raises(UserError, match=r"model\.safetensors' is not the weights file saved with .*config\.json"):
        CLS.from_pretrained(folder)


def test_the_folder_still_loads_as_load_adopted_loads_it(saves):  # noqa: F811
    ids = torch.randint(0, 300, (2, 9), generator=torch.Generator().manual_seed(1))
    model, info = CLS.from_pretrained(saves / "whole", output_loading_info=True)
    assert type(model) is CLS and set(info) >= {"missing_keys", "unexpected_keys"}
    assert torch.equal(model.eval()(ids).logits, load_adopted(saves / "whole").eval()(ids).logits)
    assert type(CLS.from_pretrained(pretrained_model_name_or_path=saves / "whole")) is CLS


def test_a_folder_of_another_class_and_positional_arguments_are_named(saves):  # noqa: F811
    with pytest.raises(UserError, match=r"^LeviathanQwen2ForCausalLM\.from_pretrained: '.*whole' holds a "
                                        r"LeviathanLlamaForCausalLM, not a LeviathanQwen2ForCausalLM; load it with "
                                        r"leviathan\.hf\.load_adopted"):
        adopted_class(transformers.Qwen2ForCausalLM).from_pretrained(saves / "whole")
    with pytest.raises(UserError, match=r"^LeviathanLlamaForCausalLM\.from_pretrained: 1 positional argument\(s\) "
                                        r"after the folder \('x', \.\.\.\) are not taken"):
        CLS.from_pretrained(saves / "whole", "x")
