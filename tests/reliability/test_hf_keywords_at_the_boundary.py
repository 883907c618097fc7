"""The transformers side's keywords and folders are checked at leviathan's boundary, in one line naming the keyword (or
folder) and the fix, not handed to transformers or huggingface_hub raw (issue 30 round 25; round 24 closed the kind
for ``config=`` and the config's settings): ``load_adopted`` with ``subfolder=`` (Y156), ``attn_implementation=``
(Y157) or ``state_dict=`` (Y159), and ``LeviathanForCausalLM.from_pretrained`` with the last two; ``bake_adopted``
with ``is_main_process=False`` (Y170) or ``variant=`` (Y173, whose model card's load line then failed);
``to_plain_llama(max_shard_size='1B')`` (Y191); ``export_for_harness`` naming lm-eval's ``--keep-export`` instead of
its own ``overwrite=`` (Y622) and taking a tokenizer of more ids than the model has (Y627); ``verify_export`` of a
folder that is no export (Y626); ``write_hf_tokenizer`` into a folder that is not there (Y629).
"""

from __future__ import annotations

import json

import pytest

transformers = pytest.importorskip("transformers")

from leviathan import CausalLM, ModelConfig  # noqa: E402
from leviathan.data.tokenizer import load_tokenizer  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.eval.hf_tokenizer import write_hf_tokenizer  # noqa: E402
from leviathan.eval.lm_export import export_for_harness, verify_export  # noqa: E402
from leviathan.hf import adopt, bake_adopted, load_adopted  # noqa: E402
from leviathan.hf.export import to_plain_llama  # noqa: E402

pytestmark = pytest.mark.reliability

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
LLAMA = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, bos_token_id=1, eos_token_id=2)


def _one_line(error: pytest.ExceptionInfo) -> None:
    assert "; " in str(error.value) and "\n" not in str(error.value)


@pytest.fixture(scope="module")
def adopted_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adopted") / "m"
    adopt(transformers.LlamaConfig(**LLAMA), **GEN).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("given, named", [
    (dict(subfolder="nope"), r"subfolder='nope' is not taken: .*pass the subfolder itself: load_adopted\('.*m/nope'\)"),
    (dict(attn_implementation="nope"), r"attn_implementation='nope' is no attention implementation .*'eager'"),
    (dict(state_dict={}), r"state_dict= is not taken with a folder: .*model\.load_state_dict\(state_dict\)"),
])
def test_load_adopted_names_from_pretrained_options_it_cannot_honour(adopted_folder, given, named):
    """Y156: transformers' "no file named model.safetensors ... in directory" naming the parent; Y157, Y159: its raw
    ValueErrors."""
    with pytest.raises(UserError, match=named) as e:
        load_adopted(adopted_folder, **given)
    _one_line(e)


def test_load_adopted_still_takes_a_known_attention(adopted_folder):
    assert load_adopted(adopted_folder, attn_implementation="eager").config._attn_implementation == "eager"


@pytest.mark.parametrize("given, named", [
    (dict(attn_implementation="nope"), r"^LeviathanForCausalLM\.from_pretrained: attn_implementation='nope' is no "),
    (dict(state_dict={}), r"^LeviathanForCausalLM\.from_pretrained: state_dict= is not taken with a folder"),
])
def test_the_native_loader_names_the_same_options(tmp_path, given, named):
    """Y157's and Y159's kind in ``LeviathanForCausalLM.from_pretrained``: the same raw ValueErrors."""
    from leviathan.hf import LeviathanForCausalLM
    from leviathan.hf.export import to_hf

    folder = to_hf(_native(), tmp_path / "ex")
    with pytest.raises(UserError, match=named) as e:
        LeviathanForCausalLM.from_pretrained(folder, **given)
    _one_line(e)


@pytest.mark.parametrize("given, named", [
    (dict(is_main_process=False), r"is_main_process=False would write no model .*leave is_main_process out"),  # Y170
    (dict(variant="v1"), r"variant='v1' is not taken: .*from_pretrained\(folder\).*leave variant out"),  # Y173
])
def test_bake_adopted_refuses_save_options_its_folder_cannot_honour(tmp_path, given, named):
    model = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    with pytest.raises(UserError, match=named) as e:
        bake_adopted(model, tmp_path / "bk", **given)
    _one_line(e)
    assert not (tmp_path / "bk").exists()


def _native(vocab_size: int = 300) -> CausalLM:
    return CausalLM(ModelConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                max_position_embeddings=64))


@pytest.mark.parametrize("size", ["1B", "5GiB"])
def test_a_shard_size_huggingface_hub_cannot_read_is_named(tmp_path, size):
    """Y191: huggingface_hub's raw "Unit '1B' not supported", after leviathan's own check had passed it."""
    with pytest.raises(UserError, match=f"max_shard_size must be a size above zero.*got '{size}'; write it with a "
                                        f"unit of KB, MB, GB or TB"):
        to_plain_llama(_native(), tmp_path / "pl", max_shard_size=size)
    assert not (tmp_path / "pl").exists()


@pytest.fixture(scope="module")
def tokenizer(data):
    return load_tokenizer(data)  # the suite's prepared folder's BPE (tests/reliability/conftest.py)


def test_export_for_harness_names_its_own_keyword(tokenizer, tmp_path):
    """Y622: the refusal said "--keep-export (keep_export=True) would delete ...", a flag this function lacks."""
    corpus = tmp_path / "corp"
    corpus.mkdir()
    (corpus / "p01.txt").write_text("mine")
    with pytest.raises(UserError, match=r"^overwrite=True would delete .*corp") as e:
        export_for_harness(_native(tokenizer.vocab_size), tokenizer, corpus)
    assert "keep" not in str(e.value)
    assert (corpus / "p01.txt").read_text() == "mine"


def test_export_for_harness_refuses_a_tokenizer_of_more_ids_than_the_model(tmp_path):
    """Y627: o200k's 200,019 ids written beside a 300-id model without a word (to_hf refuses the pair, W670)."""
    with pytest.raises(UserError, match=r"export_for_harness: tokenizer: 'o200k_base' gives 200,019 ids, but the "
                                        r"model's vocab_size is 300"):
        export_for_harness(_native(), load_tokenizer("o200k_base"), tmp_path / "h2")
    assert not (tmp_path / "h2").exists()


def test_verify_export_of_a_folder_that_is_no_export_says_so(tokenizer, tmp_path):
    """Y626: transformers' "Couldn't instantiate the backend tokenizer ... You need to have sentencepiece or tiktoken
    installed", a wrong cause for a folder of texts."""
    (tmp_path / "p01.txt").write_text("text")
    with pytest.raises(UserError, match=r"hf_dir '.*' is no export of a model \(it has no config\.json and no "
                                        r"tokenizer\.json\); pass the folder export_for_harness wrote"):
        verify_export(_native(tokenizer.vocab_size), tokenizer, tmp_path)


def test_write_hf_tokenizer_makes_a_folder_that_is_not_there(tokenizer, tmp_path):
    """Y629: a raw FileNotFoundError naming tokenizer.json."""
    write_hf_tokenizer(tokenizer, tmp_path / "a" / "t2", 64)
    assert json.loads((tmp_path / "a" / "t2" / "tokenizer_config.json").read_text())["model_max_length"] == 64
    assert transformers.AutoTokenizer.from_pretrained(str(tmp_path / "a" / "t2")).encode("hi")
