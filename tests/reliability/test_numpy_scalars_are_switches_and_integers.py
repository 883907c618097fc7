"""numpy's bool is a switch and numpy's ints are whole numbers at every public boundary, kept as Python's own once
taken; a 1 is still no switch and True no whole number (issue 30 round 29: W157, W766, W767, W770, W779, W768,
W773, W504, W575, W323, all unclear).

Round 28 (fix28b, U19) decided it for ModelConfig and the generator; these boundaries had their own checks and
refused it: ``overwrite=np.True_`` of to_hf / to_plain_llama / bake_adopted / export_for_harness ("overwrite must be
True or False, got np.True_", ``export._atomic_dir``), ``generate(use_cache=np.False_)``, ``adopt(fit=np.True_)``
("got bool"), ``from_native(eos_token_id=np.int64(2))`` ("not a token id"), ``write_hf_tokenizer(model_max_length=
np.int64(64))`` and ``BatchLoader.load_state_dict`` of a state whose format is ``np.int64(1)`` ("its format is
np.int64(1), expected ... format 1"). Each now asks ``value_rules.check_switches`` / ``integers.is_integer``. Found
beside them and fixed: ``logits_to_keep=np.int64(1)`` was read as an index (the axis dropped; LeviathanForCausalLM
and adopted models), a numpy
``max_shard_size`` was refused as no size, ``DataConfig(seq_len=np.int64(32))`` and ``ScheduleConfig(warmup_steps=
...)`` were refused (RunConfig's own sizes took them), LeviathanConfig's ``rope_theta=np.float32(...)`` was "not a
number", and ``evaluate_model``'s ``verify`` / ``log_samples`` took any text as true.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan import CausalLM, ModelConfig  # noqa: E402
from leviathan.errors import ArgumentTypeError, UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, adopt, bake_adopted  # noqa: E402
from leviathan.hf import export as hf_export  # noqa: E402

from test_size_settings_bounded import GEN, SMALL, _llama  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return CausalLM(ModelConfig(**SMALL))


@pytest.fixture(scope="module")
def adopted():
    torch.manual_seed(0)
    return adopt(_llama(), **GEN)


@pytest.fixture(scope="module")
def tokenizer(data):
    from leviathan.data.tokenizer import load_tokenizer

    return load_tokenizer(data)  # the suite's prepared folder's BPE (tests/reliability/conftest.py)


def _writers(model, adopted, tokenizer):
    from leviathan.eval.lm_export import export_for_harness

    return {"to_hf": lambda out, o: hf_export.to_hf(model, out, overwrite=o),
            "to_plain_llama": lambda out, o: hf_export.to_plain_llama(model, out, overwrite=o),
            "bake_adopted": lambda out, o: bake_adopted(adopted, out, overwrite=o),
            "export_for_harness": lambda out, o: export_for_harness(model, tokenizer, out, overwrite=o)}


@pytest.mark.parametrize("writer", ["to_hf", "to_plain_llama", "bake_adopted", "export_for_harness"])
def test_every_writers_overwrite_takes_numpys_bool(model, adopted, tokenizer, tmp_path, writer):
    write = _writers(model, adopted, tokenizer)[writer]
    write(tmp_path / "out", np.False_)  # a new folder
    with pytest.raises(UserError, match="overwrite"):
        write(tmp_path / "out", np.False_)  # false is false: the folder is kept
    write(tmp_path / "out", np.True_)  # replaced
    assert (tmp_path / "out" / "config.json").is_file()
    with pytest.raises(ArgumentTypeError, match=r"overwrite must be True or False, got 1; pass overwrite=True"):
        write(tmp_path / "other", 1)
    assert not (tmp_path / "other").exists()


def test_generate_takes_numpys_bool_as_use_cache(model):
    from leviathan.generation import generate

    greedy = generate(model, [1, 2], 3, temperature=0.0).tolist()
    assert generate(model, [1, 2], 3, temperature=0.0, use_cache=np.False_).tolist() == greedy
    with pytest.raises(ArgumentTypeError, match="use_cache must be True or False, got 1"):
        generate(model, [1, 2], 3, use_cache=1)


def test_adopts_fit_takes_numpys_bool():
    from leviathan.hf.adoption_fit import Fit, as_fit

    assert isinstance(as_fit(np.True_), Fit) and as_fit(np.False_) is None
    with pytest.raises(UserError, match=r"fit must be a leviathan.hf.Fit \(or True\), got int"):
        as_fit(1)


@pytest.mark.parametrize("eos", [np.int64(2), [np.int64(2), np.int32(3)]])
def test_from_native_takes_numpys_ints_as_token_ids_and_saves_plain_ones(model, tmp_path, eos):
    hf = hf_export.from_native(model, eos_token_id=eos)
    hf.save_pretrained(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["eos_token_id"] == ([2, 3] if isinstance(eos, list) else 2)
    with pytest.raises(UserError, match="eos_token_id True is not a token id"):
        hf_export.from_native(model, eos_token_id=True)


def test_write_hf_tokenizer_takes_numpys_int(tokenizer, tmp_path):
    from leviathan.eval.hf_tokenizer import write_hf_tokenizer

    write_hf_tokenizer(tokenizer, tmp_path, model_max_length=np.int64(64))
    assert json.loads((tmp_path / "tokenizer_config.json").read_text())["model_max_length"] == 64


def test_a_loader_state_of_numpys_format_1_is_taken(data):
    from leviathan.data.loader import BatchLoader, TokenDataset

    loader = BatchLoader(TokenDataset(data), seq_len=16, batch_size=2)
    state = loader.state_dict()
    loader.load_state_dict({**state, "format": np.int64(1), "position": np.int64(3)})
    assert loader.position == 3 and type(loader.position) is int
    for fmt in (True, 1.0):
        with pytest.raises(UserError, match=rf"its format is {fmt!r}, expected a dict of format 1"):
            loader.load_state_dict({**state, "format": fmt})


def test_logits_to_keep_and_a_shard_size_take_numpys_ints(model, adopted, tmp_path):
    ids = torch.tensor([[1, 2, 3, 4]])
    for hf in (hf_export.from_native(model), adopted):  # was (1, 300): read as an index, the position axis dropped
        assert hf(ids, logits_to_keep=np.int64(1)).logits.shape == (1, 1, 300)
    adopted.save_pretrained(tmp_path, max_shard_size=np.int64(10**9))
    assert (tmp_path / "model.safetensors").is_file()


def test_run_configs_sizes_and_leviathan_configs_numbers_take_numpys():
    from leviathan.run_config import DataConfig, ScheduleConfig

    data = DataConfig(path="d", seq_len=np.int64(32), shuffle_buffer=np.int64(64))
    assert (type(data.seq_len), type(data.shuffle_buffer)) == (int, int)
    assert type(ScheduleConfig(warmup_steps=np.int64(5)).warmup_steps) is int
    for bad in ({"seq_len": True}, {"seq_len": 32.0}, {"shuffle_buffer": 2.5}):
        with pytest.raises(UserError, match="must be a positive integer"):
            DataConfig(path="d", **bad)
    config = LeviathanConfig(**SMALL, rope_theta=np.float32(10000.0))
    assert json.loads(config.to_json_string())["rope_theta"] == 10000.0


def test_evaluate_models_switches_refuse_text(tmp_path):
    from leviathan.eval.harness import evaluate_model

    for name in ("verify", "log_samples"):
        with pytest.raises(ArgumentTypeError, match=rf"evaluate_model: {name} must be True or False, got 'no'"):
            evaluate_model(None, None, hf_dir=tmp_path, **{name: "no"})
