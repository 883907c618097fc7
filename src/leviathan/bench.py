"""Side-by-side speed and memory benchmark: the numbers behind ``leviathan bench`` (docs/benchmarks.md).

Every comparison builds its models in one process, warms each up, then *alternates* them step by step
for several repeats and reports medians and the ratio of medians. On a shared machine absolute times
drift by 2x within minutes; alternation exposes both models to the same drift, so the ratio is the
number to read.

Sections (``--only``):
- ``modes``: the training step of each configuration with plain logits, the chunked head and the chunked
  head under torch.compile, for dense_tied and leviathan, plus each one's peak memory in a fresh process
  (``leviathan.bench_modes``); ``--config experiments`` selects the experiments' configurations.
- ``train``: training step (forward + backward + AdamW step, the project's parameter groups) of
  leviathan vs dense_tied at iso-body, on real token ids, for the named configurations:
  ``cpu`` = preset cpu-small with a BPE of 8,192 (trained once on Gutenberg train text, cached),
  sequence 256, batch 8; ``paper`` = preset paper-109m (o200k_base, width 512, 6 layers, generator at
  paper defaults d_s=128, M=8, kappa=32, r=64), sequence 512, batch 2. Also times the generator alone
  (forward + backward on the same batch) to show its share.
- ``generator``: generator forward + backward per distinct id, fast path vs the literal formula
  (``leviathan.model.reference``) at paper defaults, plus their largest disagreement.
- ``memory``: bytes autograd keeps for backward per distinct id (unique storages seen by
  ``saved_tensors_hooks``, parameters excluded), fast vs literal, paper defaults.
- ``decode``: greedy generation tokens/s with the native KV cache, baked leviathan
  (``CausalLM.bake_()``) vs dense_tied.
- ``hf``: our dense_tied training step vs ``transformers.LlamaForCausalLM`` with the same weights,
  batch and loss.

Text: ``../shared/data/gutenberg`` (``$LEVIATHAN_SHARED`` overrides the location); without it, the
Python standard library's own source files (first files for tokenizer training, last for batches).

Footguns: timings include whatever else runs on the machine (the report prints the load average).
With several threads on a machine whose cores are busy, OpenMP's default spinning waits stall every
parallel region (measured here: the generator 2-6 s instead of 45 ms with one thread), which
penalises many small ops (the generator) far more than a few large ones (the head). Use
``--threads 1``, or ``OMP_WAIT_POLICY=PASSIVE`` in the environment before Python starts.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from .errors import UserError
from .model.config import ModelConfig
from .presets import preset

SECTIONS = ("train", "modes", "generator", "memory", "decode", "hf")

# The issue's targets on this 2-core CPU: (name, comparison, threshold, what it measures)
TARGETS = {
    "train_ratio": ("<=", 1.05, "leviathan / dense_tied training step time"),
    "chunked_speedup": (">=", 2.0, "chunked head / plain logits training tokens/s"),
    "chunked_memory": ("<=", 0.25, "chunked head / plain logits peak resident memory"),
    "compile_speedup": (">=", 1.15, "compiled / eager (chunked) training tokens/s"),
    "generator_speedup": (">=", 10.0, "literal formula / fast path time per distinct id"),
    "saved_kib_per_id": ("<=", 16.0, "KiB kept for backward per distinct id (fast path)"),
    "decode_ratio": (">=", 0.98, "baked leviathan / dense_tied decode tokens/s"),
    "hf_ratio": ("<=", 1.00, "our dense_tied / transformers Llama training step time"),
}


@dataclass(frozen=True)
class BenchConfig:
    """One named benchmark configuration: the model (any variant via ``model(embedding)``) and its batch."""

    name: str
    preset: str
    overrides: dict
    tokenizer: str  # "o200k_base" or "bpe:VOCAB" (trained on corpus text and cached)
    seq_len: int
    batch_size: int
    description: str

    def model(self, embedding: str) -> ModelConfig:
        return preset(self.preset, embedding=embedding, **self.overrides)


_LARGER_GENERATOR = dict(generator_seed_dim=64, generator_modes=8, generator_knots=16, generator_rank=32)

CONFIGS: dict[str, BenchConfig] = {
    "cpu": BenchConfig("cpu", "cpu-small", {"vocab_size": 8192}, "bpe:8192", 256, 8,
                       "CPU experiments: cpu-small (width 128, 4 layers), BPE 8192, seq 256 x 8"),
    "paper": BenchConfig("paper", "paper-109m", {}, "o200k_base", 512, 2,
                         "paper-like: paper-109m (o200k, width 512, 6 layers, d_s=128 M=8 kappa=32 r=64), seq 512 x 2"),
    # for smoke tests: seconds, not minutes
    "tiny": BenchConfig("tiny", "cpu-tiny", {"vocab_size": 512, "max_position_embeddings": 64}, "bpe:512", 64, 2,
                        "smoke test: cpu-tiny, BPE 512, seq 64 x 2"),
    # the configurations of the experiments (results/ablations, the CPU grid), micro batch 16 x 128
    "bpe8k-d128": BenchConfig("bpe8k-d128", "cpu-small", {"vocab_size": 8192}, "bpe:8192", 128, 16,
                              "experiments: BPE 8192, width 128, 4 layers, generator d_s=64 M=8 kappa=16 r=32"),
    "bpe32k-d64": BenchConfig("bpe32k-d64", "cpu-tiny", {"vocab_size": 32768, **_LARGER_GENERATOR}, "bpe:32768",
                              128, 16, "experiments: BPE 32768, width 64, 2 layers, generator d_s=64 M=8 kappa=16 r=32"),
    "bpe32k-d128": BenchConfig("bpe32k-d128", "cpu-small", {"vocab_size": 32768}, "bpe:32768", 128, 16,
                               "experiments: BPE 32768, width 128, 4 layers, generator d_s=64 M=8 kappa=16 r=32"),
    "o200k-d64": BenchConfig("o200k-d64", "cpu-tiny", {"vocab_size": 200_019, **_LARGER_GENERATOR}, "o200k_base",
                             128, 16, "experiments: o200k, width 64, 2 layers, generator d_s=64 M=8 kappa=16 r=32"),
}
EXPERIMENT_CONFIGS = ("bpe8k-d128", "bpe32k-d64", "bpe32k-d128", "o200k-d64")


# ---------------------------------------------------------------------------------------------
# text and token ids


def shared_dir() -> Optional[Path]:
    """``$LEVIATHAN_SHARED``, else ``<repository>/../shared``, else ``./../shared``; None if none exists."""
    env = os.environ.get("LEVIATHAN_SHARED")
    candidates = [Path(env)] if env else [Path(__file__).resolve().parents[2] / ".." / "shared",
                                            Path.cwd() / ".." / "shared"]
    for path in candidates:
        if (path / "data" / "gutenberg").is_dir():
            return path.resolve()
    return None


def corpus_files(split: str) -> tuple[list[Path], str]:
    """Text files for ``split`` ("train" for tokenizer training, "valid" for batches) and a description."""
    root = shared_dir()
    if root is not None:
        files = sorted((root / "data" / "gutenberg" / split).glob("*.txt"))
        if files:
            return files, f"gutenberg/{split}"
    from .data.sources import stdlib_files

    files = stdlib_files()
    cut = int(len(files) * 0.8)
    return (files[:cut], "stdlib sources (first 80%)") if split == "train" else \
        (files[cut:], "stdlib sources (last 20%)")


def read_texts(files: Sequence[Path], max_chars: int) -> list[str]:
    """Whole files in order until ``max_chars`` characters are read."""
    texts, total = [], 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        texts.append(text)
        total += len(text)
        if total >= max_chars:
            break
    return texts


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "leviathan" / "bench"


def bench_tokenizer(spec: str, cache_dir: Path, log: Callable[[str], None] = print):
    """o200k_base (bundled), or a BPE of ``bpe:VOCAB`` trained on a few MB of train text, cached on disk.

    The cache key covers the vocabulary, the corpus files (names and sizes) and the character budget,
    so changed text retrains instead of silently reusing a stale vocabulary.
    """
    from .data.tokenizer import load_tokenizer, train_bpe

    if not spec.startswith("bpe:"):
        return load_tokenizer(spec)
    vocab = int(spec.split(":", 1)[1])
    max_chars = 4_000_000 if vocab > 1024 else 400_000
    files, description = corpus_files("train")
    texts_files = []
    total = 0
    for path in files:
        texts_files.append(path)
        total += path.stat().st_size
        if total >= max_chars:
            break
    key = hashlib.sha256(json.dumps([vocab, max_chars, [(p.name, p.stat().st_size) for p in texts_files]]).encode())
    directory = Path(cache_dir) / f"bpe-{vocab}-{key.hexdigest()[:12]}"
    if (directory / "tokenizer.json").is_file():
        return load_tokenizer(str(directory))
    log(f"training a BPE of {vocab} on {description} ({len(texts_files)} files, cached in {directory}) ...")
    tok = train_bpe(read_texts(texts_files, max_chars), vocab)
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(directory)
    return load_tokenizer(str(directory))


def token_stream(tokenizer, max_chars: int = 2_000_000) -> tuple[np.ndarray, str]:
    """Validation text (never the tokenizer's training text) encoded as one id stream."""
    files, description = corpus_files("valid")
    ids = np.concatenate([np.asarray(tokenizer.encode(t), dtype=np.int64) for t in read_texts(files, max_chars)])
    return ids, description


def make_batches(stream: np.ndarray, batch_size: int, seq_len: int, count: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``count`` batches of consecutive windows, spread evenly over the stream: (x, y) int64 (B, T)."""
    need = batch_size * (seq_len + 1)
    if len(stream) < need:
        raise UserError(f"the benchmark text has {len(stream)} tokens, fewer than one batch ({need}); "
                        f"point $LEVIATHAN_SHARED at the shared data folder")
    starts = np.linspace(0, len(stream) - need, count).astype(np.int64)
    out = []
    for s in starts:
        block = torch.from_numpy(stream[s:s + need].copy()).view(batch_size, seq_len + 1)
        out.append((block[:, :-1].contiguous(), block[:, 1:].contiguous()))
    return out


# ---------------------------------------------------------------------------------------------
# timing


def alternate(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 1,
              cpu_times: Optional[dict[str, list[float]]] = None) -> dict[str, list[float]]:
    """Wall seconds of each function, called in turn (a, b, a, b, ...) after ``warmup`` untimed rounds.

    ``cpu_times``, if given, receives the process CPU seconds of the same calls: with one thread on a
    shared machine it excludes the time spent waiting for a core, so it is the steadier measure of work.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            if cpu_times is not None:
                cpu_times.setdefault(name, []).append(time.process_time() - c0)
    return times


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _stats(times: Sequence[float], cpu: Optional[Sequence[float]] = None) -> dict:
    out = {"median_s": median(times), "min_s": float(min(times)), "max_s": float(max(times)),
           "times_s": [float(t) for t in times]}
    if cpu:
        out["cpu_median_s"] = median(cpu)
        out["cpu_times_s"] = [float(t) for t in cpu]
    return out


def _free() -> None:
    gc.collect()


# ---------------------------------------------------------------------------------------------
# training step


def build_model(cfg: ModelConfig, seed: int = 0):
    from .model.llama import CausalLM

    torch.manual_seed(seed)
    return CausalLM(cfg).train()


def build_optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    """The training loop's AdamW (parameter groups by name, default hyperparameters)."""
    from .train.config import OptimConfig
    from .train.optim import build_optimizer as _build

    return _build(model, OptimConfig(), device_type="cpu")


class TrainStep:
    """Callable: one forward + backward + optimizer step on the next batch (cycling through ``batches``).

    ``logits_fn(model, x) -> logits`` lets a foreign model (transformers' Llama) take the same step with
    the same loss code.
    """

    def __init__(self, model, batches, logits_fn: Optional[Callable] = None):
        self.model, self.batches, self.logits_fn = model, batches, logits_fn
        self.optimizer = build_optimizer(model)
        self.i = 0
        self.last_loss = float("nan")

    def __call__(self) -> None:
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        if self.logits_fn is None:
            _, loss = self.model(x, labels=y, return_logits=False)  # the chunked head, as training runs it
        else:
            logits = self.logits_fn(self.model, x)
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.last_loss = float(loss.detach())


class GeneratorStep:
    """Callable: the leviathan model's input side alone, forward + backward, on the next batch's ids."""

    def __init__(self, generator, batches):
        self.generator, self.batches, self.i = generator, batches, 0

    def __call__(self) -> None:
        x, _ = self.batches[self.i % len(self.batches)]
        self.i += 1
        e = self.generator(x)
        e.backward(torch.ones_like(e))
        self.generator.zero_grad(set_to_none=True)


def bench_training(bc: BenchConfig, batches, repeats: int, warmup: int = 1) -> dict:
    """leviathan vs dense_tied training step (and the generator's own share) on the same batches."""
    from .model.accounting import count_model

    models = {v: build_model(bc.model(v)) for v in ("dense_tied", "leviathan")}
    steps = {v: TrainStep(m, batches) for v, m in models.items()}
    steps["generator only"] = GeneratorStep(models["leviathan"].model.embed_tokens, batches)
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, repeats, warmup, cpu)
    tokens = batches[0][0].numel()
    rows = {}
    for name, t in times.items():
        row = {**_stats(t, cpu[name]), "tokens_per_s": tokens / median(t)}
        if name in models:
            row["params"] = count_model(models[name]).as_dict()
            row["final_loss"] = steps[name].last_loss
        rows[name] = row
    dense = rows["dense_tied"]["median_s"]
    out = {
        "config": bc.name, "description": bc.description, "batch_size": bc.batch_size, "seq_len": bc.seq_len,
        "tokens_per_batch": tokens, "distinct_ids_per_batch": [int(x.unique().numel()) for x, _ in batches],
        "repeats": repeats, "warmup": warmup, "models": rows,
        "ratio": rows["leviathan"]["median_s"] / dense,
        "cpu_ratio": rows["leviathan"]["cpu_median_s"] / rows["dense_tied"]["cpu_median_s"],
        "generator_share": rows["generator only"]["median_s"] / dense,
    }
    del models, steps
    _free()
    return out


# ---------------------------------------------------------------------------------------------
# generator alone: fast vs literal, time and saved memory


def paper_generator(hidden_size: int = 512, seed: int = 0):
    """A LeviathanGenerator at paper defaults (o200k, d_s=128, M=8, kappa=32, r=64)."""
    from .model.generator import LeviathanGenerator

    torch.manual_seed(seed)
    return LeviathanGenerator(200_019, hidden_size, k=3, seed_dim=128, modes=8, knots=32, rank=64)


def _fwd_bwd(generator, fn, ids: torch.Tensor, grad: torch.Tensor) -> Callable[[], torch.Tensor]:
    def run() -> torch.Tensor:
        generator.zero_grad(set_to_none=True)
        y = fn(generator, ids)
        y.backward(grad)
        return y

    return run


def _scaled_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    actual, expected = actual.detach().double(), expected.detach().double()
    return float((actual - expected).abs().max() / expected.abs().max().clamp_min(1e-300))


def bench_generator(ids: torch.Tensor, repeats: int, warmup: int = 1) -> dict:
    """Forward + backward per distinct id, fast path vs the literal formula, on the given distinct ids."""
    from .model.reference import reference_from_module

    g = paper_generator()
    ids = ids.unique()
    U = ids.numel()
    grad = torch.randn(U, g.hidden_size, generator=torch.Generator().manual_seed(0))
    fast = _fwd_bwd(g, lambda m, i: m(i), ids, grad)
    ref = _fwd_bwd(g, reference_from_module, ids, grad)

    # exactness first: same output and every gradient as the formula
    y_fast = fast().detach()
    grads_fast = {n: p.grad.clone() for n, p in g.named_parameters()}
    y_ref = ref().detach()
    errors = {"output": _scaled_error(y_fast, y_ref)}
    errors.update({f"grad {n}": _scaled_error(grads_fast[n], p.grad) for n, p in g.named_parameters()})

    cpu: dict[str, list[float]] = {}
    times = alternate({"fast": fast, "reference": ref}, repeats, warmup=max(0, warmup - 1), cpu_times=cpu)
    rows = {name: {**_stats(t, cpu[name]), "us_per_id": median(t) / U * 1e6} for name, t in times.items()}
    out = {"distinct_ids": U, "repeats": repeats, "models": rows, "max_scaled_error": errors,
           "speedup": rows["reference"]["median_s"] / rows["fast"]["median_s"],
           "cpu_speedup": rows["reference"]["cpu_median_s"] / rows["fast"]["cpu_median_s"]}
    _free()
    return out


def saved_bytes(module: torch.nn.Module, fn: Callable[[], torch.Tensor]) -> int:
    """Bytes of the distinct storages autograd saves for backward while ``fn()`` runs, parameters excluded."""
    params = {p.untyped_storage().data_ptr() for p in module.parameters()}
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn()
    del y
    return sum(storages.values())


def bench_memory(batch_ids: torch.Tensor, reference_ids: int = 32) -> dict:
    """Saved-for-backward bytes per distinct id: the fast path on a whole batch (duplicates included), the
    literal formula on ``reference_ids`` of its distinct ids (its memory is linear in ids)."""
    from .model.reference import reference_from_module

    g = paper_generator()
    U = int(batch_ids.unique().numel())
    fast = saved_bytes(g, lambda: g(batch_ids)) / U
    ids = batch_ids.unique()[:reference_ids]
    ref = saved_bytes(g, lambda: reference_from_module(g, ids)) / ids.numel()
    out = {"distinct_ids": U, "positions": int(batch_ids.numel()),
           "fast_kib_per_id": fast / 1024, "reference_kib_per_id": ref / 1024, "reference_ids": int(ids.numel()),
           "ratio": ref / fast}
    _free()
    return out


# ---------------------------------------------------------------------------------------------
# decode


@torch.no_grad()
def greedy_decode(model, prompt: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Greedy generation with the native KV cache; returns the new ids (1, new_tokens)."""
    from .model.llama import KVCache

    cache = KVCache()
    logits, _ = model(prompt, cache=cache)
    nxt = logits[:, -1].argmax(-1, keepdim=True)
    out = [nxt]
    for _ in range(new_tokens - 1):
        logits, _ = model(nxt, cache=cache)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        out.append(nxt)
    return torch.cat(out, dim=1)


class _Decoder:
    """Greedy decoding one token per call, with the native KV cache (prefill on ``reset``)."""

    def __init__(self, model, prompt: torch.Tensor):
        self.model, self.prompt = model, prompt

    @torch.no_grad()
    def reset(self) -> None:
        from .model.llama import KVCache

        self.cache = KVCache()
        logits, _ = self.model(self.prompt, cache=self.cache)
        self.next = logits[:, -1].argmax(-1, keepdim=True)

    @torch.no_grad()
    def __call__(self) -> None:
        logits, _ = self.model(self.next, cache=self.cache)
        self.next = logits[:, -1].argmax(-1, keepdim=True)


def bench_decode(bc: BenchConfig, prompt: torch.Tensor, new_tokens: int, repeats: int, warmup: int = 1) -> dict:
    """Tokens/s of greedy decoding: baked leviathan vs dense_tied (same body, same prompt).

    The two models are alternated token by token (each with its own KV cache, prefilled untimed), so a
    drift in machine load hits both alike; tokens/s is 1 / median per-token time over every token of
    every repeat (``repeats`` runs of ``new_tokens``).
    """
    models = {v: build_model(bc.model(v)).eval() for v in ("dense_tied", "leviathan")}
    t0 = time.perf_counter()
    models["leviathan"].bake_()
    bake_s = time.perf_counter() - t0
    decoders = {v: _Decoder(m, prompt) for v, m in models.items()}
    times: dict[str, list[float]] = {v: [] for v in decoders}
    cpu: dict[str, list[float]] = {}
    for i in range(warmup + repeats):
        for d in decoders.values():
            d.reset()
        t = alternate(decoders, new_tokens, warmup=0, cpu_times=cpu if i >= warmup else {})
        if i >= warmup:
            for v in times:
                times[v].extend(t[v])
    rows = {}
    for v, t in times.items():
        st = _stats(t, cpu[v])
        st.pop("times_s"), st.pop("cpu_times_s")  # thousands of per-token samples: keep the summary only
        rows[v] = {**st, "tokens_per_s": 1.0 / median(t)}
    out = {"config": bc.name, "prompt_tokens": int(prompt.shape[1]), "new_tokens": new_tokens, "repeats": repeats,
           "bake_s": bake_s, "models": rows,
           "ratio": rows["leviathan"]["tokens_per_s"] / rows["dense_tied"]["tokens_per_s"],
           "cpu_ratio": rows["dense_tied"]["cpu_median_s"] / rows["leviathan"]["cpu_median_s"]}
    del models, decoders
    _free()
    return out


# ---------------------------------------------------------------------------------------------
# our dense model vs transformers' Llama


def hf_llama_like(model):
    """``transformers.LlamaForCausalLM`` with the config and weights of a dense CausalLM (SDPA attention)."""
    import transformers

    from .hf.export import plain_llama_config

    hf_cfg = plain_llama_config(model.config, use_cache=False)
    hf_cfg._attn_implementation = "sdpa"
    hf = transformers.LlamaForCausalLM(hf_cfg)
    hf.load_state_dict(model.state_dict(), strict=True)
    return hf.train()


def _hf_logits(model, x: torch.Tensor) -> torch.Tensor:
    return model(input_ids=x, use_cache=False).logits


def bench_hf(bc: BenchConfig, batches, repeats: int, warmup: int = 1) -> dict:
    """Training step of our dense_tied model vs transformers' Llama: same weights, batch, loss and AdamW."""
    ours = build_model(bc.model("dense_tied"))
    hf = hf_llama_like(ours)
    x = batches[0][0]
    with torch.no_grad():
        diff = float((ours(x)[0] - _hf_logits(hf, x)).abs().max())
    steps = {"ours (dense_tied)": TrainStep(ours, batches), "transformers Llama": TrainStep(hf, batches, _hf_logits)}
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, repeats, warmup, cpu)
    tokens = x.numel()
    rows = {n: {**_stats(t, cpu[n]), "tokens_per_s": tokens / median(t), "final_loss": steps[n].last_loss}
            for n, t in times.items()}
    ours, theirs = rows["ours (dense_tied)"], rows["transformers Llama"]
    out = {"config": bc.name, "max_abs_logit_diff": diff, "repeats": repeats, "models": rows,
           "ratio": ours["median_s"] / theirs["median_s"], "cpu_ratio": ours["cpu_median_s"] / theirs["cpu_median_s"]}
    del ours, hf, steps
    _free()
    return out


# ---------------------------------------------------------------------------------------------
# the whole run


@dataclass
class BenchOptions:
    configs: tuple[str, ...] = ("cpu", "paper")
    sections: tuple[str, ...] = SECTIONS
    quick: bool = False
    repeats: Optional[int] = None
    warmup: int = 1
    threads: Optional[int] = None
    cache_dir: Path = field(default_factory=default_cache_dir)
    decode_tokens: Optional[int] = None


def _repeats(opts: BenchOptions, full: int, quick: int) -> int:
    return opts.repeats if opts.repeats is not None else (quick if opts.quick else full)


def environment() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"torch": torch.__version__, "threads": torch.get_num_threads(), "cpu": cpu,
            "cores": os.cpu_count(), "python": platform.python_version(), "load_avg": [round(x, 2) for x in load],
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}


def run_benchmark(opts: BenchOptions, log: Callable[[str], None] = print) -> dict:
    """Run the selected sections for the selected configurations; returns the JSON-able result."""
    if opts.threads is not None:
        torch.set_num_threads(opts.threads)
    unknown = [s for s in opts.sections if s not in SECTIONS]
    if unknown:
        raise UserError(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    bad = [c for c in opts.configs if c not in CONFIGS]
    if bad:
        raise UserError(f"unknown config(s) {', '.join(bad)}; choose from {', '.join(CONFIGS)}")
    result: dict = {"environment": environment(), "quick": opts.quick, "sections": {}}
    t_start = time.perf_counter()

    # token ids per configuration (cheap next to the model work; shared by the sections)
    data: dict[str, dict] = {}
    needed = set(opts.configs)
    if {"generator", "memory"} & set(opts.sections):
        needed.add("paper")  # the generator sections run on a real o200k batch at paper defaults
    for name in sorted(needed):
        bc = CONFIGS[name]
        tok = bench_tokenizer(bc.tokenizer, opts.cache_dir, log)
        stream, description = token_stream(tok)
        data[name] = {"stream": stream, "text": description, "tokenizer": bc.tokenizer,
                      "vocab": int(tok.vocab_size)}
        if int(tok.vocab_size) > bc.model("dense_tied").vocab_size:
            raise UserError(f"tokenizer {bc.tokenizer} has {tok.vocab_size} ids, more than config {name}'s vocabulary")
    result["data"] = {n: {k: v for k, v in d.items() if k != "stream"} | {"tokens": int(len(d["stream"]))}
                      for n, d in data.items()}

    sections = result["sections"]
    if "train" in opts.sections:
        sections["train"] = {}
        for name in opts.configs:
            bc = CONFIGS[name]
            reps = _repeats(opts, 7 if name != "paper" else 3, 2 if name != "paper" else 1)
            batches = make_batches(data[name]["stream"], bc.batch_size, bc.seq_len, count=4)
            log(f"[train] {name}: {bc.description}; {reps} alternating repeats ...")
            sections["train"][name] = bench_training(bc, batches, reps, opts.warmup)
    if "modes" in opts.sections:
        from .bench_modes import bench_modes

        sections["modes"] = {}
        for name in opts.configs:
            bc = CONFIGS[name]
            reps = _repeats(opts, 5 if name != "paper" else 3, 1)
            batches = make_batches(data[name]["stream"], bc.batch_size, bc.seq_len, count=4)
            log(f"[modes] {name}: plain / chunked / compiled x dense_tied / leviathan, {reps} alternating repeats ...")
            sections["modes"][name] = bench_modes(bc, batches, reps, opts.warmup, rss=not opts.quick, log=log)
    if "generator" in opts.sections:
        bc = CONFIGS["paper"]
        x, _ = make_batches(data["paper"]["stream"], bc.batch_size, bc.seq_len, count=1)[0]
        ids = x.unique()
        if opts.quick:
            ids = ids[:64]
        reps = _repeats(opts, 5, 2)
        log(f"[generator] fast vs literal formula on {ids.numel()} distinct ids, {reps} repeats ...")
        sections["generator"] = bench_generator(ids, reps, opts.warmup)
    if "memory" in opts.sections:
        bc = CONFIGS["paper"]
        x, _ = make_batches(data["paper"]["stream"], bc.batch_size, bc.seq_len, count=1)[0]
        log("[memory] saved-for-backward bytes per distinct id ...")
        sections["memory"] = bench_memory(x, reference_ids=8 if opts.quick else 32)
    if "decode" in opts.sections:
        sections["decode"] = {}
        for name in opts.configs:
            bc = CONFIGS[name]
            new = opts.decode_tokens or {"paper": 8 if opts.quick else 32}.get(name, 16 if opts.quick else 128)
            reps = _repeats(opts, 9, 2)
            prompt = torch.from_numpy(data[name]["stream"][:32].copy()).view(1, -1)
            log(f"[decode] {name}: {new} new tokens after a {prompt.shape[1]}-token prompt, {reps} repeats ...")
            sections["decode"][name] = bench_decode(bc, prompt, new, reps, opts.warmup)
    if "hf" in opts.sections:
        sections["hf"] = {}
        for name in opts.configs:
            bc = CONFIGS[name]
            reps = _repeats(opts, 7 if name != "paper" else 3, 2 if name != "paper" else 1)
            batches = make_batches(data[name]["stream"], bc.batch_size, bc.seq_len, count=4)
            log(f"[hf] {name}: our dense_tied vs transformers.LlamaForCausalLM, {reps} repeats ...")
            sections["hf"][name] = bench_hf(bc, batches, reps, opts.warmup)

    result["targets"] = evaluate_targets(result)
    result["environment"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    result["wall_s"] = time.perf_counter() - t_start
    return result


def _check(key: str, value: float) -> dict:
    op, threshold, meaning = TARGETS[key]
    ok = value <= threshold if op == "<=" else value >= threshold
    return {"target": key, "value": value, "op": op, "threshold": threshold, "pass": bool(ok), "meaning": meaning}


def evaluate_targets(result: dict) -> list[dict]:
    s = result["sections"]
    checks = []
    for name, r in s.get("train", {}).items():
        checks.append({**_check("train_ratio", r["ratio"]), "config": name})
    for name, r in s.get("modes", {}).items():
        for v in ("dense_tied", "leviathan"):
            checks.append({**_check("chunked_speedup", r["ratios"][f"{v} chunked / plain"]), "config": f"{name} {v}"})
            checks.append({**_check("compile_speedup", r["ratios"][f"{v} compiled / chunked"]),
                           "config": f"{name} {v}"})
            rss = r.get("peak_rss_mb") or {}
            if rss.get(f"{v}/plain") and rss.get(f"{v}/chunked"):
                checks.append({**_check("chunked_memory", rss[f"{v}/chunked"] / rss[f"{v}/plain"]),
                               "config": f"{name} {v}"})
    if "generator" in s:
        checks.append({**_check("generator_speedup", s["generator"]["speedup"]), "config": "paper defaults"})
    if "memory" in s:
        checks.append({**_check("saved_kib_per_id", s["memory"]["fast_kib_per_id"]), "config": "paper defaults"})
    for name, r in s.get("decode", {}).items():
        checks.append({**_check("decode_ratio", r["ratio"]), "config": name})
    for name, r in s.get("hf", {}).items():
        checks.append({**_check("hf_ratio", r["ratio"]), "config": name})
    return checks


# ---------------------------------------------------------------------------------------------
# report


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def format_report(result: dict) -> str:
    env = result["environment"]
    out = [f"leviathan bench: torch {env['torch']}, {env['threads']} thread(s) on {env['cores']} cores ({env['cpu']}), "
           f"load average {env['load_avg'][0]} at start, {(env.get('load_avg_end') or ['?'])[0]} at end"
           + (" [--quick]" if result.get("quick") else "")]
    if env["threads"] > 1 and (env.get("omp_wait_policy") or "").upper() != "PASSIVE" and env["load_avg"][0] > 1:
        out.append(f"  note: {env['threads']} threads on a busy machine with spinning OpenMP waits: parallel regions "
                   f"stall; see --threads 1 or OMP_WAIT_POLICY=PASSIVE")
    for name, d in result.get("data", {}).items():
        out.append(f"  data {name}: {d['tokenizer']} ({d['vocab']:,} ids) on {d['text']}, {d['tokens']:,} tokens")
    s = result["sections"]
    if "train" in s:
        out.append("\nTraining step (forward + backward + AdamW), alternating, median of repeats")
        rows = []
        for name, r in s["train"].items():
            ids = r["distinct_ids_per_batch"]
            dense = r["models"]["dense_tied"]
            for model, m in r["models"].items():
                params = f"{m['params']['total'] / 1e6:,.2f}M" if "params" in m else ""
                rows.append([name, model, params, f"{r['batch_size']}x{r['seq_len']}",
                             _ms(m["median_s"]), f"{_ms(m['min_s'])}-{_ms(m['max_s'])}",
                             f"{m['tokens_per_s']:,.0f}", f"{m['median_s'] / dense['median_s']:.3f}",
                             f"{m['cpu_median_s'] / dense['cpu_median_s']:.3f}"])
            out.append(f"  {name}: distinct ids per batch {ids} (of {r['tokens_per_batch']} tokens), "
                       f"{r['repeats']} repeats")
        out.append(_table(["config", "model", "params", "batch", "median ms", "range ms", "tokens/s", "/ dense",
                           "cpu-time / dense"], rows))
    if "modes" in s:
        from .bench_modes import format_modes

        out += format_modes(s["modes"])
    if "generator" in s:
        g = s["generator"]
        out.append(f"\nGenerator forward + backward at paper defaults (d_s=128, M=8, kappa=32, r=64, D=512), "
                   f"{g['distinct_ids']} distinct ids, {g['repeats']} repeats")
        rows = [[n, _ms(m["median_s"]), f"{m['us_per_id']:,.0f}", _ms(m["cpu_median_s"])]
                for n, m in g["models"].items()]
        out.append(_table(["path", "median ms", "us / distinct id", "cpu-time ms"], rows))
        worst = max(g["max_scaled_error"].items(), key=lambda kv: kv[1])
        out.append(f"  speedup {g['speedup']:.1f}x (cpu time {g['cpu_speedup']:.1f}x); largest disagreement with the formula: {worst[1]:.1e} ({worst[0]}, "
                   f"max |diff| / max |ref|, fp32)")
    if "memory" in s:
        m = s["memory"]
        out.append(f"\nKept for backward per distinct id (paper defaults; fast path on a batch of {m['positions']} "
                   f"positions / {m['distinct_ids']} distinct ids, formula on {m['reference_ids']} ids)")
        out.append(_table(["path", "KiB / distinct id"], [["fast", f"{m['fast_kib_per_id']:.1f}"],
                                                          ["reference", f"{m['reference_kib_per_id']:,.1f}"]]))
    if "decode" in s:
        out.append("\nDecode (greedy, KV cache, batch 1, alternated token by token): baked leviathan vs dense_tied")
        rows = []
        for name, r in s["decode"].items():
            dense = r["models"]["dense_tied"]
            for model, m in r["models"].items():
                rows.append([name, model, f"{m['tokens_per_s']:,.1f}", _ms(m["median_s"]),
                             f"{m['tokens_per_s'] / dense['tokens_per_s']:.3f}",
                             f"{dense['cpu_median_s'] / m['cpu_median_s']:.3f}"])
            out.append(f"  {name}: {r['repeats']} x {r['new_tokens']} new tokens after {r['prompt_tokens']}; "
                       f"bake_() took {r['bake_s']:.1f} s")
        out.append(_table(["config", "model", "tokens/s", "ms / token", "/ dense", "cpu-time: dense /"], rows))
    if "hf" in s:
        out.append("\nOur dense_tied vs transformers.LlamaForCausalLM (same weights, batch, loss, AdamW)")
        rows = []
        for name, r in s["hf"].items():
            hf = r["models"]["transformers Llama"]
            for model, m in r["models"].items():
                rows.append([name, model, _ms(m["median_s"]), f"{m['tokens_per_s']:,.0f}",
                             f"{m['median_s'] / hf['median_s']:.3f}", f"{m['cpu_median_s'] / hf['cpu_median_s']:.3f}"])
            out.append(f"  {name}: max |logit diff| {r['max_abs_logit_diff']:.1e}, {r['repeats']} repeats")
        out.append(_table(["config", "model", "median ms", "tokens/s", "/ HF", "cpu-time / HF"], rows))
    if result.get("targets"):
        out.append("\nTargets (wall-clock medians; PASS/MISS)")
        rows = [[t["target"], t["config"], f"{t['value']:.3f}", f"{t['op']} {t['threshold']}",
                 "PASS" if t["pass"] else "MISS", t["meaning"]] for t in result["targets"]]
        out.append(_table(["target", "config", "value", "target", "", "what"], rows))
    out.append(f"\n({result['wall_s']:.0f} s)")
    return "\n".join(out)
