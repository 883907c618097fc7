"""``AutoModelForCausalLM.from_pretrained`` of an export whose config.json was edited (issue 30 round 15, A66): from
``embedding: leviathan`` to ``dense_tied`` it loaded with the generator's six tensors dropped as "unexpected" (a line
of transformers' load report that "can be ignored") and the input table tied to the head: a different model, no
error. The model class's from_pretrained now runs the weight-name check eval runs (``eval.weight_names``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_from_pretrained_refuses_weights_its_edited_config_does_not_describe(exported, tmp_path):
    import leviathan.hf  # noqa: F401  (registers the Auto classes)
    from transformers import AutoModelForCausalLM

    from leviathan.errors import UserError

    edited = Path(shutil.copytree(exported, tmp_path / "D"))
    config = json.loads((edited / "config.json").read_text())
    assert config["embedding"] == "leviathan"
    (edited / "config.json").write_text(json.dumps({**config, "embedding": "dense_tied"}))
    with pytest.raises(UserError, match=r"are not the model its config\.json describes: .*which would be dropped"):
        AutoModelForCausalLM.from_pretrained(str(edited))
    assert AutoModelForCausalLM.from_pretrained(str(exported)) is not None  # the export as written loads
