"""A ``device_map`` that offloads a module to disk inside one kept on a device is one line (issue 30 round 29).

W735: ``load_adopted(p, device_map={'model.embed_tokens': 'disk', '': 'cpu'})`` (the generator offloaded, the rest on
the CPU) ended in accelerate's raw "codebooks is on the meta device, we need a `value` to put in on cpu". The cause
is not the generator: transformers' loader leaves the weights of any module on ``disk`` without values when a module
enclosing it (``''``, the whole model, or ``'model'``) is kept on a device, or the reverse; transformers' own Llama
fails the same way with ``lm_head``. ``devices.check_device_map`` (``_nested_disk_problem``) refuses that map, naming
both modules; modules side by side and the whole model on disk (W131) still load, with the same logits.
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan import devices  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, load_adopted  # noqa: E402

from test_adopted_load_failures_in_one_line import saves  # noqa: E402,F401

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("load", [load_adopted, LeviathanForCausalLM.from_pretrained])
def test_the_generator_offloaded_inside_the_model_on_the_cpu_is_named(saves, load):  # noqa: F811
    """W735, and the same map for the project's own model."""
    name = "whole" if load is load_adopted else "native"
    with pytest.raises(UserError, match=r"device_map puts 'model.embed_tokens' on 'disk' inside '' \(the whole "
                                        r"model\) on 'cpu', .*map modules side by side.*or put the whole model on "
                                        r"disk \(\{'': 'disk'\}\)") as e:
        load(saves / name, device_map={"model.embed_tokens": "disk", "": "cpu"})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("device_map, inner, outer", [
    ({"model.embed_tokens": "disk", "model": "cpu", "lm_head": "cpu"}, "model.embed_tokens", "model"),
    ({"": "disk", "lm_head": "cpu"}, "lm_head", ""),
    ({"": "cpu", "lm_head": "disk"}, "lm_head", ""),
])
def test_any_module_on_disk_nested_in_a_device_is_named(device_map, inner, outer):
    with pytest.raises(UserError, match=rf"^api: device_map puts '{inner}' on '\w+' inside '{outer}'"):
        devices.check_device_map(device_map, "api")


@pytest.mark.parametrize("device_map", [{"": "disk"}, {"model": "disk", "lm_head": "cpu"},
                                        {"model.embed_tokens": "disk", "model.layers": "cpu", "model.norm": "cpu",
                                         "model.rotary_emb": "cpu", "lm_head": "cpu"}])
def test_disk_offload_that_loads_is_taken_with_the_same_logits(saves, device_map):  # noqa: F811
    """W131 (the whole model on disk), and the generator offloaded beside modules named on the CPU."""
    ids = torch.randint(0, 300, (2, 9), generator=torch.Generator().manual_seed(1))
    expected = load_adopted(saves / "whole").eval()(ids).logits
    assert torch.equal(load_adopted(saves / "whole", device_map=device_map).eval()(ids).logits, expected)
