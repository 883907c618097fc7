"""ModelConfig: the backbone (Hugging Face LlamaConfig names) plus the input-embedding variant.

Backbone field names are exactly LlamaConfig's (hidden_size, intermediate_size, num_hidden_layers,
num_attention_heads, num_key_value_heads, head_dim, rms_norm_eps, rope_theta,
max_position_embeddings), so a dense model's config maps onto ``transformers.LlamaConfig`` key for
key. Leviathan's own fields are prefixed ``generator_`` (docs/DESIGN.md §2, paper defaults).

Embedding variants (``embedding``): ``dense_tied``, ``dense_untied``, ``leviathan``, ``factorized``
(``embedding_rank`` = e) and ``compositional``, as docs/DESIGN.md §4 defines them.

Options of the input side (issue 29, docs/DESIGN.md §2; defaults are the paper's generator and plain tables):
``embedding_norm`` (RMS-normalised output with a gain starting at ``initializer_range``; tables and generator,
not a tied table), ``generator_init`` (``reference`` | ``table_rms``), ``generator_center``, ``generator_form``
(``paper`` | ``khronos``); see ``model/generator.py``.

Footgun: ``generator_base`` is resolved once from ``vocab_size`` (smallest b with b^k >= V) and then
stored. Growing the vocabulary later must keep the base, otherwise every token's digits change
and the trained generator computes different embeddings. ``resolved()`` fixes it explicitly.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass, replace
from typing import Literal, Optional

from ..config import ConfigError, reading_saved_config, require, require_range
from ..integers import as_int, is_integer
from .embedding_kinds import EMBEDDING_KINDS  # in a leaf module: ownership reads it too (round 22)
from .generator_size import MAX_PARAMETERS, check_size, digits_problem, features_problem, smallest_base
from .size_bounds import MAX_LAYERS, MAX_SIZE

EmbeddingKind = Literal["dense_tied", "dense_untied", "leviathan", "factorized", "compositional"]
GENERATOR_INITS: tuple[str, ...] = ("reference", "table_rms")
GENERATOR_FORMS: tuple[str, ...] = ("paper", "khronos")


def min_base(vocab_size: int, k: int) -> int:
    """Smallest integer b >= 2 with b**k >= vocab_size (paper step 1, docs/DESIGN.md §2). Exact integer arithmetic."""
    # a bool was taken as 1 (issue 30 round 22; smallest_base checks in its own words too)
    require(is_integer(vocab_size) and vocab_size >= 1,
            f"vocab_size must be a whole number, at least 1, got {vocab_size!r}")
    require(is_integer(k) and k >= 1, f"generator_k must be a whole number, at least 1, got {k!r}")
    return smallest_base(vocab_size, k)


# The float settings' ranges: only > 0 was checked, and ln_eps / rms_norm_eps 1e300 made every input embedding one
# row or every RMSNorm output ~0, initializer_range 1e300 and rope_theta 1e-300 a loss of nan blamed on the lr
# (issue 30 round 15, A169, A172, A173, A174). Far wider than any model of the paper or Hugging Face uses.
MAX_HIDDEN_SIZE = 2**16  # 4x the widest released models (16,384); the presets use 64 to 2,048

FLOAT_RANGES = {"rope_theta": (1.0, 1e12), "rms_norm_eps": (1e-30, 0.1), "initializer_range": (1e-8, 1.0),
                "generator_ln_eps": (1e-30, 0.1)}


@dataclass
class ModelConfig:
    """A LLaMA-style decoder with a pluggable input embedding.

    Args:
        vocab_size: rows of the output head (and of a dense input table). o200k_base has 200,019.
        hidden_size: model width D.
        intermediate_size: SwiGLU hidden width; None means 8/3 * D rounded up to a multiple of 64.
        num_hidden_layers: decoder blocks.
        num_attention_heads: query heads; must divide hidden_size unless head_dim is given.
        num_key_value_heads: key/value heads for grouped-query attention; None means = query heads.
        head_dim: per-head width; None means hidden_size // num_attention_heads.
        max_position_embeddings: longest sequence the model accepts.
        rope_theta: rotary base.
        rms_norm_eps: RMSNorm epsilon (HF default 1e-6).
        initializer_range: std of the normal init of dense weights.
        embedding: which input side, see module docstring.
        embedding_rank: inner width e of the ``factorized`` table.
        generator_k: index coordinates k (paper 3).
        generator_seed_dim: seed width d_s (paper 128).
        generator_modes: modes M (paper 8).
        generator_knots: knots kappa (paper 32 in v1, 16 also used).
        generator_rank: rank r per mode (paper 64).
        generator_degree: B-spline degree (paper 2, quadratic; 1 and 3 also supported).
        generator_ln_eps: LayerNorm epsilon in each mode.
        generator_base: digit base b; None means the smallest b with b^k >= vocab_size.
    """

    vocab_size: int = 200_019
    hidden_size: int = 512
    intermediate_size: Optional[int] = None
    num_hidden_layers: int = 6
    num_attention_heads: int = 8
    num_key_value_heads: Optional[int] = None
    head_dim: Optional[int] = None
    max_position_embeddings: int = 512
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6
    initializer_range: float = 0.02
    embedding: EmbeddingKind = "leviathan"
    embedding_rank: int = 128
    generator_k: int = 3
    generator_seed_dim: int = 128
    generator_modes: int = 8
    generator_knots: int = 32
    generator_rank: int = 64
    generator_degree: int = 2
    generator_ln_eps: float = 1e-5
    generator_base: Optional[int] = None
    embedding_norm: bool = False
    generator_init: str = "reference"
    generator_center: bool = False
    generator_form: str = "paper"

    # Keys that configs written by older versions hold and this one no longer reads: ``from_dict`` drops
    # them with a warning, so old run folders and checkpoints still load. (Not annotated: not a field.)
    RETIRED_KEYS = {
        "generator_chunk_size": "it was never read (the generator sizes its chunks itself)",
    }

    def __post_init__(self) -> None:
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "max_position_embeddings", "embedding_rank", "generator_k", "generator_seed_dim",
                     "generator_modes", "generator_rank"):
            value = as_int(getattr(self, name))  # numpy integers are integers (round 9, P2); stored as int
            require(is_integer(value) and value > 0, f"model.{name} must be a positive integer, got {value!r}")
            setattr(self, name, value)
        for name in ("intermediate_size", "num_key_value_heads", "head_dim", "generator_base"):
            value = as_int(getattr(self, name))
            require(value is None or (is_integer(value) and value > 0),
                    f"model.{name} must be a positive integer or null, got {value!r}")
            setattr(self, name, value)
        # its own range, before any bound it takes part in: 1e9 was refused as a generator too large, the fix naming
        # only the generator's settings (issue 30 round 25, X59); a saved config is read as it was (require_range)
        require_range(self.hidden_size <= MAX_HIDDEN_SIZE, f"model.hidden_size={self.hidden_size:,} is outside the "
                      f"range any model uses: set it in [1, {MAX_HIDDEN_SIZE:,}] (the presets use 64 to 2,048)")
        self._check_size_bounds()
        require(self.vocab_size <= 2**32, f"model.vocab_size must be at most 4,294,967,296 (prepared token ids are "
                                          f"uint32 at most), got {self.vocab_size:,}")
        require(self.embedding in EMBEDDING_KINDS,
                f"model.embedding must be one of {', '.join(EMBEDDING_KINDS)}, got {self.embedding!r}")
        if self.head_dim is None:
            require(self.hidden_size % self.num_attention_heads == 0,
                    f"model.hidden_size ({self.hidden_size}) must be divisible by model.num_attention_heads "
                    f"({self.num_attention_heads}); change one of them or set model.head_dim")
        require(self.resolved_head_dim % 2 == 0,
                f"head dimension {self.resolved_head_dim} must be even for rotary embeddings")
        require(self.num_attention_heads % self.kv_heads == 0,
                f"model.num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                f"model.num_key_value_heads ({self.kv_heads})")
        # whole numbers said as such: 8.0 was "must be at least 2, got 8.0" (issue 30 round 21, P59), and a degree of
        # 2.0 passed `in (1, 2, 3)` as a float
        self.generator_knots, self.generator_degree = as_int(self.generator_knots), as_int(self.generator_degree)
        require(is_integer(self.generator_knots) and self.generator_knots >= 2,
                f"model.generator_knots must be a whole number, at least 2, got {self.generator_knots!r}")
        require(is_integer(self.generator_degree) and self.generator_degree in (1, 2, 3),
                f"model.generator_degree must be the whole number 1, 2 or 3 (paper: 2), got {self.generator_degree!r}")
        for name, (low, high) in FLOAT_RANGES.items():
            value = getattr(self, name)  # finite: initializer_range=inf built a model of inf weights (round 9, M143)
            require(isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
                    and value > 0, f"model.{name} must be a positive number, got {value!r}"
                    + ("; nan and inf are not settings" if isinstance(value, float) and not math.isfinite(value)
                       else ""))
            require_range(low <= value <= high, f"model.{name}={value:g} is outside the range any model uses: set it "
                                                f"in [{low:g}, {high:g}] (default {getattr(type(self), name):g})")
        self._check_options()
        if self.generator_base is not None:
            require(self.generator_base >= 2, f"model.generator_base must be at least 2, got {self.generator_base}")
            if self.uses_digits:
                require(self.generator_base ** self.generator_k >= self.vocab_size,
                        f"model.generator_base={self.generator_base} with generator_k={self.generator_k} addresses "
                        f"{self.generator_base ** self.generator_k} ids, fewer than vocab_size={self.vocab_size}; "
                        f"raise generator_base or set it to null")
        if self.uses_digits:  # a base or knots past what V ids use (issue 30 round 27, S135, S396)
            problem = digits_problem(self.vocab_size, self.generator_k, self.generator_base, self.generator_knots,
                                     prefix="model.generator_")
            require_range(problem is None, str(problem))
        if self.embedding == "leviathan":
            self._check_generator_size()
            problem = features_problem(self.vocab_size, self.generator_modes, self.generator_rank,
                                       prefix="model.generator_")  # past what V ids use (round 28, U27, U28)
            require_range(problem is None, str(problem))
        if self.embedding == "factorized":
            self._check_factorized_size()

    def _check_size_bounds(self) -> None:
        """The backbone's sizes at most ``size_bounds``' bounds, as adopt's config check holds them: an
        intermediate_size of 10**9 (96 billion body parameters for a width of 32) and 10**7 layers were taken without
        a word (issue 30 round 27, S549, S550). A saved config is read as it was (``require_range``)."""
        for name in ("intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
                     "max_position_embeddings"):
            value, layers = getattr(self, name), name == "num_hidden_layers"
            high = MAX_LAYERS if layers else MAX_SIZE
            if value is None:
                continue
            require_range(value <= high, f"model.{name}={value:,} is outside the range any model uses: "
                          f"set it in [1, {high:,}] (" + ("8x the deepest released model's 126 blocks; the presets use "
                          "2 to 16)" if layers else "past any released model's; larger is a typo)"))

    def _check_factorized_size(self) -> None:
        """The factorized table (V x e, then e x D) fits the bound a generator has (``generator_size``): an
        embedding_rank of 1e9 reached the allocator's traceback asking for 1.2 TB (issue 30 round 15, B207). A rank
        past min(V, D) factorizes nothing: the product is a full V x D table either way, so a rank past both that and
        the default (128, the rank of the paper-size models) is refused: 10**6 for a 300 x 32 table was accepted, 332M
        parameters and 1.2 GB for CausalLM (issue 30 round 24, W21). The default stays valid on the small presets
        (cpu-tiny's D of 64) that the tests and grids build it on."""
        params = (self.vocab_size + self.hidden_size) * self.embedding_rank
        require(params <= MAX_PARAMETERS, f"model.embedding_rank={self.embedding_rank:,} gives the factorized table "
                f"{params:,} parameters, more than the {MAX_PARAMETERS:,} an input side can use (a rank past the "
                f"smaller of vocab_size and hidden_size factorizes nothing); lower model.embedding_rank (the "
                f"experiment grids use 16 to 128)")
        useful = min(self.vocab_size, self.hidden_size)
        default = ModelConfig.__dataclass_fields__["embedding_rank"].default
        require(self.embedding_rank <= max(useful, default),
                f"model.embedding_rank={self.embedding_rank:,} is past the smaller of vocab_size ({self.vocab_size:,}) "
                f"and hidden_size ({self.hidden_size:,}): a rank past min(V, D) factorizes nothing (the product is the "
                f"full V x D table, with more parameters); set model.embedding_rank to at most {useful:,}")

    def _check_generator_size(self) -> None:
        """The generator these settings build fits in memory (``generator_size``; round 8: generator_rank=10**9
        reached the allocator's traceback, or the machine's memory)."""
        try:
            check_size(self.vocab_size, self.hidden_size, self.generator_k, self.generator_seed_dim,
                       self.generator_modes, self.generator_knots, self.generator_rank, self.generator_base)
        except ValueError as e:  # its fix in this config's keys: "lower hidden_size, rank or modes" (round 25)
            head, _, fix = str(e).partition("; lower ")
            keys = re.sub(r"\b(hidden_size|rank|knots|modes|seed_dim|base|k)\b",
                          lambda m: "model." + ("" if m[1] == "hidden_size" else "generator_") + m[1], fix)
            require(False, f"model.generator_*: {head}; lower {keys}" if fix else f"model.generator_*: {e}")

    def _check_options(self) -> None:
        """The input-side options: their values, and that they apply to this embedding variant."""
        from ..value_rules import switch_problem

        for name in ("embedding_norm", "generator_center"):  # one switch rule with LeviathanGenerator and adopt:
            require(switch_problem(getattr(self, name)) is None,  # numpy's bool was refused here, "must be true or
                    f"model.{name} must be true or false, got {getattr(self, name)!r}")  # false, got np.True_" (U19)
            setattr(self, name, bool(getattr(self, name)))  # stored as bool: a saved config.json holds true or false
        require(self.generator_init in GENERATOR_INITS,
                f"model.generator_init must be one of {', '.join(GENERATOR_INITS)}, got {self.generator_init!r}")
        require(self.generator_form in GENERATOR_FORMS,
                f"model.generator_form must be one of {', '.join(GENERATOR_FORMS)}, got {self.generator_form!r}")
        changed = [f"{n}={getattr(self, n)!r}" for n, default in (("generator_init", "reference"),
                   ("generator_center", False), ("generator_form", "paper")) if getattr(self, n) != default]
        require(not changed or self.embedding == "leviathan",
                f"model.{', model.'.join(changed)}: generator options, for embedding=leviathan only (got "
                f"{self.embedding!r}); remove them or set model.embedding=leviathan")
        require(not self.embedding_norm or self.embedding in ("dense_untied", "leviathan"),
                f"model.embedding_norm applies to dense_untied and leviathan, not {self.embedding!r} (a tied table "
                "would feed the head an unnormalised matrix); set model.embedding=dense_untied or drop the option")

    # ---- derived values (never stored twice) ------------------------------------------------
    @property
    def resolved_head_dim(self) -> int:
        return self.head_dim if self.head_dim is not None else self.hidden_size // self.num_attention_heads

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads if self.num_key_value_heads is not None else self.num_attention_heads

    @property
    def resolved_intermediate_size(self) -> int:
        if self.intermediate_size is not None:
            return self.intermediate_size
        return 64 * ((8 * self.hidden_size // 3 + 63) // 64)

    @property
    def tie_word_embeddings(self) -> bool:
        return self.embedding == "dense_tied"

    @property
    def uses_digits(self) -> bool:
        return self.embedding in ("leviathan", "compositional")

    @property
    def base(self) -> int:
        """Digit base b (paper step 1, docs/DESIGN.md §2)."""
        if self.generator_base is not None:
            return self.generator_base
        return min_base(self.vocab_size, self.generator_k)

    @property
    def id_capacity(self) -> int:
        """Number of ids the input side can embed: b^k for digit-based inputs, else vocab_size."""
        return self.base ** self.generator_k if self.uses_digits else self.vocab_size

    def resolved(self) -> "ModelConfig":
        """Copy with every None default made explicit (what a run folder records)."""
        return replace(
            self,
            intermediate_size=self.resolved_intermediate_size,
            num_key_value_heads=self.kv_heads,
            head_dim=self.resolved_head_dim,
            generator_base=self.base if self.uses_digits else self.generator_base,
        )

    def with_vocab_size(self, vocab_size: int) -> "ModelConfig":
        """Same model for a larger vocabulary, keeping the digit base (see module footgun)."""
        vocab_size = as_int(vocab_size)  # '400' was Python's "'>' not supported" (issue 30 round 25, Y23)
        require(is_integer(vocab_size) and vocab_size > 0,
                f"with_vocab_size: vocab_size must be a positive integer (as ModelConfig's vocab_size), got "
                f"{type(vocab_size).__name__} {vocab_size!r:.40}; pass the new number of token ids")
        cfg = self.resolved()
        if cfg.uses_digits and vocab_size > cfg.id_capacity:
            raise ConfigError(
                f"vocab_size {vocab_size} exceeds the generator's capacity b^k = {cfg.base}^{cfg.generator_k} "
                f"= {cfg.id_capacity}; a larger vocabulary needs a new generator (larger generator_base)")
        with reading_saved_config():  # the base is kept, not chosen: past the largest a smaller V uses is no typo
            return replace(cfg, vocab_size=vocab_size)
