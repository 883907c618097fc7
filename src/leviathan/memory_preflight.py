"""Training that cannot fit this machine's memory is refused in one line before any model is built.

    check_run_memory([run_config], "the run's model (model.*)", "a smaller model.preset")   # train, demo, sweep
    check_training_memory([params_a, params_b], "--preset paper-1.2b", "a smaller --preset", activations=n)
    check_models_memory([cfg_a, cfg_b], tokens, "--config paper", "a smaller --config")        # the benchmarks

`demo --preset paper-1.2b` on a 23 GB, 2-core machine built the model until the allocator's RuntimeError traceback
under a memory limit (issue 30 round 25, X70), and without one grew to 21 GB until the kernel's out-of-memory killer
ended it, exit 137, nothing said (X71). The estimate: each parameter's fp32 weight, gradient and the two AdamW
moments (16 bytes; models trained at the same time add up), plus the activations one training step keeps for its
backward (``step_activation_bytes``; round 26, P18: `train --config paper-109m` under `ulimit -v 4000000` passed a
parameters-only check and its first step of 32 x 512 tokens met the allocator's traceback). The data is not counted.
It is held against what this process may still take: ``MemAvailable`` of /proc/meminfo and, under ``ulimit -v``
(RLIMIT_AS), the limit less the address space already in use; on a CUDA device, the device's free memory
(``torch.cuda.mem_get_info``, cheap once CUDA is up). Where none is known (not Linux) nothing is refused.
``LEVIATHAN_SKIP_MEMORY_CHECK=1`` skips the check for a user who knows better (swap, memory freed later).
Callers: ``train`` (one process on the CPU), ``demo``, ``sweep`` (the ``--jobs`` largest runs at once) and the
scripts gpu_check.py bench and bench_corpus_softmax.py. A step that still runs out of memory is said in one line by
``out_of_memory`` (the training loop's step).
Footgun: a training run on a GPU is not checked by ``train`` or ``sweep`` (its model is the device's, and torchrun's
ranks share the work); the scripts check a GPU against its free memory.
"""

from __future__ import annotations

import os

from .errors import UserError

BYTES_PER_PARAMETER = 16  # fp32 weight + gradient + AdamW's two moments
SKIP = "LEVIATHAN_SKIP_MEMORY_CHECK"
FLOAT = 4  # bytes of an fp32 activation: the estimate's dtype (autocast's bf16 keeps less: an upper-ish bound)
# fp32 values a decoder layer keeps per token for its backward, as multiples of (hidden, query width, key/value width,
# intermediate): the two norms' inputs and outputs and the residual sums (D), q and k before and after the rotary
# and its rotate_half products, attention's output and its reshaped copy (Dq, Dkv), the MLP's gate, silu, up and
# their product (F); round 26 (P18), measured in ``step_activation_bytes``
LAYER_FLOATS = (10, 6, 6, 4)


# fp32 values a validation forward (no gradients) holds per token, as multiples of (hidden, query width,
# intermediate): the residual stream, its norm and the norm's temporaries (D), q and its rotary products (Dq), the
# MLP's gate, silu and up (F); 4 Dq more when grouped-query heads repeat k and v; round 27 (R9), measured in
# ``eval_activation_bytes``
EVAL_FLOATS = (3, 2, 3)


def _kib_field(path: str, name: str) -> int | None:
    """A ``Name:  N kB`` field of a /proc file, in bytes; None where the file or the field is not there."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_bytes() -> int | None:
    """What this process may still allocate: MemAvailable, and under RLIMIT_AS the limit less the address space in
    use, whichever is smaller; None where neither is known."""
    found = [b for b in [_kib_field("/proc/meminfo", "MemAvailable")] if b is not None]
    try:
        import resource

        soft, unlimited = resource.getrlimit(resource.RLIMIT_AS)[0], resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):  # not a Unix
        soft = unlimited = -1
    used = _kib_field("/proc/self/status", "VmSize")
    if soft != unlimited and used is not None:
        found.append(max(0, soft - used))
    return min(found) if found else None


def step_activation_bytes(model, tokens: int, chunked_loss: bool = True) -> int:
    """Bytes of the activations one forward and backward of ``tokens`` positions (micro batch x seq len) of a model of
    ``model`` (a ModelConfig) holds at its peak, fp32: ``tokens x layers x (10 D + 6 Dq + 6 Dkv + 4 F)`` floats for the
    decoder layers (``LAYER_FLOATS``), 8 D a token for the embedding, the final norm and their gradients, a leviathan
    generator's codebook sum, per-mode projections, spline input and product for each distinct id (``min(tokens,
    b^k) x (d_s (1 + 4 M) + M r)``), and the head of the loss path used: the chunked loss (``model.loss``) keeps dh (tokens, D), the fp32 dW (V, D) and one
    (chunk, V) block; the plain path the (tokens, V) logits, their log-softmax and its gradient (3 tokens x V).
    An upper-ish bound, not a promise: against the peak RSS of real CPU training steps (fp32, torch 2.13, the step's
    RSS peak less the RSS before it and its gradients) of cpu-tiny, cpu-mini and cpu-small (leviathan and dense_tied,
    2,048-16,384 tokens, chunked and plain loss) it measured 0.94-1.10 of the estimate: RSS moves by about 10% from
    one run to the next (the allocator keeps and frees pages in its own time); the optimizer's temporaries come after
    backward has freed the activations and are not added."""
    from .model.loss import chunk_positions

    model = _model_config("step_activation_bytes", model)
    _check_count("step_activation_bytes", "tokens", tokens, 1, "pass the positions of one step (micro batch x seq len)")
    if not isinstance(chunked_loss, bool):
        from .value_rules import check_switches

        check_switches("step_activation_bytes", chunked_loss=chunked_loss)
    D, F, V = model.hidden_size, model.resolved_intermediate_size, model.vocab_size
    q, kv = model.num_attention_heads * model.resolved_head_dim, model.kv_heads * model.resolved_head_dim
    per_layer = sum(n * width for n, width in zip(LAYER_FLOATS, (D, q, kv, F)))
    floats = tokens * (model.num_hidden_layers * per_layer + 8 * D)  # + the embedding, final norm and their gradients
    if model.embedding == "leviathan":
        ds, modes = model.generator_seed_dim, model.generator_modes
        floats += min(tokens, model.id_capacity) * (ds * (1 + 4 * modes) + modes * model.generator_rank)
    if chunked_loss:
        floats += tokens * D + V * D + min(tokens, chunk_positions(V)) * V
    else:
        floats += 3 * tokens * V
    return floats * FLOAT


def eval_activation_bytes(model, tokens: int) -> int:
    """Bytes of the activations one forward without gradients (validation, ``eval``, ``token_losses``) of ``tokens``
    positions (batch x seq len) holds at its peak, fp32: nothing is kept for a backward, so a layer's tensors are
    freed before the next and the count is one layer's, not ``layers`` of them: ``tokens x (3 D + 2 Dq + 3 F)``
    (``EVAL_FLOATS``; + 4 Dq with grouped-query heads, whose k and v are repeated), a leviathan generator's per-id
    values as ``step_activation_bytes`` counts them, and two (chunk, V) blocks of the head (``CausalLM.token_nll``
    scores chunks of positions: the logits and their temporaries). Against the peak RSS of real validation forwards
    (fp32, torch 2.13, one batch of ``token_losses`` less the RSS before it) of dense cpu-tiny and cpu-small-shaped
    models (widths 64-1,024, intermediate 384-4,096, grouped-query heads, 8,192-32,768 tokens of 128) it measured
    0.81-0.99 of the estimate (one shape's RSS moved by 20% from one run to the next), and 0.7 with a leviathan
    generator (its per-id values are counted as a training step keeps them). A validation batch of 1,300 x
    128 tokens of a width-1,024 model met the allocator's traceback under `ulimit -v 6000000` while its training
    step of 1 x 128 passed the check (issue 30 round 27, R9, R11)."""
    from .model.loss import chunk_positions

    model = _model_config("eval_activation_bytes", model)
    _check_count("eval_activation_bytes", "tokens", tokens, 1, "pass the positions of one forward (batch x seq len)")
    D, F, V = model.hidden_size, model.resolved_intermediate_size, model.vocab_size
    q = model.num_attention_heads * model.resolved_head_dim
    repeated = 4 * q if model.kv_heads != model.num_attention_heads else 0
    floats = tokens * (sum(n * width for n, width in zip(EVAL_FLOATS, (D, q, F))) + repeated)
    if model.embedding == "leviathan":
        ds, modes = model.generator_seed_dim, model.generator_modes
        floats += min(tokens, model.id_capacity) * (ds * (1 + 4 * modes) + modes * model.generator_rank)
    return (floats + 2 * min(tokens, chunk_positions(V)) * V) * FLOAT


def validation_tokens(cfg) -> int:
    """Positions of a run config's (RunConfig) largest validation forward: ``eval_batch_size`` (None: the
    micro_batch_size) windows of ``data.seq_len``, no more than ``eval_tokens``. Footgun: with ``eval_tokens`` None
    (the whole split) the split's own size is not read, so a batch larger than the split is counted whole. Anything
    but a RunConfig is one ArgumentTypeError (a preset's name was 'str' object has no attribute, round 28, U572)."""
    from .run_config import RunConfig

    if not isinstance(cfg, RunConfig):
        from .errors import ArgumentTypeError

        raise ArgumentTypeError(f"validation_tokens: cfg must be a RunConfig, got {type(cfg).__name__} {cfg!r:.40}; "
                                f"pass load_run_config(NAME_OR_PATH, overrides)")
    tokens = (cfg.eval_batch_size or cfg.micro_batch_size) * cfg.data.seq_len
    return tokens if cfg.eval_tokens is None else min(tokens, cfg.eval_tokens)


def check_eval_memory(model, tokens: int, what: str, fix: str, device=None) -> None:
    """UserError when one forward without gradients of ``tokens`` positions (``eval_activation_bytes``) of a model
    already held (``model``: its ModelConfig or the model) needs more memory than ``device`` has free
    (``check_training_memory``'s reader and its LEVIATHAN_SKIP_MEMORY_CHECK); ``what`` names the batch, ``fix`` the
    smaller one. The `eval` verb's check (issue 30 round 27, R11: the allocator's traceback, the fix unsaid)."""
    _check_device("check_eval_memory", device)
    if _skipped():
        return
    _check_forward(eval_activation_bytes(model, tokens), tokens, what, fix, device)


def _check_forward(needed: int, tokens: int, what: str, fix: str, device) -> None:
    """The one line of a forward of ``tokens`` positions whose ``needed`` bytes ``device`` has not free."""
    free, where = _free_on(device)
    if free is None or needed <= free:
        return
    raise UserError(f"{what}: scoring {tokens:,} tokens in one forward needs about {needed / 2**30:,.1f} GiB of "
                    f"activations (no gradients), more than the {free / 2**30:,.1f} GiB {where}; nothing was scored; "
                    f"use {fix}, or set {SKIP}=1 to try anyway")


def harness_activation_bytes(config, rows: int, length: int) -> int | None:
    """Bytes one forward without gradients of ``rows`` requests of ``length`` tokens holds at its peak through a
    transformers causal LM of ``config`` (its ``PretrainedConfig``), as lm-evaluation-harness's HFLM scores a batch:
    a layer's values as ``eval_activation_bytes`` counts them (``EVAL_FLOATS``), the attention's scores and their
    softmax (rows x heads x length^2 each: CPU sdpa with a padding mask takes torch's math path), and two (tokens, V)
    blocks, the logits of every position and HFLM's log-softmax of them (no chunking, unlike ``CausalLM.token_nll``).
    fp32, so an upper-ish bound for a bf16 or fp16 load. None where ``config`` lacks a size (not a decoder
    transformers builds from these names): nothing is estimated. Footgun: not measured against RSS as
    ``eval_activation_bytes`` was; a leviathan generator in an HF folder (not the baked export lm-eval scores) is not
    counted."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    D, F, V, heads = (getattr(text, k, None) for k in ("hidden_size", "intermediate_size", "vocab_size",
                                                       "num_attention_heads"))
    if not all(isinstance(n, int) and n > 0 for n in (D, F, V, heads)):
        return None
    q = heads * (getattr(text, "head_dim", None) or D // heads)
    kv = getattr(text, "num_key_value_heads", None) or heads
    tokens = rows * length
    floats = tokens * (sum(n * width for n, width in zip(EVAL_FLOATS, (D, q, F))) + (4 * q if kv != heads else 0))
    return (floats + 2 * rows * heads * length * length + 2 * tokens * V) * FLOAT


def check_harness_memory(config, rows: int, length: int, what: str, fix: str, device=None) -> None:
    """``check_eval_memory``'s rule for lm-evaluation-harness's batch of ``rows`` requests of ``length`` tokens through
    a transformers model of ``config`` (``harness_activation_bytes``): `lm-eval --batch-size 1000` of a width-1,024
    model met the allocator's traceback in transformers' rotate_half under `ulimit -v 6000000`, exit 1 (issue 30
    round 28, T7). Nothing is checked where the estimate is None."""
    _check_device("check_harness_memory", device)
    _check_count("check_harness_memory", "rows", rows, 1, "pass the requests of one forward")
    _check_count("check_harness_memory", "length", length, 1, "pass the tokens of the longest request")
    needed = harness_activation_bytes(config, rows, length)
    if _skipped() or needed is None:
        return
    _check_forward(needed, rows * length, what, fix, device)


def allocator_words(error: BaseException) -> str:
    """The first line of an out-of-memory ``error`` from its "DefaultCPUAllocator" on (the CPU's words start with an
    ``[enforce fail at alloc_cpu.cpp:...]`` prefix), at most 160 characters: what the one-line messages quote."""
    said = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (said[said.find("DefaultCPUAllocator"):] if "DefaultCPUAllocator" in said else said)[:160]


def _model_config(api: str, model):
    """``model`` as the ModelConfig it names: a ModelConfig, or a leviathan ``CausalLM`` (its ``.config``, read for
    free); anything else is one ArgumentTypeError. The parameter is named model but took only a config: the model
    itself and a text were raw AttributeErrors, "'CausalLM' object has no attribute 'hidden_size'" (issue 30 round
    27, S306, S307)."""
    from .errors import ArgumentTypeError
    from .model.config import ModelConfig

    if isinstance(getattr(model, "config", None), ModelConfig) and not isinstance(model, ModelConfig):
        model = model.config  # CausalLM: its resolved config
    if not isinstance(model, ModelConfig):
        raise ArgumentTypeError(f"{api}: model must be a ModelConfig (or leviathan's CausalLM, whose .config is read), "
                                f"got {type(model).__name__} {model!r:.40}; pass run_config.model or model.config")
    return model


def _check_count(api: str, name: str, value, low: int, fix: str) -> None:
    """``value_rules.check_whole`` of a count of the estimate (bytes, tokens, parameters): a negative one was
    subtracted from the need, so ``activations=-10**15`` passed any model (issue 30 round 27, S309)."""
    from .value_rules import check_whole

    check_whole(api, name, value, low, fix=fix)


def _skipped() -> bool:
    """Whether ``LEVIATHAN_SKIP_MEMORY_CHECK`` asks to skip the check: 1 skips, unset, empty or 0 checks; any other
    value is refused, for ``=false`` was read as "skip" and the demo it meant to guard ran into the allocator's
    traceback (issue 30 round 26, P17)."""
    value = os.environ.get(SKIP, "").strip()
    if value not in ("", "0", "1"):
        raise UserError(f"{SKIP}={value!r} is neither 1 (skip the memory check) nor 0 (check); set it to 1 or 0, or "
                        f"unset it")
    return value == "1"


def check_training_memory(parameters: list[int], what: str, fix: str, activations: int = 0, device=None) -> None:
    """UserError when training models of ``parameters`` (each a count; all held at once) plus ``activations`` bytes
    (``step_activation_bytes`` of the steps that run at once) needs more memory than ``available_bytes`` (``device``
    None or a CPU) or a CUDA ``device``'s free memory; ``what`` names the setting that sized them, ``fix`` the
    smaller choice. Another device (mps, ...) is not checked. Each count is a whole number >= 0 (round 27, S309)."""
    if isinstance(parameters, (str, bytes)) or not hasattr(parameters, "__iter__"):
        from .errors import ArgumentTypeError

        raise ArgumentTypeError(f"check_training_memory: parameters must be a list of parameter counts, got "
                                f"{type(parameters).__name__} {parameters!r:.40}; pass e.g. [count_config(cfg).total]")
    parameters = list(parameters)
    for count in parameters:
        _check_count("check_training_memory", "each of parameters", count, 0, "pass each model's parameter count")
    _check_count("check_training_memory", "activations", activations, 0,
                 "pass the bytes of the steps' activations (step_activation_bytes), or 0")
    _check_device("check_training_memory", device)
    if _skipped():
        return
    needed = sum(parameters) * BYTES_PER_PARAMETER + activations
    free, where = _free_on(device)
    if free is None or needed <= free:
        return
    raise UserError(f"{what}: training {' + '.join(f'{p:,}' for p in parameters)} parameters needs at least "
                    f"{needed / 2**30:,.1f} GiB (weights, gradients and AdamW state, {BYTES_PER_PARAMETER} bytes a "
                    f"parameter, and {activations / 2**30:,.1f} GiB of a training step's or validation's "
                    f"activations), more than the {free / 2**30:,.1f} GiB {where}; nothing was built; use {fix}, or "
                    f"set {SKIP}=1 to train anyway")


def _check_device(api: str, device) -> None:
    """One line when ``device`` (None: the CPU) is no device, or one this machine lacks (``devices.
    device_here_problem``'s words, as ``load_adopted`` names a missing GPU): ``check_training_memory(...,
    device='cuda')`` without CUDA read no free memory and passed without a word (issue 30 round 28, U624). Checked
    before LEVIATHAN_SKIP_MEMORY_CHECK: skipping the measure does not make the device here."""
    import torch

    from .devices import device_here_problem
    from .errors import ArgumentTypeError, ArgumentValueError

    if device is None:
        return
    fix = "pass 'cpu', 'cuda' or 'cuda:N' (a device this machine has), a torch.device, or None for the CPU"
    if not isinstance(device, (str, torch.device)):
        raise ArgumentTypeError(f"{api}: device must be a device's name or a torch.device, got "
                                f"{type(device).__name__} {device!r:.40}; {fix}")
    try:
        problem = device_here_problem(device)
    except RuntimeError:
        problem = f"is {device!r:.40}, not a device torch knows"
    if problem is not None:
        raise ArgumentValueError(f"{api}: device {problem.removesuffix('; use cpu')}; {fix}")


def _free_on(device) -> tuple[int | None, str]:
    """What ``device`` may still take and the words that say where it was read; (None, '') where it is not known."""
    kind = getattr(device, "type", None) or str(device or "cpu").split(":")[0]
    if kind == "cpu":
        return available_bytes(), "this machine has available now (MemAvailable, ulimit -v)"
    if kind != "cuda":
        return None, ""
    import torch

    try:
        return torch.cuda.mem_get_info(device)[0], f"free on {device} now (torch.cuda.mem_get_info)"
    except (RuntimeError, AssertionError, ValueError):  # no CUDA here: the device's own check says so
        return None, ""


def check_run_memory(configs: list, what: str, fix: str) -> None:
    """``check_training_memory`` of run configs (RunConfig) trained at the same time, each with one micro batch of
    ``micro_batch_size`` x ``data.seq_len`` tokens through its loss path (``chunked_loss``), or its validation batch
    (``validation_tokens``) where that holds more."""
    from .model.accounting import count_config

    check_training_memory([count_config(c.model).total for c in configs], what, fix,
                          sum(map(_run_activation_bytes, configs)))


def check_models_memory(configs: list, tokens: int, what: str, fix: str, copies: int = 1, chunked_loss: bool = True,
                        device=None) -> None:
    """``check_training_memory`` of model configs (ModelConfig) built side by side, as the benchmarks build them:
    ``copies`` of each held at once, stepped one at a time on ``tokens`` positions, so the parameters add up and the
    activations are the largest one step's (``step_activation_bytes`` with ``chunked_loss``, the loss path the
    benchmark steps). One reading of one rule for `leviathan bench`, gpu_check.py bench and bench_corpus_softmax.py."""
    from .value_rules import check_switches

    check_switches("check_models_memory", chunked_loss=chunked_loss)  # 'no' was true (round 30, Y621's kind)
    from .model.accounting import count_config

    configs = list(configs)
    steps = max((step_activation_bytes(c, tokens, chunked_loss=chunked_loss) for c in configs), default=0)
    check_training_memory([count_config(c).total for c in configs for _ in range(copies)], what, fix, steps, device)


def run_bytes(cfg) -> int:
    """What training a run config (RunConfig) takes by this estimate: its parameters and one micro batch's step."""
    from .model.accounting import count_config

    return count_config(cfg.model).total * BYTES_PER_PARAMETER + _run_activation_bytes(cfg)


def larger_batch(cfg) -> str:
    """The words for the batch ``_run_activation_bytes`` counts of a run config: its micro batch, or its validation
    batch where that holds more (a check's line names the setting to lower)."""
    mb, seq, rows = cfg.micro_batch_size, cfg.data.seq_len, cfg.eval_batch_size or cfg.micro_batch_size
    if eval_activation_bytes(cfg.model, validation_tokens(cfg)) > step_activation_bytes(cfg.model, mb * seq,
                                                                                          cfg.chunked_loss):
        return f"validation batch (eval_batch_size {rows} x {seq} tokens)"
    return f"micro batch ({mb} x {seq} tokens)"


def _run_activation_bytes(cfg) -> int:
    """The larger of a run's training step and its validation forward (``validation_tokens``): validation runs after
    the step, when its activations are freed, with the weights and optimizer state still held (round 27, R9)."""
    return max(step_activation_bytes(cfg.model, cfg.micro_batch_size * cfg.data.seq_len, cfg.chunked_loss),
               eval_activation_bytes(cfg.model, validation_tokens(cfg)))


def out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is the allocator's out-of-memory: the CPU's RuntimeError "DefaultCPUAllocator: can't allocate
    memory" or CUDA's ``torch.OutOfMemoryError`` (a RuntimeError too); the training step says it in one line with the
    fix (round 26, P18: a 90-line traceback, exit 1)."""
    if isinstance(error, MemoryError):
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and any(s in text for s in ("can't allocate memory", "DefaultCPUAllocator",
                                                                        "out of memory"))
