"""``save_pretrained`` arguments a whole save cannot honour, and ``adopt``'s fit inputs that are no counts (issue 30
round 20). ``save_pretrained(push_to_hub=True)`` pushed the hidden temporary folder, its name the repo id (M10);
``save_pretrained(state_dict={})`` wrote a folder that looked like a save and loaded nowhere (M8); a
``Fit.frequency`` on the meta device was torch's NotImplementedError (M323); ``Fit(buckets=400)`` of 300 ids gave 91
buckets without a word (M324b). Each is one UserError, nothing written."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                        num_attention_heads=4, max_position_embeddings=64))


def _native():
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf.export import from_native

    return from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                            max_position_embeddings=64)))


def test_save_pretrained_refuses_push_to_hub_and_a_partial_state_dict(tmp_path):
    from leviathan.hf import adopt, bake_adopted, load_adopted

    adopted = adopt(_llama(), seed_dim=8, modes=2, knots=8, rank=4)
    for model in (adopted, _native()):
        with pytest.raises(UserError, match=r"push_to_hub=True\) is not supported .*upload_folder"):
            model.save_pretrained(tmp_path / "hub", push_to_hub=True)
        with pytest.raises(UserError, match=r"state_dict lacks \d+ of the model's tensors .*full state_dict"):
            model.save_pretrained(tmp_path / "partial", state_dict={})
    with pytest.raises(UserError, match=r"push_to_hub=True\) is not supported"):  # bake_adopted passes it on
        bake_adopted(adopted, tmp_path / "baked", push_to_hub=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    adopted.save_pretrained(tmp_path / "full", state_dict=adopted.state_dict())  # the model's own: saved
    assert load_adopted(tmp_path / "full") is not None


@pytest.mark.parametrize("frequency, buckets, said", [
    (torch.ones(300, device="meta"), 5, r"Fit\.frequency is a tensor on the meta device"),
    (np.arange(300), 400, r"Fit\.buckets=400 is more than the 300 ids of the table")])
def test_adopt_refuses_a_frequency_it_cannot_use(frequency, buckets, said):
    from leviathan.hf import adopt
    from leviathan.hf.adoption_fit import Fit

    with pytest.raises(UserError, match=said):
        adopt(_llama(), fit=Fit(steps=2, frequency=frequency, buckets=buckets), seed_dim=8, modes=2, knots=8, rank=4)


def test_save_pretrained_refuses_a_state_dict_with_tensors_the_model_has_no_place_for(tmp_path):
    """Round 21, P578: ``save_pretrained(dir, state_dict={..., 'junk.weight': ...})`` saved without a word a folder
    its own loader then refused blaming config.json. Refused at the save, nothing written; the file's own tensors
    (the adopted model's baked table among them) are still a state_dict it saves."""
    from safetensors.torch import load_file

    from leviathan.hf import adopt, bake_adopted, load_adopted, to_original

    adopted = adopt(_llama(), seed_dim=8, modes=2, knots=8, rank=4)
    for model in (adopted, _native()):
        junk = {**model.state_dict(), "junk.weight": torch.zeros(3)}
        with pytest.raises(UserError, match=r"state_dict holds 1 tensor\(s\) the model has no place for "
                                            r"\(junk\.weight\).*nothing was written"):
            model.save_pretrained(tmp_path / "junk", state_dict=junk)
    plain = {**to_original(adopted).state_dict(), "junk.weight": torch.zeros(3)}
    with pytest.raises(UserError, match=r"has no place for \(junk\.weight\)"):
        bake_adopted(adopted, tmp_path / "baked", state_dict=plain)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    adopted.save_pretrained(tmp_path / "a")
    saved = load_file(tmp_path / "a" / "model.safetensors")  # the generator's tensors and the baked table
    load_adopted(tmp_path / "a").save_pretrained(tmp_path / "b", state_dict=saved)
    assert load_adopted(tmp_path / "b") is not None


@pytest.mark.parametrize("fit_args", [
    {"frequency": torch.arange(1, 301).to_sparse()}, {"frequency": torch.arange(1, 301).float().to_sparse()},
    {"text": torch.tensor([[1, 2, 3, 4]]).to_sparse()}, {"text": torch.tensor([[1, 2, 3, 4]]).to_sparse_csr()}])
def test_adopt_takes_sparse_counts_and_ids_as_their_values(fit_args):
    """Round 21, P581: ``Fit(frequency=counts.to_sparse())`` was torch's "can't convert Sparse layout tensor to
    numpy" traceback (a sparse text its "Could not run 'aten::min'"): a sparse tensor is the same values, fitted as
    its dense form is."""
    from leviathan.hf import adopt
    from leviathan.hf.adoption_fit import Fit

    dense = {k: v.to_dense() for k, v in fit_args.items()}
    reports = []
    for given in (fit_args, dense):
        torch.manual_seed(0)  # the same table twice
        reports.append(adopt(_llama(), fit=Fit(steps=2, **given), seed_dim=8, modes=2, knots=8, rank=4).leviathan_fit)
    assert reports[0] == reports[1]


@pytest.mark.parametrize("kwargs, said", [
    ({"max_shard_size": -5}, r"max_shard_size must be a size above zero, .* got -5"),
    ({"max_shard_size": "0KB"}, r"max_shard_size must be a size above zero"),
    ({"max_shard_size": True}, r"max_shard_size must be a size above zero, .* got True"),
    ({"variant": "../x"}, r"variant must be a plain name such as 'fp16' .*got '\.\./x'"),
    ({"variant": ""}, r"variant must be a plain name"),
    ({"variant": 5}, r"variant must be a plain name .*got 5")])
def test_every_save_path_refuses_a_shard_size_below_one_byte_and_a_variant_that_is_a_path(tmp_path, kwargs, said):
    """Round 22, S140, S420, S425: ``bake_adopted``, an adopted and a ``from_native`` model's ``save_pretrained`` with
    ``max_shard_size=-5`` wrote one-tensor shards without a word (``to_hf`` refuses it since round 15, B248); S421:
    ``variant='../x'`` was a raw FileNotFoundError. One UserError each, nothing written."""
    from leviathan.hf import adopt, bake_adopted

    adopted = adopt(_llama(), seed_dim=8, modes=2, knots=8, rank=4)
    saves = [lambda: adopted.save_pretrained(tmp_path / "a", **kwargs),
             lambda: _native().save_pretrained(tmp_path / "n", **kwargs),
             lambda: bake_adopted(adopted, tmp_path / "b", **kwargs)]
    for save in saves:
        with pytest.raises(UserError, match=said):
            save()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    adopted.save_pretrained(tmp_path / "fine", max_shard_size="20KB", variant="fp32")  # a real size and name: saved
    assert (tmp_path / "fine" / "model.safetensors.index.fp32.json").is_file()


def _staged(files, stale=()):
    from leviathan.experiments.staged import staged_output

    with staged_output(".", "report", files, stale):
        pass


def _of(module: str, name: str):
    """``module.name``, imported when the case runs."""
    import importlib

    return getattr(importlib.import_module(module), name)


def _export(name: str):
    return _of("leviathan.hf.export", name)


@pytest.mark.parametrize("call, said", [
    (lambda: _of("leviathan.io", "atomic_write_text")("a.txt", 5), r"atomic_write_text: data: expected a str, got int"),
    (lambda: _of("leviathan.io", "atomic_write_bytes")(None, b"x"), r"atomic_write_bytes: path: expected a path .*got "
                                                                    r"None"),
    (lambda: _of("leviathan.io", "atomic_write_together")([("a.txt", "x")]), r"files: expected a dict"),
    (lambda: _of("leviathan.io", "atomic_write_together")({"a.txt": "x"}, remove="b.txt"),
     r"remove: expected a list of paths, got 'b.txt'"),
    (lambda: _of("leviathan.io", "check_writable")(None), r"check_writable: path: expected a path"),
    (lambda: _staged("*.png"), r"staged_output: files: expected a list of file names or globs, got '\*\.png'"),
    (lambda: _staged(["*.png"], "*.png"), r"staged_output: stale: expected a list"),
    (lambda: _of("leviathan.hf.save_folder", "save_whole")(5, "s"), r"save_whole: save: expected a function"),
    (lambda: _export("plain_llama_config")(_native()), r"plain_llama_config: cfg: expected a leviathan ModelConfig"),
    (lambda: _export("plain_llama_state_dict")(_native().config), r"plain_llama_state_dict: model: expected a native"),
    (lambda: _export("to_plain_llama")(_native(), "p", also_write=5), r"to_plain_llama: also_write: expected a "
                                                                      r"function"),
    (lambda: _export("check_tokenizer_fits")(None, "300", "to_hf"), r"to_hf: vocab_size: expected a whole number"),
    (lambda: _of("leviathan.data.tokenizer", "load_tokenizer")("o200k_base").save_owned(5),
     r"Tokenizer\.save_owned: expected a path .*got 5")])
def test_the_save_helpers_name_an_argument_they_cannot_take(tmp_path, monkeypatch, call, said):
    """Round 22 (the kind behind S421): the public save helpers took their arguments unchecked, ``atomic_write_text(p,
    5)`` an AttributeError, ``staged_output(out, verb, '*.png')`` a glob read letter by letter, ``save_whole(5, d)``
    and ``to_plain_llama(also_write=5)`` "'int' object is not callable", ``plain_llama_config(model)`` an
    AttributeError, ``Tokenizer.save_owned(5)`` os.fspath's TypeError. Each is one UserError naming the argument,
    nothing written."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=said):
        call()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_save_pretrained_refuses_a_switch_that_is_no_bool(tmp_path):
    """Round 22 (bool is not text): ``save_pretrained(D, is_main_process='no')`` was read as true and saved; the
    switches of every save path are True or False (``value_rules.check_switches``), nothing written."""
    from leviathan.errors import ArgumentTypeError
    from leviathan.hf import adopt, bake_adopted

    adopted = adopt(_llama(), seed_dim=8, modes=2, knots=8, rank=4)
    for save in (lambda: adopted.save_pretrained(tmp_path / "a", is_main_process="no"),
                 lambda: _native().save_pretrained(tmp_path / "n", distributed_checkpoint=1),
                 lambda: bake_adopted(adopted, tmp_path / "b", is_main_process="no")):
        # a UserError (one line at the CLI) that is still a TypeError (errors.ArgumentTypeError)
        with pytest.raises(ArgumentTypeError, match=r"save_pretrained: (is_main_process|distributed_checkpoint) must be True "
                                            r"or False, got ('no'|1)"):
            save()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_save_pretrained_refuses_a_hub_switch_and_token_of_the_wrong_kind(tmp_path):
    """Round 35: ``push_to_hub='yes'`` was read as True (the push line, not the switch's, AI389) and ``token=5`` taken
    without a word (AI330), by both classes and the config's own save; nothing written. A token's text is taken."""
    from leviathan.errors import ArgumentTypeError
    from leviathan.hf import adopt

    adopted, native = adopt(_llama(), seed_dim=8, modes=2, knots=8, rank=4), _native()
    for model in (adopted, native):
        with pytest.raises(ArgumentTypeError, match=r"^save_pretrained: push_to_hub must be True or False, got 'yes'"):
            model.save_pretrained(tmp_path / "p", push_to_hub="yes")
        for save in (model.save_pretrained, model.config.save_pretrained):  # an adopted config: transformers' class
            with pytest.raises(UserError, match=r"^save_pretrained: token must be a Hugging Face token \(its text\), "
                                                r"True .* or None, got 5; pass the token's text"):
                save(tmp_path / "t", token=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    native.save_pretrained(tmp_path / "ok", token="hf_not_used_without_push")


def test_both_classes_saves_name_a_tensor_on_meta_and_an_unsharded_distributed_checkpoint(tmp_path):
    """Round 35: a state_dict tensor on meta (AI335) and the native model on meta (AI556) were safetensors' raw
    "Cannot copy out of meta tensor; no data!"; distributed_checkpoint=True outside FSDP / TP transformers' raw
    ValueError (AI327). One line each in both classes, nothing written."""
    from leviathan.hf import adopt

    for model in (adopt(_llama(), seed_dim=8, modes=2, knots=8, rank=4), _native()):
        state = dict(model.state_dict())
        key = next(k for k in state if k.endswith("norm.weight"))
        state[key] = state[key].to("meta")
        with pytest.raises(UserError, match=rf"save_pretrained: state_dict\['{key}'\] is on the meta device"):
            model.save_pretrained(tmp_path / "s", state_dict=state)
        with pytest.raises(UserError, match=r"distributed_checkpoint=True\) needs a model sharded by FSDP or tensor"):
            model.save_pretrained(tmp_path / "d", distributed_checkpoint=True)
        with pytest.raises(UserError, match=r"save_pretrained: the model's .* is on the meta device"):
            model.to("meta").save_pretrained(tmp_path / "m")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_exports_name_a_model_on_meta(tmp_path):
    """Round 35: from_native, to_native and to_hf of a model on meta were torch's raw "Error(s) in loading
    state_dict ... Cannot copy out of meta tensor" (AI550, AI551, AI555); nothing written."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf.export import from_native, to_hf, to_native

    native = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                  max_position_embeddings=64))
    hf = from_native(native).to("meta")
    native = native.to("meta")
    for call, api in [(lambda: from_native(native), "from_native"), (lambda: to_native(hf), "to_native"),
                      (lambda: to_hf(native, tmp_path / "out"), "to_hf")]:
        with pytest.raises(UserError, match=rf"^{api}: the model is on the meta device .*load it with its weights"):
            call()
    assert not (tmp_path / "out").exists()
