"""Parameter and FLOP accounting by named group, and the isoparametric depth solver (docs/DESIGN.md §4-5).

Groups: ``input`` (the input side: table, factorised table, codebooks or generator), ``body``
(decoder blocks and the final norm), ``head`` (the output matrix). They sum to ``total``. A tied
matrix is counted once, in ``input``; the head of a dense_tied model is then 0 and ``tied`` is True.

Counts are computed analytically from a ``ModelConfig`` (instant even for the paper's 200k x 2048
configurations, no weights allocated) and, for a built model, from its named parameters;
``tests/unit/test_accounting.py`` checks both agree for every variant.

FLOPs are forward multiply-adds x 2 per token (training ~ 3x). The generator's cost depends on the
number of distinct ids in a batch, not on tokens, so it is reported per distinct id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from ..codec import decode, encode_fields, extra_keys
from ..errors import ArgumentTypeError
from .config import ModelConfig

if TYPE_CHECKING:  # counting from a config needs no torch; the package's light readers import this module
    from torch import nn


@dataclass(frozen=True)
class ParamCounts:
    """Parameters by group (docs/DESIGN.md §5): ``input + body + head == total``; a tied head is counted in
    ``input`` (``head`` 0, ``tied`` True). The one parameter-count type of the package: accounting, the
    training summary, the grid's runs and the results rows all carry it.

    ``total`` is the sum of the groups unless given; a group is None only in a record read back without it
    (``from_dict``: an early results row may hold only a total). Keys a record holds beyond these are kept
    in ``extra`` and written back by ``as_dict``."""

    input: Optional[int] = None
    body: Optional[int] = None
    head: Optional[int] = None
    total: Optional[int] = None
    tied: Optional[bool] = None
    extra: dict = extra_keys()

    KEYS = ("input", "body", "head", "total", "tied")  # the written form, in order

    def __post_init__(self) -> None:
        if self.total is None and None not in (self.input, self.body, self.head):
            object.__setattr__(self, "total", self.input + self.body + self.head)

    def as_dict(self) -> dict:
        """The written form: input, body, head, total, tied (then any ``extra`` keys)."""
        return encode_fields(self)

    @classmethod
    def from_dict(cls, d: Mapping | ParamCounts | None) -> ParamCounts | None:
        """Counts from their written form; missing keys are None, values are kept as written. None or {} -> None."""
        if not d or isinstance(d, ParamCounts):
            return d or None
        return decode(cls, d)


def generator_params(cfg: ModelConfig) -> int:
    """k b d_s + M (d_s^2 + 2 d_s) + M d_s kappa r + M r D (docs/DESIGN.md §2, parameter count), plus the KHRONOS
    form's knot scales (M d_s) and output bias (D). The ``center`` option is a buffer, not a parameter."""
    k, b, d, M = cfg.generator_k, cfg.base, cfg.generator_seed_dim, cfg.generator_modes
    khronos = M * d + cfg.hidden_size if cfg.generator_form == "khronos" else 0
    return k * b * d + M * (d * d + 2 * d) + M * d * cfg.generator_knots * cfg.generator_rank \
        + M * cfg.generator_rank * cfg.hidden_size + khronos


def input_params(cfg: ModelConfig) -> int:
    """The input side's parameters; ``embedding_norm`` adds its gain (D)."""
    return _input_params(cfg) + (cfg.hidden_size if cfg.embedding_norm else 0)


def _input_params(cfg: ModelConfig) -> int:
    V, D = cfg.vocab_size, cfg.hidden_size
    if cfg.embedding in ("dense_tied", "dense_untied"):
        return V * D
    if cfg.embedding == "factorized":
        return V * cfg.embedding_rank + cfg.embedding_rank * D
    if cfg.embedding == "compositional":
        return cfg.generator_k * cfg.base * cfg.generator_seed_dim + cfg.generator_seed_dim * D
    return generator_params(cfg)


def layer_params(cfg: ModelConfig) -> int:
    D, F, hd = cfg.hidden_size, cfg.resolved_intermediate_size, cfg.resolved_head_dim
    attn = D * cfg.num_attention_heads * hd * 2 + D * cfg.kv_heads * hd * 2  # q, o + k, v
    return attn + 3 * D * F + 2 * D  # + SwiGLU + two RMSNorms


def count_config(cfg: ModelConfig) -> ParamCounts:
    """Analytic parameter counts for a configuration (TypeError for anything but a ``ModelConfig``: a preset's name
    ended in an AttributeError, issue 30 round 8)."""
    if not isinstance(cfg, ModelConfig):
        raise ArgumentTypeError(
            f"count_config takes a ModelConfig, got {type(cfg).__name__} {cfg!r:.60}; for a preset, "
            f"count_config(leviathan.presets.preset(NAME)) or `leviathan params --preset NAME`")
    body = cfg.num_hidden_layers * layer_params(cfg) + cfg.hidden_size
    head = 0 if cfg.tie_word_embeddings else cfg.vocab_size * cfg.hidden_size
    return ParamCounts(input=input_params(cfg), body=body, head=head, tied=cfg.tie_word_embeddings)


def count_model(model: nn.Module) -> ParamCounts:
    """Counts from a built ``CausalLM`` by parameter name; each tensor once."""
    import torch

    # count_model('x') (round 13, W103) and count_model(nn.Linear(3, 3)) (round 18, G385) were AttributeErrors
    if not isinstance(model, torch.nn.Module) or not (isinstance(getattr(model, "lm_head", None), torch.nn.Module) and
                                                      hasattr(getattr(model, "model", None), "embed_tokens")):
        raise ArgumentTypeError(
            f"count_model takes a built model (a causal LM: an nn.Module with model.embed_tokens and "
            f"lm_head, such as CausalLM), got {type(model).__name__} {model!r:.60}; for a config use "
            f"count_config")
    groups = {"input": 0, "body": 0, "head": 0}
    seen = set()
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in seen:
            continue
        seen.add(id(p))
        if name.startswith("model.embed_tokens."):
            groups["input"] += p.numel()
        elif name.startswith("lm_head."):
            groups["head"] += p.numel()
        else:
            groups["body"] += p.numel()
    tied = model.lm_head.weight is getattr(model.model.embed_tokens, "weight", None)
    return ParamCounts(tied=tied, **groups)


def flops_per_token(cfg: ModelConfig, seq_len: int | None = None) -> dict:
    """Forward FLOPs per token by group (2 per multiply-add), plus the generator per distinct id, for sequences of
    ``seq_len`` positions (None: ``max_position_embeddings``). ``seq_len`` past the model's positions is refused: it
    returned FLOPs for sequences the model cannot take, which ``CausalLM`` refuses since round 21 (issue 30 round 22,
    S467); -1 gave a negative attention term (round 11, S155)."""
    from ..errors import ArgumentValueError
    from ..integers import is_integer

    if not isinstance(cfg, ModelConfig):  # None ended in an AttributeError (issue 30 round 9, M140)
        raise ArgumentTypeError(f"flops_per_token takes a ModelConfig, got {type(cfg).__name__} {cfg!r:.60}")
    limit = cfg.max_position_embeddings
    if seq_len is not None and (not is_integer(seq_len) or not 1 <= seq_len <= limit):
        raise ArgumentValueError(f"flops_per_token: seq_len must be a positive whole number of positions, at most the "
                                 f"model's max_position_embeddings ({limit:,}), got {seq_len!r}; pass a length the "
                                 f"model takes, or None for {limit:,}")
    T = int(seq_len) if seq_len is not None else limit
    D, hd, H = cfg.hidden_size, cfg.resolved_head_dim, cfg.num_attention_heads
    matmul = layer_params(cfg) - 2 * D
    attention = 2 * 2 * T * H * hd / 2  # QK^T and AV over on average T/2 causal keys
    body = cfg.num_hidden_layers * (2 * matmul + attention)
    head = 2 * cfg.vocab_size * D
    out = {"body": body, "head": head, "input": 0.0}
    if cfg.embedding == "factorized":
        out["input"] = 2 * cfg.embedding_rank * D
    elif cfg.embedding == "compositional":
        out["input"] = 2 * cfg.generator_seed_dim * D
    if cfg.embedding == "leviathan":
        d, M, r, p = cfg.generator_seed_dim, cfg.generator_modes, cfg.generator_rank, cfg.generator_degree
        out["generator_per_distinct_id"] = 2 * M * d * d + 2 * M * d * (p + 1) * r + M * d * r + 2 * M * r * D
        out["generator_literal_per_position"] = 2 * M * d * d + 2 * M * d * cfg.generator_knots * r + M * d * r \
            + 2 * M * r * D
    out["total"] = out["body"] + out["head"] + out["input"]
    return out


@dataclass(frozen=True)
class IsoSolution:
    config: ModelConfig
    target_total: int
    total: int
    max_layers: int = 1024  # the deepest depth the solver considered

    @property
    def gap(self) -> int:
        return self.total - self.target_total

    @property
    def relative_gap(self) -> float:
        return self.gap / self.target_total

    @property
    def bound(self) -> str | None:
        """Why no depth matches the target, when the depth stopped at a bound more than half a layer away from it
        (None when it is the closest depth there is): ``params --isoparametric model.vocab_size=100000000`` printed
        "leviathan iso" at 1,024 layers and half the target, and ``model.vocab_size=2`` at 1 layer, its generator
        alone outweighing the dense table, as if matched (issue 30 round 28, T17)."""
        layers, half = self.config.num_hidden_layers, layer_params(self.config) / 2
        if layers == self.max_layers and -self.gap > half:
            return (f"even {layers:,} layers, the deepest considered, leave it {-self.gap:,} parameters short of the "
                    f"target {self.target_total:,}")
        if layers == 1 and self.gap > half:
            return (f"even 1 layer exceeds the target {self.target_total:,} by {self.gap:,} parameters: the "
                    f"embedding's parameters alone outweigh what the target's table and layers hold")
        return None


def isoparametric_depth(dense: ModelConfig, embedding: str = "leviathan", max_layers: int = 1024) -> IsoSolution:
    """The depth at which ``embedding`` with ``dense``'s width has the total closest to ``dense``'s.

    The paper's example (109M dense with 6 layers vs 108.5M leviathan with 52 layers) spends the input
    table's budget on depth. The paper does not publish that backbone's exact shape; with this
    accounting (SwiGLU width 8/3 D) o200k at width 256 gives 107.2M dense-untied and 67 layers, at
    width 512 224.1M and 37 layers. ``leviathan params --preset NAME --isoparametric`` prints it.
    """
    from ..value_rules import api_check, whole_problem

    # 0 and nan ended in min()'s "arg is an empty sequence", naming no argument (issue 30 round 18, G11, G12)
    api_check("isoparametric_depth", "max_layers", whole_problem(max_layers, 1, "a positive integer"),
              "pass the deepest model to consider, e.g. max_layers=1024 (the default)")
    target = count_config(dense).total
    base = replace(dense, embedding=embedding)
    fixed = count_config(replace(base, num_hidden_layers=1))
    per_layer = layer_params(base)
    fixed_total = fixed.total - per_layer  # everything except the layers
    best = max(1, min(max_layers, round((target - fixed_total) / per_layer)))
    candidates = [n for n in (best - 1, best, best + 1) if 1 <= n <= max_layers]
    layers = min(candidates, key=lambda n: abs(fixed_total + n * per_layer - target))
    cfg = replace(base, num_hidden_layers=layers)
    return IsoSolution(cfg, target, count_config(cfg).total, int(max_layers))


def format_table(rows: list[tuple[str, ModelConfig]]) -> str:
    """A plain-text table of parameter groups for named configurations: ``rows`` a list of (name, ModelConfig) pairs
    (anything else ended in an unpacking error; round 22)."""
    if isinstance(rows, (str, bytes)) or not all(isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], str)
                                                  and isinstance(r[1], ModelConfig) for r in rows):
        from ..errors import ArgumentTypeError

        raise ArgumentTypeError(f"format_table takes a list of (name, ModelConfig) pairs, got {rows!r:.60}; e.g. "
                                f"[('cpu-tiny', leviathan.presets.preset('cpu-tiny'))]")
    header = f"{'model':<28} {'layers':>6} {'input':>14} {'body':>14} {'head':>14} {'total':>14} {'input %':>8}"
    lines = [header, "-" * len(header)]
    for name, cfg in rows:
        c = count_config(cfg)
        head = "tied" if c.tied else f"{c.head:,}"
        lines.append(f"{name:<28} {cfg.num_hidden_layers:>6} {c.input:>14,} {c.body:>14,} {head:>14} "
                     f"{c.total:>14,} {100 * c.input / c.total:>7.2f}%")
    return "\n".join(lines)
