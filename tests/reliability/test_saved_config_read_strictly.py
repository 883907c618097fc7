"""A saved folder's config.json is read strictly by leviathan before transformers builds its config (issue 30 round
27): a key given twice was taken as "the last one wins", so a second ``leviathan_generator`` holding ``rank`` alone
was blamed on its missing ``vocab_size`` with a Python internal, ``<class 'inspect._empty'>`` (S89); and
``vocab_size: 300.0`` ended ``load_adopted`` in huggingface_hub's raw StrictDataclassFieldValidationError (S90). Both
are now one line naming config.json and the key (``json_text.no_repeats``, ``config_file.saved_config``), and so are
their kind in ``LeviathanForCausalLM.from_pretrained`` / ``LeviathanConfig.from_pretrained`` and a generator setting
config.json lacks.
"""

from __future__ import annotations

import json
import shutil

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, load_adopted  # noqa: E402
from leviathan.json_text import loads, no_repeats  # noqa: E402
from test_hf_keywords_at_the_boundary import _one_line, adopted_folder  # noqa: E402,F401  (a fixture)
from test_load_keywords_held_to_their_rules import export_folder  # noqa: E402,F401  (a fixture)

pytestmark = pytest.mark.reliability


def _copy(folder, tmp_path, edit) -> str:
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    text = (copy / "config.json").read_text()
    (copy / "config.json").write_text(edit(text))
    return str(copy)


def _with(key, value):
    return lambda text: json.dumps({**json.loads(text), key: value})


def _twice(key, value):
    return lambda text: text.rstrip().rstrip("}") + f", {json.dumps(key)}: {json.dumps(value)}}}"


def test_a_key_given_twice_is_refused_by_name():
    with pytest.raises(ValueError, match="key 'a' appears twice"):
        loads('{"a": 1, "b": {"a": 2}, "a": 3}', object_pairs_hook=no_repeats)
    assert loads('{"a": 1, "b": {"a": 2}}', object_pairs_hook=no_repeats) == {"a": 1, "b": {"a": 2}}


def test_load_adopted_names_a_key_given_twice(adopted_folder, tmp_path):
    """S89."""
    copy = _copy(adopted_folder, tmp_path, _twice("leviathan_generator", {"rank": 8}))
    with pytest.raises(UserError, match=r"config\.json' is not readable JSON \(key 'leviathan_generator' appears "
                                        r"twice, .*\); restore it from a copy") as e:
        load_adopted(copy)
    _one_line(e)


def test_load_adopted_names_a_size_written_as_a_float(adopted_folder, tmp_path):
    """S90."""
    copy = _copy(adopted_folder, tmp_path, _with("vocab_size", 300.0))
    with pytest.raises(UserError, match=r"config\.json': vocab_size is 300\.0, which transformers refuses \(.*expected "
                                        r"int, got float\); config\.json was edited: write vocab_size") as e:
        load_adopted(copy)
    _one_line(e)


def test_load_adopted_names_a_generator_setting_config_json_lacks(adopted_folder, tmp_path):
    """S89's second half: ``<class 'inspect._empty'>`` for the missing setting."""
    copy = _copy(adopted_folder, tmp_path, _with("leviathan_generator", {"rank": 8}))
    with pytest.raises(UserError, match=r"leviathan_generator lacks vocab_size, hidden_size, which adopt writes") as e:
        load_adopted(copy)
    assert "inspect" not in str(e.value)


@pytest.mark.parametrize("load", [LeviathanForCausalLM.from_pretrained, LeviathanConfig.from_pretrained])
@pytest.mark.parametrize("edit, named", [
    (_twice("vocab_size", 8), r"config\.json' is not readable JSON \(key 'vocab_size' appears twice"),
    (_with("vocab_size", 300.0), r"config\.json': model\.vocab_size must be a positive integer, got 300\.0 "
                                 r"\(config\.json was edited or damaged\); restore it from a copy"),
])
def test_the_native_loaders_name_the_file_too(export_folder, tmp_path, load, edit, named):
    """S89's and S90's kind in the native side's loaders: the second vocab_size was taken; 300.0 named no file. The
    export's marker is taken out (a save_pretrained folder): with it, the edit is refused as a file changed since."""
    copy = _copy(export_folder, tmp_path, edit)
    (tmp_path / "copy" / "leviathan_output.json").unlink()
    with pytest.raises(UserError, match=named) as e:
        load(copy)
    _one_line(e)
