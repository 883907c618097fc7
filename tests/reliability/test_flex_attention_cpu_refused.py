"""What torch's FlexAttention kernel on the CPU aborts or fails on is refused in one line before it runs (issue 30
round 35): a 4-D mask aborted the process (SIGABRT, exit 134, no Python line; AI380, AI400), also after a cache
(AI403); generate with a left-padded prompt ended in torch inductor's CppCompileError at its second token (AI402).
The cases run in one real process (the unfixed ones kill it); what runs under flex on the CPU (no mask, a 2-D mask,
no_grad) is run by test_hf_forward_inputs_and_attention_held (a flex forward compiles a kernel: a minute of one core).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.reliability]

SCRIPT = textwrap.dedent("""
    import json, warnings, torch, transformers
    warnings.filterwarnings("ignore")
    from transformers import DynamicCache
    from leviathan.errors import UserError
    from leviathan.hf import adopt, load_adopted
    V = 300
    cfg = transformers.Qwen2Config(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    A = adopt(cfg, seed_dim=8, modes=2, knots=8, rank=4).eval()
    torch.set_grad_enabled(False)
    x = torch.randint(0, V, (2, 9), generator=torch.Generator().manual_seed(1))
    left = torch.tensor([[0] * 4 + [1] * 5, [1] * 9])
    def filled(mask=None):  # under sdpa: a flex forward compiles a kernel (a minute of one core)
        c = DynamicCache()
        A.set_attn_implementation("sdpa")
        A(x[:, :5], past_key_values=c, use_cache=True, attention_mask=None if mask is None else mask[:, :5])
        A.set_attn_implementation("flex_attention")
        return c
    A.set_attn_implementation("flex_attention")
    cases = {
        "4d": lambda: A(x, attention_mask=torch.ones(2, 1, 9, 9, dtype=torch.bool)),  # AI380, AI400
        "4d-cache": lambda: A(x[:, 5:], past_key_values=filled(), attention_mask=torch.ones(2, 1, 4, 9, dtype=torch.bool)),
        "2d-padded-cache": lambda: A(x[:, 5:], past_key_values=filled(left), attention_mask=left),
        "generate-left-padded": lambda: A.generate(x, max_new_tokens=2, attention_mask=left),  # AI402
    }
    out = {}
    for name, run in cases.items():
        try:
            run()
            out[name] = "ran"
        except UserError as e:
            out[name] = str(e)
    print(json.dumps(out))
""")


def test_what_the_cpu_flex_kernel_aborts_on_is_refused_in_one_line():
    from transformers.utils import is_torch_flex_attn_available

    if not is_torch_flex_attn_available():
        pytest.skip("this torch has no flex_attention")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for name, line in out.items():
        assert line.startswith("LeviathanQwen2ForCausalLM.") and "'flex_attention' on the CPU" in line, (name, line)
        assert "set_attn_implementation('sdpa')" in line and "\n" not in line
    assert "4-D attention_mask" in out["4d"] and "4-D attention_mask" in out["4d-cache"]
    assert "padded attention_mask" in out["2d-padded-cache"]
    assert ".generate:" in out["generate-left-padded"]
