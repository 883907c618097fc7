"""A path given where a tokenizer object is expected is refused at the boundary with the fix, load it first (issue 30
round 23, U510): ``evaluate_model(m, 'data', 'arc_easy')`` took the path as the name of a built-in encoding and ended,
after building the tasks, in "cannot write a tokenizer.json for 'data': it is neither a tokenizer.json-based tokenizer
nor a known built-in encoding", with no fix, where ``to_hf`` said "load it first" for the same mistake (U48).
``check_tokenizer_fits`` (``to_hf``, ``to_plain_llama``, ``bake_adopted``), ``export_for_harness`` and
``evaluate_model`` share one check, ``hf.export.refuse_tokenizer_path``.
"""

from __future__ import annotations

import pytest

from leviathan.errors import ArgumentTypeError, UserError
from leviathan.model.llama import CausalLM

pytestmark = pytest.mark.reliability

LOAD_FIRST = (r"tokenizer= takes a tokenizer object, not the path '.*data': load it first, e\.g\. "
              r".*load_tokenizer\(path\)")


@pytest.fixture
def model(tiny_model_config):
    return CausalLM(tiny_model_config())


def test_evaluate_model_refuses_a_path_as_the_tokenizer(model, data):
    from leviathan.eval.harness import evaluate_model

    with pytest.raises(ArgumentTypeError, match="evaluate_model: " + LOAD_FIRST) as caught:
        evaluate_model(model, str(data), "arc_easy", limit=2)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, UserError)


def test_export_for_harness_refuses_a_path_and_writes_nothing(model, data, tmp_path):
    from leviathan.eval.lm_export import export_for_harness

    with pytest.raises(ArgumentTypeError, match="export_for_harness: " + LOAD_FIRST):
        export_for_harness(model, data, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_to_hf_keeps_its_words_for_a_path(model, data, tmp_path):
    from leviathan.hf.export import to_hf

    with pytest.raises(TypeError, match="to_hf: " + LOAD_FIRST):
        to_hf(model, tmp_path / "f", tokenizer=str(data))
    assert not (tmp_path / "f").exists()


def test_the_tokenizer_writer_names_the_fix_for_what_it_cannot_write(tmp_path):
    from leviathan.eval.hf_tokenizer import write_hf_tokenizer

    with pytest.raises(UserError, match=r"cannot write a tokenizer.json for None: .*; pass the model's tokenizer, "
                                        r"loaded with leviathan.data.tokenizer.load_tokenizer\(RUN_OR_DATA\)"):
        write_hf_tokenizer(None, tmp_path)
