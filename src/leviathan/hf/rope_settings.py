"""The rotary settings of ``adopt``'s source config that round 27's rope check (``adoption_config._check_rope``) did
not read (issue 30 round 28, U151, U155, U156, U167-U169, U171), each one line naming the field, value and range.

    check_rope_numbers(rope, rope_type, name)   # a rope dict's own numbers, per rope type
    check_rope_lists(rope, name, width)          # longrope's factor lists
    check_rope_read(config, name, dicts)         # the rope dict there, and no value set beside it that it ignores
    check_rotary_dim(config, name, head_dim)     # GPT-J / CodeGen's rotary_dim: even, at most the head width

Found taken: a dynamic rope of factor 0.5 (a stretch that shrinks; transformers' own rope validation asks >= 1 of
the stretching types, but only logs it), a llama3 rope with ``low_freq_factor == high_freq_factor`` (its smoothing
divides by their difference), StableLm's ``partial_rotary_factor = 0.0`` set after building (transformers 5's models
read the rope dict, which kept 0.25: the value set was ignored without a word). Found as raw errors: yarn's
``beta_fast=-1`` (math's "domain error"), ``rope_parameters = None`` set after (Llama's "'NoneType' object is not
subscriptable"), GPT-J's ``rotary_dim`` 3 (odd) or 64 (past the head width 8: a shape error at the first forward).
Footgun: a linear factor keeps round 27's rule (> 0): below 1 it spreads positions out, an extrapolation but a
defined one.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from ..value_rules import check_whole, number_problem

# the rope types whose factor stretches the context (transformers' rope validation: >= 1)
STRETCHING = ("dynamic", "yarn", "longrope", "llama3")
# a rope dict's own numbers, each a finite number > 0 where present: an example for the fix
ROPE_SCALES = {"beta_fast": 32.0, "beta_slow": 1.0, "attention_factor": 1.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0}
# (the larger, its default, the smaller, its default): transformers divides by (or ramps over) their difference
ROPE_ORDER = (("beta_fast", 32.0, "beta_slow", 1.0), ("high_freq_factor", None, "low_freq_factor", None))
LISTS = ("short_factor", "long_factor")  # longrope: one factor per rotated pair, each a finite number > 0
SET_AFTER = ("rope_theta", "partial_rotary_factor")  # attributes transformers 5 copies into the rope dict when made
# a family's own spelling of them, read only when the config is made (GPT-NeoX: rotary_pct, rotary_emb_base): one set
# after was ignored without a word, where Phi3's partial_rotary_factor set after is refused (round 30, Y328)
SET_AFTER_SPELLINGS = {"rope_theta": ("rotary_emb_base",), "partial_rotary_factor": ("rotary_pct",)}
_FIX = "set it in the config's rope_parameters"


def check_rope_numbers(rope: dict, rope_type: str, name: str) -> None:
    """A stretching type's ``factor`` >= 1, each of ``ROPE_SCALES`` finite > 0, each pair of ``ROPE_ORDER`` ordered,
    and ``original_max_position_embeddings`` a whole number >= 1 (llama3 and yarn divide by it)."""
    where = f"{name}'s rope_parameters"
    factor = rope.get("factor")
    if rope_type in STRETCHING and factor is not None and not factor >= 1:
        raise UserError(f"adopt: {where} factor (rope_type {rope_type!r}) must be >= 1 (the context it stretches "
                        f"to, over the original), got {factor!r}; {_FIX} (e.g. factor=2.0)")
    for key, example in ROPE_SCALES.items():
        value = rope.get(key)
        if value is not None and (problem := number_problem(value, above=0.0, shown="a finite number > 0")):
            raise UserError(f"adopt: {where} {key} (rope_type {rope_type!r}) {problem}; {_FIX} (e.g. "
                            f"{key}={example}, or leave it out)")
    for high, high_default, low, low_default in ROPE_ORDER:
        big, small = rope.get(high, high_default), rope.get(low, low_default)
        if big is not None and small is not None and not big > small:
            raise UserError(f"adopt: {where} {high} ({big!r}) must be greater than {low} ({small!r}) (rope_type "
                            f"{rope_type!r} divides by their difference); {_FIX} (e.g. {high}="
                            f"{ROPE_SCALES[high]}, {low}={ROPE_SCALES[low]})")
    if (original := rope.get("original_max_position_embeddings")) is not None:
        check_whole("adopt", f"{where} original_max_position_embeddings", original, 1,
                    fix=f"{_FIX} (the context the model was trained at, e.g. 8192)")


def check_rope_lists(rope: dict, name: str, width: int) -> None:
    """longrope's ``short_factor`` / ``long_factor``: one finite number > 0 per rotated pair (``width // 2``); a
    config checks this when made, not a dict set after (-1 was taken: positions turned backwards)."""
    for key in LISTS:
        factors = rope.get(key)
        if factors is None:
            continue
        bad = not isinstance(factors, (list, tuple)) or len(factors) != width // 2 or any(
            number_problem(value, above=0.0) for value in factors)
        if bad:
            shown = f"{len(factors)} values" if isinstance(factors, (list, tuple)) else type(factors).__name__
            raise UserError(f"adopt: {name}'s rope_parameters {key} must be {width // 2} finite numbers > 0 (one per "
                            f"rotated pair of the {width}-wide rotary part), got {shown}: {str(factors):.60}; {_FIX}")


def check_rope_read(config: Any, name: str, dicts: list[dict]) -> None:
    """``rope_parameters`` there where the family's model reads it (None set after building was a TypeError inside
    the model), and no ``rope_theta`` / ``partial_rotary_factor`` set on the config beside a rope dict holding
    another (the model reads the dict: the value set was ignored). Nested dicts (Gemma 3's per-layer-type ropes)
    hold their own values by design and are not compared."""
    if getattr(config, "rope_parameters", {}) is None and isinstance(_default_rope(config), dict):
        raise UserError(f"adopt: {name}.rope_parameters is None, but {name}'s model reads its rotary settings there; "
                        f"set it (e.g. rope_parameters={{'rope_type': 'default', 'rope_theta': 10000.0}}), or make "
                        f"the config again")
    if len(dicts) != 1:
        return
    for key in SET_AFTER:
        held = dicts[0].get(key)
        for spelled in (key, *SET_AFTER_SPELLINGS.get(key, ())):
            value = getattr(config, spelled, None)
            if value is not None and held is not None and value != held:
                raise UserError(f"adopt: {name}.{spelled} is {value!r:.40}, but its rope_parameters hold "
                                f"{key}={held!r:.40}, the value the model reads (a value set after the config was "
                                f"made is not copied there); {_FIX} (config.rope_parameters[{key!r}] = "
                                f"{value!r:.40})")


def _default_rope(config: Any) -> Any:
    """The rope dict a default config of ``config``'s class holds (None: the family has no rotary embedding)."""
    try:
        return getattr(type(config)(), "rope_parameters", None)
    except (TypeError, ValueError):  # a class that cannot be made without arguments: not read
        return None


def check_rotary_dim(config: Any, name: str, head_dim: int | None) -> None:
    """GPT-J / CodeGen's ``rotary_dim`` (the rotated part of each head) even and at most the head width: 3 or 64
    of an 8-wide head were shape errors at the first forward. None rotates the whole head."""
    rotary = getattr(config, "rotary_dim", None)
    if rotary is None or head_dim is None or head_dim < 2:
        return
    if rotary % 2 or rotary > head_dim:
        raise UserError(f"adopt: {name}.rotary_dim must be an even number in [2, {head_dim}] (the head width, "
                        f"hidden_size / heads; rope turns pairs of values), got {rotary!r}; set it in the config "
                        f"(e.g. rotary_dim={head_dim - head_dim % 2}: the whole head)")
