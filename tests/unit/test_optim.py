"""Optimizer parameter groups, the lr schedule and the batch geometry of RunConfig."""

import math

import pytest

from leviathan import CausalLM
from leviathan.config import ConfigError
from leviathan.errors import UserError
from leviathan.presets import preset
from leviathan.run_config import RunConfig, build_run_config
from leviathan.train.optim import build_optimizer, param_groups
from leviathan.train.schedule import lr_at


@pytest.mark.parametrize("embedding", ["dense_tied", "dense_untied", "leviathan", "factorized", "compositional"])
def test_groups_cover_every_parameter_once(embedding):
    model = CausalLM(preset("cpu-tiny", vocab_size=64, embedding=embedding, num_hidden_layers=1))
    decay, no_decay = param_groups(model, 0.1)
    ids = [id(p) for p in decay["params"] + no_decay["params"]]
    assert len(ids) == len(set(ids)) == len({id(p) for p in model.parameters()})
    # every input-side parameter (generator codebooks, LN, splines; tied table) is undecayed
    assert all(n.startswith("model.embed_tokens.") or p.ndim < 2
               for n, p in zip(no_decay["names"], no_decay["params"]))
    assert not any(n.startswith("model.embed_tokens.") for n in decay["names"])
    assert all(p.ndim >= 2 for p in decay["params"])
    assert any("norm" in n for n in no_decay["names"])
    if embedding == "dense_tied":
        assert "lm_head.weight" not in decay["names"]  # the tied head is the input table
    else:
        assert "lm_head.weight" in decay["names"]
    if embedding == "leviathan":
        assert {"model.embed_tokens.codebooks", "model.embed_tokens.ln_weight",
                "model.embed_tokens.spline_coeff"} <= set(no_decay["names"])
    opt = build_optimizer(model, RunConfig(max_steps=1).optim)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.1, 0.0]


def test_schedule_warmup_cosine_floor():
    lr, warm, total, floor = 1.0, 4, 14, 0.1
    values = [lr_at(s, lr, warm, total, floor) for s in range(total)]
    assert values[:4] == [0.25, 0.5, 0.75, 1.0]
    assert values[-1] == pytest.approx(floor)
    assert all(a >= b for a, b in zip(values[3:], values[4:]))
    mid = lr_at(4 + 9 // 2, lr, warm, total, floor)  # halfway through the decay (progress 4/9)
    assert mid == pytest.approx(floor + (lr - floor) * 0.5 * (1 + math.cos(math.pi * 4 / 9)))
    assert lr_at(0, lr, 0, 10, 0.0) == 1.0


def test_grad_accum_and_message():
    cfg = build_run_config({"model": {"preset": "cpu-tiny", "vocab_size": 64}, "data": {"seq_len": 64},
                            "micro_batch_size": 4, "batch_tokens": 1024, "max_steps": 1}, check_data=False)
    assert cfg.grad_accum_steps(1) == 4 and cfg.grad_accum_steps(2) == 2 and cfg.grad_accum_steps(4) == 1
    with pytest.raises(ConfigError, match=r"= 2048, .*use batch_tokens=2048, or micro_batch_size one of 1, 2$"):
        cfg.grad_accum_steps(8)  # 64 x 4 x 8 = 2048 > 1024
    cfg2 = build_run_config({"model": {"preset": "cpu-tiny", "vocab_size": 64}, "data": {"seq_len": 64},
                             "micro_batch_size": 4, "batch_tokens": 1000, "max_steps": 1}, check_data=False)
    with pytest.raises(ConfigError, match=r"use batch_tokens=768 or batch_tokens=1024"):
        cfg2.grad_accum_steps(1)
    cfg3 = build_run_config({"model": {"preset": "cpu-tiny", "vocab_size": 64}, "data": {"seq_len": 64},
                             "batch_tokens": 1024, "max_tokens": 5000}, check_data=False)
    assert cfg3.total_steps == 4


def test_head_and_input_groups_for_the_ablations():
    """head_weight_decay / input_lr_mult split the untied head and the input side into their own groups,
    and set_lr applies each group's multiplier."""
    from leviathan.run_config import OptimConfig
    from leviathan.train.optim import group_weight_decay
    from leviathan.train.schedule import set_lr

    model = CausalLM(preset("cpu-tiny", vocab_size=64, embedding="leviathan", num_hidden_layers=1))
    groups = {g["name"]: g for g in param_groups(model, 0.1, head_weight_decay=0.0, input_lr_mult=3.0)}
    assert set(groups) == {"decay", "no_decay", "head", "input"}
    assert groups["head"]["names"] == ["lm_head.weight"] and groups["head"]["weight_decay"] == 0.0
    assert groups["input"]["names"] and all(n.startswith("model.embed_tokens.") for n in groups["input"]["names"])
    assert groups["input"]["lr_mult"] == 3.0 and groups["input"]["weight_decay"] == 0.0
    assert not any(n.startswith("model.embed_tokens.") or n == "lm_head.weight"
                   for g in ("decay", "no_decay") for n in groups[g]["names"])
    cfg = OptimConfig(lr=1e-3, head_weight_decay=0.0, input_lr_mult=3.0)
    opt = build_optimizer(model, cfg)
    set_lr(opt, 2e-3)
    lrs = {g["name"]: g["lr"] for g in opt.param_groups}
    assert lrs == {"decay": 2e-3, "no_decay": 2e-3, "head": 2e-3, "input": pytest.approx(6e-3)}
    for bad in (float("nan"), float("inf"), -1e-3, "2e-3", True):  # a NaN was set on every group without a word
        with pytest.raises(UserError, match=r"set_lr: value: .*; pass the learning rate lr_at gives"):
            set_lr(opt, bad)
    assert {g["name"]: g["lr"] for g in opt.param_groups} == lrs  # nothing set by a refused value
    set_lr(opt, 0.0)  # the schedule's floor may be 0
    assert group_weight_decay(cfg, "head") == 0.0 and group_weight_decay(cfg, "decay") == 0.1
    # a tied model has no separate head: the option changes nothing there
    tied = CausalLM(preset("cpu-tiny", vocab_size=64, embedding="dense_tied", num_hidden_layers=1))
    assert [g["name"] for g in param_groups(tied, 0.1, head_weight_decay=0.0)] == ["decay", "no_decay"]
    with pytest.raises(ConfigError, match="input_lr_mult"):
        OptimConfig(input_lr_mult=0.0)
