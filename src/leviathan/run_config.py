"""RunConfig: everything one training run needs, as typed dataclasses read from YAML + dotted overrides.

    leviathan train --config tiny model.hidden_size=128 optim.lr=1e-3 max_steps=200   # or --config PATH.yaml

A config file has the sections ``model`` (ModelConfig fields, or ``preset: NAME`` plus fields that override it),
``data``, ``optim`` and ``schedule`` and the top-level run settings; every key is optional except what has no
default, and each dataclass's docstring says what its fields mean. Decisions worth knowing:
- ``model.vocab_size: null`` (or absent, after the preset is applied) means "the data's vocabulary":
  it is read from ``<data.path>/meta.json``. The CPU presets leave it unset for this reason; the
  paper presets fix it at o200k's 200,019. An explicit value must be >= the data's vocab_size (a
  larger head is allowed: ids the data never uses simply get no gradient). The resolved value is
  what ``config.yaml`` in the run folder records, so a run never depends on the data to rebuild.
- ``batch_tokens`` is the *global* batch per optimizer step in tokens. Gradient accumulation is
  derived: ``batch_tokens / (seq_len * micro_batch_size * world_size)``, which must be a whole
  number; otherwise the error lists the nearest valid values (``grad_accum_steps``).
- Exactly one of ``max_steps`` and ``max_tokens`` is set; ``max_tokens`` is rounded down to whole
  optimizer steps.
- ``data.path`` is resolved against the current directory and stored absolute in the run folder.
- ``device: auto`` is cuda when available, else cpu; ``dtype: auto`` is bfloat16 autocast on cuda
  and float32 on cpu (bf16 autocast on a CPU without bf16 matrix instructions is far slower than fp32;
  it is allowed but warned about; docs/benchmarks.md has a measurement).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, Optional, Sequence

from .config import (ConfigError, apply_overrides, check_repeated_overrides, from_dict, load_yaml, override_list,
                     require, require_range, to_dict)
from .configs import find_train_config
from .data.meta import PreparedMeta, data_folder_problem, find_meta
from .devices import device_problem
from .errors import missing
from .model.config import ModelConfig
from .presets import preset_dict_named
from .integers import as_int, is_integer
from .seeds import check_seed
from .settings_kind import other_settings_file


@dataclass
class DataConfig:
    """Args:
        path: prepared data directory (``leviathan prepare``): meta.json, train.bin, val.bin.
        seq_len: tokens per training sequence (<= model.max_position_embeddings).
        shuffle: order of the training windows (``leviathan.data.loader``): ``windows`` (a seeded
            permutation per epoch), ``buffer`` (the paper's streaming shuffle buffer of
            ``shuffle_buffer`` sequences) or ``none`` (file order).
        shuffle_buffer: sequences in the buffer for ``shuffle: buffer`` (paper: 10,000).
        softmax: ``full`` (every id of the tokenizer) or ``corpus``: the softmax runs only over the ids
            that occur in the prepared data (``data.loader.corpus_ids``; the same set for every model
            on this data; inputs keep the tokenizer's ids). A cost lever for huge vocabularies on a CPU
            (o200k: 58k of 200k ids occur in Gutenberg); its losses are over that subset, so compare
            only runs with the same setting, and evaluate only text whose ids are in the set.
    """

    path: str = "data/stdlib"
    seq_len: int = 512
    shuffle: Literal["windows", "buffer", "none"] = "windows"
    shuffle_buffer: int = 10_000
    softmax: Literal["full", "corpus"] = "full"

    def __post_init__(self) -> None:
        # numpy's ints are integers, stored as Python's (round 29, W504's kind: RunConfig's own sizes took them)
        self.seq_len, self.shuffle_buffer = as_int(self.seq_len), as_int(self.shuffle_buffer)
        require(is_integer(self.seq_len) and self.seq_len > 0,
                f"data.seq_len must be a positive integer, got {self.seq_len!r}")
        require(is_integer(self.shuffle_buffer) and self.shuffle_buffer > 0,
                f"data.shuffle_buffer must be a positive integer, got {self.shuffle_buffer!r}")
        require(bool(self.path), "data.path is empty; set it to a prepared data directory (leviathan prepare)")


# The optimiser's float settings' ranges: only > 0 (>= 0) was checked, and input_lr_mult 1e300 overflowed float32 in
# torch's Adam (a traceback), lr 1e-300, eps 1e300 or grad_clip 1e-300 learned nothing, exit 0, and input_lr_mult
# 1e30 or weight_decay 1e300 diverged with the lr blamed (issue 30 round 15, A170, A171, A178-A181). Wide enough
# for every config and preset (lr 3e-5..3e-2, input_lr_mult 0.3..3, weight_decay 0.1, grad_clip 1).
OPTIM_RANGES = {"lr": (1e-8, 10.0), "eps": (1e-30, 0.1), "weight_decay": (0.0, 10.0), "grad_clip": (1e-6, 1e6),
                "head_weight_decay": (0.0, 10.0), "input_lr_mult": (1e-3, 1e3)}
_OPTIM_NOTES = {"grad_clip": ", or 0 / null to disable clipping", "input_lr_mult": " (1 = no multiplier)",
                "weight_decay": " (0 disables)"}


@dataclass
class OptimConfig:
    """AdamW with decoupled weight decay.

    Weight decay applies to the matrices of the body and the output head only. Norm weights, biases
    and *every* parameter of the input side (a dense table, a tied table, the generator's codebooks,
    mode projections, LayerNorms, spline coefficients and output maps) are not decayed: an input
    row only receives gradient when its token occurs, so decoupled decay would shrink rare tokens'
    embeddings every step they are absent; and decaying the spline coefficients pulls every phi
    towards 0, which collapses the product over d_s (they start at 1 for that reason).

    Args:
        lr: peak learning rate (reached at the end of warmup).
        betas: Adam (beta1, beta2).
        eps: Adam epsilon.
        weight_decay: decoupled decay of the decayed group (0 disables).
        grad_clip: clip the global gradient norm to this value; null or 0 disables.
        head_weight_decay: decay of an untied output head; null means weight_decay. 0 leaves it
            undecayed like a tied head (an ablation of the tied/untied asymmetry).
        input_lr_mult: learning-rate multiplier of every input-side parameter (1 = none). The
            generator's parameters are shared by every id, a table row by one id.
    """

    lr: float = 3e-4
    betas: tuple[float, float] = (0.9, 0.95)
    eps: float = 1e-8
    weight_decay: float = 0.1
    grad_clip: Optional[float] = 1.0
    head_weight_decay: Optional[float] = None
    input_lr_mult: float = 1.0

    def __post_init__(self) -> None:
        require(len(self.betas) == 2 and all(0.0 <= b < 1.0 for b in self.betas),
                f"optim.betas must be two numbers in [0, 1), got {list(self.betas)}")
        self.betas = (float(self.betas[0]), float(self.betas[1]))
        require(self.lr > 0, f"optim.lr must be positive, got {self.lr}")
        require(self.eps > 0, f"optim.eps must be positive, got {self.eps}")
        require(self.weight_decay >= 0, f"optim.weight_decay must be >= 0, got {self.weight_decay}")
        require(self.grad_clip is None or self.grad_clip >= 0,
                f"optim.grad_clip must be >= 0 or null, got {self.grad_clip}")
        require(self.head_weight_decay is None or self.head_weight_decay >= 0,
                f"optim.head_weight_decay must be >= 0 or null (= weight_decay), got {self.head_weight_decay}")
        require(self.input_lr_mult > 0, f"optim.input_lr_mult must be positive (1 = no multiplier), "
                                        f"got {self.input_lr_mult}")
        for name, (low, high) in OPTIM_RANGES.items():
            value = getattr(self, name)
            if value is None or (name == "grad_clip" and value == 0):  # null: disabled / = weight_decay
                continue
            require_range(low <= value <= high, f"optim.{name}={value:g} is outside the range a run can use: set it "
                                                f"in [{low:g}, {high:g}]{_OPTIM_NOTES.get(name, '')}")


@dataclass
class ScheduleConfig:
    """Linear warmup from lr/warmup_steps to lr, then cosine decay to lr * min_lr_ratio at the last step.

    Args:
        warmup_steps: optimizer steps of linear warmup (0: start at the peak).
        min_lr_ratio: final learning rate as a fraction of optim.lr.
    """

    warmup_steps: int = 100
    min_lr_ratio: float = 0.1

    def __post_init__(self) -> None:
        self.warmup_steps = as_int(self.warmup_steps)  # numpy's int as Python's (round 29, W504's kind)
        require(is_integer(self.warmup_steps) and self.warmup_steps >= 0,
                f"schedule.warmup_steps must be an integer >= 0, got {self.warmup_steps!r}")
        require(0.0 <= self.min_lr_ratio <= 1.0, f"schedule.min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")


@dataclass
class RunConfig:
    """One training run. Sections ``model``, ``data``, ``optim``, ``schedule``; the rest is flat.

    Args:
        batch_tokens: global tokens per optimizer step (all ranks, all micro steps).
        micro_batch_size: sequences per rank per forward/backward.
        max_steps: optimizer steps to train (exactly one of max_steps / max_tokens).
        max_tokens: training tokens; rounded down to whole optimizer steps.
        log_interval: steps between train-loss rows in metrics.jsonl / TensorBoard.
        eval_interval: steps between validation evaluations (also at the last step); 0 disables
            intermediate evaluation (the final one still runs).
        eval_tokens: validation tokens per evaluation (the first ones of the split, the same every
            time); null means the whole split.
        eval_batch_size: sequences per evaluation forward; null means micro_batch_size.
        checkpoint_interval: steps between checkpoints (also at the last step); 0 means only at the end.
        keep_last: complete checkpoints kept (older ones deleted); null keeps all.
        seed: model init and data order.
        device: auto | cpu | cuda | cuda:N.
        dtype: auto | float32 | bfloat16 (autocast; parameters and optimizer state stay fp32).
        compile: torch.compile the training forward (off by default; the saved module is uncompiled).
        chunked_loss: score the head over chunks of positions without forming the (tokens x V) logits
            (``leviathan.model.loss``; same loss and gradients). false = the plain logits path.
        parallel: ddp | fsdp, used when launched with more than one process (torchrun).
    """

    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    batch_tokens: int = 65_536
    micro_batch_size: int = 8
    max_steps: Optional[int] = None
    max_tokens: Optional[int] = None
    log_interval: int = 10
    eval_interval: int = 200
    eval_tokens: Optional[int] = 65_536
    eval_batch_size: Optional[int] = None
    checkpoint_interval: int = 500
    keep_last: Optional[int] = 3
    seed: int = 1337
    device: str = "auto"
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    compile: bool = False
    chunked_loss: bool = True
    parallel: Literal["ddp", "fsdp"] = "ddp"

    def __post_init__(self) -> None:
        for name in ("batch_tokens", "micro_batch_size", "log_interval", "eval_interval", "checkpoint_interval",
                     "max_steps", "max_tokens", "eval_tokens", "eval_batch_size", "keep_last"):
            value = as_int(getattr(self, name))  # built in Python: max_steps="4" was a TypeError in a comparison
            require(value is None or is_integer(value), f"{name} must be an integer, got {value!r}")  # (round 9, M134)
            require(value is None or -2**63 <= value < 2**63, f"{name}: {value} does not fit in 64 bits (integers of "
                    f"a config lie in [-2^63, 2^63)); write the number meant")  # as a config file's (round 10, Q118)
            setattr(self, name, value)
        for name in ("batch_tokens", "micro_batch_size", "log_interval"):
            value = getattr(self, name)
            require(value > 0, f"{name} must be a positive integer, got {value}")
        for name in ("eval_interval", "checkpoint_interval"):
            value = getattr(self, name)
            require(value >= 0, f"{name} must be >= 0 (0 disables the periodic one), got {value}")
        for name in ("max_steps", "max_tokens", "eval_tokens", "eval_batch_size", "keep_last"):
            value = getattr(self, name)
            require(value is None or value > 0, f"{name} must be a positive integer or null, got {value}")
        require((self.max_steps is None) != (self.max_tokens is None),
                "set exactly one of max_steps and max_tokens (for example max_steps=1000); "
                + ("both are set" if self.max_steps is not None else "neither is set"))
        if self.max_tokens is not None:
            require(self.max_tokens >= self.batch_tokens,
                    f"max_tokens={self.max_tokens} is less than one optimizer step of batch_tokens="
                    f"{self.batch_tokens}; raise max_tokens or lower batch_tokens")
        require(self.data.seq_len <= self.model.max_position_embeddings,
                f"data.seq_len={self.data.seq_len} exceeds model.max_position_embeddings="
                f"{self.model.max_position_embeddings}; lower data.seq_len or raise model.max_position_embeddings")
        from .eval.window_floor import short_cap_problem

        short = short_cap_problem("eval_tokens", self.eval_tokens, self.data.seq_len, "data.seq_len",
                                  "null (the whole split)")
        require(short is None, short or "")  # validations of fewer targets than a window, no word (round 29, W692)
        self.seed = check_seed(self.seed, "seed")  # a plain int (a numpy integer is one: round 9)
        problem = device_problem(self.device)  # "cuda:x" passed a startswith("cuda") test: a torch traceback
        require(problem is None, f"device {problem}; set device=auto (or cpu)")

    def check_schedule(self) -> None:
        """ConfigError when the warmup is longer than the run (checked when training starts: a config may be built
        with a shorter max_steps than it will train with): the learning rate would never reach ``optim.lr``."""
        require(self.schedule.warmup_steps <= self.total_steps,
                f"schedule.warmup_steps={self.schedule.warmup_steps} is longer than the run ({self.total_steps} steps): "
                f"the learning rate would never reach optim.lr; set schedule.warmup_steps in [0, {self.total_steps}] "
                f"(typically 1-10% of the steps)")

    # ---- derived values ----------------------------------------------------------------------
    @property
    def total_steps(self) -> int:
        """Optimizer steps of the whole run."""
        if self.max_steps is not None:
            return self.max_steps
        return self.max_tokens // self.batch_tokens

    def grad_accum_steps(self, world_size: int = 1) -> int:
        """batch_tokens / (seq_len * micro_batch_size * world_size), or a ConfigError listing valid values."""
        T, mb = self.data.seq_len, self.micro_batch_size
        unit = T * mb * world_size
        if self.batch_tokens % unit == 0:
            return self.batch_tokens // unit
        lower, upper = (self.batch_tokens // unit) * unit, (self.batch_tokens // unit + 1) * unit
        near = ", ".join(str(v) for v in (lower, upper) if v > 0)
        per_seq = T * world_size
        msg = (f"batch_tokens={self.batch_tokens} is not a multiple of data.seq_len x micro_batch_size x world_size "
               f"= {T} x {mb} x {world_size} = {unit}, so gradient accumulation would not be a whole number; "
               f"use batch_tokens={near.replace(', ', ' or batch_tokens=')}")
        if self.batch_tokens % per_seq == 0:
            n = self.batch_tokens // per_seq
            divisors = [d for d in range(1, min(n, 4096) + 1) if n % d == 0]
            msg += f", or micro_batch_size one of {', '.join(map(str, divisors[:12]))}{' ...' if len(divisors) > 12 else ''}"
        raise ConfigError(msg)

    def resolved(self) -> "RunConfig":
        """Copy with the model's None defaults made explicit (what the run folder records)."""
        return replace(self, model=self.model.resolved())


# --------------------------------------------------------------------------------------------
# loading


def _section_hint(raw: dict) -> None:
    """An unknown top-level key that is a field of a section gets a 'did you mean section.key' message."""
    top = {f.name for f in fields(RunConfig)}
    sections = {"model": ModelConfig, "data": DataConfig, "optim": OptimConfig, "schedule": ScheduleConfig}
    for key in raw:
        if key in top:
            continue
        for section, cls in sections.items():
            if key in {f.name for f in fields(cls)}:
                raise ConfigError(f"unknown key '{key}' in RunConfig; did you mean '{section}.{key}'?")


def data_meta(path: str | Path) -> PreparedMeta | None:
    """meta.json of a prepared data dir (checked: a damaged or foreign one is a UserError), or None if there is none."""
    return find_meta(path)


def build_run_config(raw: dict, check_data: bool = True) -> RunConfig:
    """RunConfig from a plain nested dict (YAML + overrides already applied).

    Applies ``model.preset``, fills ``model.vocab_size`` from the data when it is null/absent, makes
    ``data.path`` absolute, and (``check_data``) checks the model's vocabulary covers the data's. ``check_data`` is a
    switch: 'no' was read as true and the check ran, the opposite of what was written (issue 30 round 24, W426).
    """
    from .value_rules import check_switches

    check_switches("build_run_config", check_data=check_data)
    raw = copy.deepcopy(raw)
    if not isinstance(raw.get("model", {}), dict) or not isinstance(raw.get("data", {}), dict):
        raise ConfigError("'model' and 'data' must be sections of keys (for example model: {preset: cpu-tiny})")
    _section_hint(raw)
    model = dict(raw.get("model") or {})
    name = model.pop("preset", None)
    if name is not None:  # `model.preset=''` was read as no preset (issue 30 round 29, V67)
        model = {**preset_dict_named("model.preset", str(name)), **model}
    data = dict(raw.get("data") or {})
    given = data.get("path", DataConfig.path)
    if isinstance(given, bool) or not isinstance(given, (str, os.PathLike, int)):
        # a list or a section was made text and looked for as a folder named "['data']" (issue 30 round 9, M53)
        raise ConfigError(f"data.path: expected the path of a prepared data folder (text), got {given!r}")
    if given == "":  # resolved as '.', "'.' has no meta.json" named a folder the user never gave (round 9, M82)
        raise ConfigError("data.path is empty; set it to a prepared data directory (leviathan prepare)")
    if "\x00" in str(given):  # a YAML "\0" in a file, an override or a grid: realpath's raw ValueError (round 28, T4, T5)
        raise ConfigError(f"data.path {str(given)!r} holds a NUL byte (character {str(given).index(chr(0)) + 1}), which "
                          f"no folder name can hold; remove it (a \"\\0\" in a quoted YAML value is one)")
    data_path = Path(str(given)).expanduser()
    # os.path.realpath, not Path.resolve: a link that loops raised pathlib's "Symlink loop" RuntimeError here, which
    # the CLI read as a failed write and named with the output's fix, "choose another location (--run-dir)" / "(--out)"
    # (round 35, AH40, AH49); the loop is now named below as the input it is (``data_folder_problem``)
    data["path"] = os.path.realpath(data_path)
    meta = data_meta(data_path)
    if model.get("vocab_size") is None:
        if meta is None:  # any other mistake of the config first (an unknown key is the likelier cause): vocab 1 fits all
            from_dict(RunConfig, {**raw, "model": {**model, "vocab_size": 1}, "data": data})
            if os.path.lexists(data_path) or missing(data_path) != "does not exist":  # round 10 (Q141); a corpus
                # folder: "set model.vocab_size" only led to the next refusal, whose fix was then to prepare into the
                # corpus itself (round 20, K187); a name too long or a file above it named so (round 33, AD36, AD37)
                raise ConfigError(f"data.path {str(data_path)!r} {data_folder_problem(data_path)}")
            raise ConfigError(
                f"model.vocab_size is null, which means 'take it from the data', but {str(data_path)!r} has no "
                f"meta.json; prepare the data first (leviathan prepare) or set model.vocab_size")
        model["vocab_size"] = meta.vocab_size
    raw["model"], raw["data"] = model, data
    cfg = from_dict(RunConfig, raw)
    if check_data and meta is not None:
        check_vocab(cfg, meta)
    return cfg


def check_run_config(cfg: RunConfig) -> RunConfig:
    """ConfigError naming the field and its range when a RunConfig edited in Python after it was built breaks a rule
    ``load_run_config`` checks a file and its overrides by: every field is read again as a file's would be
    (``from_dict`` of ``to_dict``: kinds, finite numbers, each section's ranges). Issue 30 round 16: ``cfg.max_steps =
    -3`` then ``train(cfg, ...)`` was refused about the warmup with an empty range "[0, -3]" (C248), and
    ``cfg.optim.lr = nan`` reached torch's "Invalid learning rate: nan" (C250). Returns the config as read: each value
    of the kind its field holds, as a file's would be (C156: 32.0 is 32): ``cfg.data.seq_len = 32.0`` passed the check
    and the float reached ``range()`` at step 1, a TypeError traceback after the run folder was written (round 17,
    E23); train runs the copy returned, so its config.yaml records what ran."""
    return from_dict(RunConfig, to_dict(cfg))


def check_vocab(cfg: RunConfig, meta: PreparedMeta) -> None:
    data_vocab = meta.vocab_size
    if cfg.model.vocab_size < data_vocab:
        raise ConfigError(
            f"model.vocab_size={cfg.model.vocab_size} is smaller than the data's vocabulary ({data_vocab}, tokenizer "
            f"{meta.tokenizer!r}); set model.vocab_size={data_vocab} (or null to take it from the data)")


def load_run_config(path: str | Path | None, overrides: Sequence[str] = (), check_data: bool = True, *,
                    layered: bool = False) -> RunConfig:
    """Read a YAML file (or start empty when ``path`` is None), apply ``key.sub=value`` overrides, validate. ``path`` is
    a file or the name of a train config (``leviathan.configs``' lookup: ``tiny``).

    A key the overrides set twice (``max_steps=2``, ``max_steps=5``; ``optim.lr=1e-3``, ``optim={lr: 2e-3}``) is a
    ConfigError naming both, as ``sweep`` refuses it: only one can hold (issue 30 round 18, G184-G187: the last won
    without a word). ``layered=True`` is for a list that layers settings on purpose (a grid's base, then a size's,
    then the run's): the last value wins.
    """
    from .value_rules import check_switches

    check_switches("load_run_config", check_data=check_data, layered=layered)  # 'no' was true (round 24, W426)
    if path is not None:  # None is the empty start; 123 was os.fspath's bare TypeError (round 20, M340)
        from .value_rules import check_read_path

        check_read_path("load_run_config", "path", path, "pass a train config's name (tiny), its YAML file, or None")
    listed = override_list(overrides)
    found = find_train_config(path) if path is not None else None
    raw: dict[str, Any] = load_yaml(found) if found is not None else {}
    if set(raw) - {f.name for f in fields(RunConfig)} and (other := other_settings_file(raw, "run config", found)):
        raise ConfigError(other)  # a grid given to train (round 16, C263)
    apply_overrides(raw, listed)
    cfg = build_run_config(raw, check_data=check_data)  # a value's own problem is named first
    if not layered:  # G184-G187: `max_steps=2 max_steps=5` trained 5 steps without a word (sweep refused it)
        check_repeated_overrides(listed, where="in the overrides")
    return cfg
