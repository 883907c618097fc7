"""The generator under mixed precision (model/generator.py, "Precision"): under torch.autocast it computes in its
fp32 parameters and returns fp32, as the table it replaces does; a training step of a leviathan model under bf16
autocast runs and its generator gradients are the fp32 step's.

Found on an H200 (scripts/gpu_check.sh, 2026-12-04): every leviathan training step under bf16 autocast (``dtype:
auto`` on CUDA, so `leviathan train device=cuda` by default, the FSDP smoke and the benchmark) ended in
"expected scalar type BFloat16 but found Float" in ``_ModeActivation``'s backward. CPU kernels accept those mixed
dtypes, so on a CPU the defect showed only as the output: bf16, up to 3.4x off in relative terms in places (the
first test fails there without the fix); the second keeps the training step's gradients honest."""

import pytest
import torch

from leviathan.model.generator import LeviathanGenerator


def _generator(**options) -> LeviathanGenerator:
    torch.manual_seed(0)
    g = LeviathanGenerator(1000, 32, seed_dim=16, modes=2, knots=8, rank=8, **options)
    with torch.no_grad():  # away from init, as after some training
        g.codebooks.normal_(0.0, 1.0)
        g.ln_weight.normal_(1.0, 0.3)
    return g


@pytest.mark.parametrize("options", [{}, {"center": True, "norm": True}, {"form": "khronos"}])
def test_under_autocast_the_generator_computes_and_returns_fp32(options):
    g = _generator(**options)
    ids = torch.tensor([[3, 999, 3, 512], [0, 7, 8, 9]])
    want = g(ids)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = g(ids)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_a_leviathan_training_step_under_bf16_autocast_has_the_fp32_generator_gradients():
    from leviathan.model.llama import CausalLM
    from leviathan.presets import preset

    torch.manual_seed(0)
    model = CausalLM(preset("cpu-tiny", embedding="leviathan", vocab_size=512, max_position_embeddings=64))
    block = torch.randint(0, 512, (2, 17), generator=torch.Generator().manual_seed(1))
    x, y = block[:, :-1], block[:, 1:]

    def generator_grads(autocast: bool) -> dict:
        model.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            _, loss = model(x, labels=y)
        loss.backward()
        assert torch.isfinite(loss)
        return {n: p.grad.clone() for n, p in model.named_parameters() if "embed_tokens" in n}

    fp32, mixed = generator_grads(False), generator_grads(True)
    assert fp32.keys() == mixed.keys() and len(fp32) >= 5
    for name, g in fp32.items():  # the body runs in bf16, so its gradient into the generator differs by rounding
        err = float((mixed[name] - g).abs().max() / g.abs().max())
        assert torch.isfinite(mixed[name]).all() and err < 0.1, (name, err)
