"""A ``device_map`` that gives no device to some of the model's tensors is one line naming the modules left out
(issue 30 round 30).

Y91: ``load_adopted(p, device_map={'model.embed_token': 'disk', 'model.layers': 'cpu', ...})`` (the generator's
module misspelt) ended in accelerate's raw "ValueError: The device_map provided does not give any device for the
following parameters: model.embed_tokens.codebooks, ...", after the weights were read; ``LeviathanForCausalLM``
met the same. ``devices.check_map_covers`` builds the model on the meta device and names the modules left out and the
keys that name no module.
"""

from __future__ import annotations

import pytest
from torch import nn

transformers = pytest.importorskip("transformers")

from leviathan import devices  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, load_adopted  # noqa: E402

from test_adopted_load_failures_in_one_line import saves  # noqa: E402,F401

pytestmark = pytest.mark.reliability

TYPO = {"model.embed_token": "disk", "model.layers": "cpu", "model.norm": "cpu", "lm_head": "cpu"}


@pytest.mark.parametrize("load, name, who", [(load_adopted, "whole", "load_adopted"),
                                             (LeviathanForCausalLM.from_pretrained, "native",
                                              "LeviathanForCausalLM.from_pretrained")])
def test_a_misspelt_module_leaving_the_generator_unmapped_is_named(saves, tmp_path, load, name, who):  # noqa: F811
    """Y91, and the same map for the project's own model."""
    with pytest.raises(UserError, match=rf"^{who.replace('.', '[.]')}: device_map gives no device to "
                                        rf"'model\.embed_tokens' \(\d+ tensor\(s\)\) \(device_map names "
                                        rf"'model\.embed_token', no module of the model\); give each a device beside "
                                        rf"the others \(e\.g\. 'model\.embed_tokens': 'cpu'\), or leave device_map "
                                        rf"out$") as e:
        load(saves / name, device_map=TYPO, offload_folder=str(tmp_path / "off"))
    assert "\n" not in str(e.value) and not (tmp_path / "off").exists()


def test_a_map_that_covers_the_model_is_taken():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2)))
    for device_map in ({"": "cpu"}, {"0": "cpu", "1": "cpu"}, {"0": "cpu", "1.0": "cpu", "1.1": "disk"}, "cpu", None):
        devices.check_map_covers(device_map, lambda: model, "api")
    with pytest.raises(UserError, match=r"^api: device_map gives no device to '1\.1' \(2 tensor\(s\)\); give each"):
        devices.check_map_covers({"0": "cpu", "1.0": "cpu"}, lambda: model, "api")
    with pytest.raises(UserError, match=r"no device to '1' \(4 tensor\(s\)\) \(device_map names '2', no module"):
        devices.check_map_covers({"0": "cpu", "2": "cpu"}, lambda: model, "api")


@pytest.mark.parametrize("load, name, who", [(load_adopted, "whole", "load_adopted"),
                                             (LeviathanForCausalLM.from_pretrained, "native",
                                              "LeviathanForCausalLM.from_pretrained")])
@pytest.mark.parametrize("device_map, key, near", [
    ({"model": "cpu", "lm_head": "cpu", "model.layers.7": "cpu"}, "model.layers.7", "'model.layers.0'"),  # AA21, AA510
    ({"": "cpu", "lm_head": "cpu", "bogus": "cpu"}, "bogus", "'model', "),  # AA25: beside the whole model
])
def test_a_key_naming_nothing_beside_a_covering_map_is_named(saves, load, name, who, device_map, key, near):  # noqa: F811
    """Round 31: AA21, AA25 (load_adopted), AA510 (LeviathanForCausalLM): the key was dropped without a word."""
    with pytest.raises(UserError, match=rf"^{who.replace('.', '[.]')}: device_map names '{key}' \(the model's modules "
                                        rf"near it: {near}.*\), no module or tensor of the model, which transformers' "
                                        rf"loader would drop without a word; correct the name, or remove the key$"):
        load(saves / name, device_map=device_map)


def test_keys_naming_a_module_or_a_tensor_are_taken_beside_the_whole_model():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2)))
    for device_map in ({"": "cpu", "1.0": "cpu"}, {"0": "cpu", "1": "cpu", "1.1.weight": "cpu"}):
        devices.check_map_covers(device_map, lambda: model, "api")
    with pytest.raises(UserError, match=r"^api: device_map names '1\.2' \(the model's modules near it: '1\.\d'"):
        devices.check_map_covers({"": "cpu", "1.2": "cpu"}, lambda: model, "api")
