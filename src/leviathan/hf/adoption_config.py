"""The config ``adopt(config, ...)`` builds a fresh model from, checked before transformers builds anything.

    check_source_config(config)   # ArgumentValueError / ArgumentTypeError / UserError naming one setting and its range

``adopt(LlamaConfig(vocab_size=300, hidden_size=0))`` ended in transformers' raw "ZeroDivisionError: 0.0 cannot be
raised to a negative power" from the rotary embedding's ``__init__`` (issue 30 round 26, Q128), and the config's other
sizes the same way: ``hidden_size=-8`` torch's "negative dimension", ``num_key_value_heads=0`` a ZeroDivisionError,
``num_key_value_heads=3`` of 4 heads a shape mismatch at the first forward, ``num_hidden_layers=-1`` "__len__() should
return >= 0"; ``num_hidden_layers=0``, ``intermediate_size=0`` and a rope_theta of 0, -1 or NaN built a model without
a word (no layers, an MLP that adds nothing, NaN rotary angles). A config checks some of these when it is made, but
not a value set on it afterwards (``config.hidden_size = 0``).

Round 27 found the settings that check did not know (S1-S5, S8, S9, S14-S16, S23, S24, S53, S54): the positions
(GPT-2's ``n_positions=-1`` torch's "negative dimension", 0 a model that took 9 positions without a word), the
dropouts (``resid_pdrop=1.5`` torch's raw ValueError, ``attention_dropout=2.0`` at the first training forward), an
activation transformers has not (a KeyError), ``pad_token_id`` past the vocabulary (an AssertionError), a rope_type
transformers has not (a KeyError) or a factor of -2 (taken), a rotary width that rounds to 0 (no rotary positions
at all), Mistral's ``sliding_window`` <= 0 and GPT-2's ``n_inner`` <= 0 (shape errors at the first forward).

Only the settings the config has (and not None: GPT-2's ``n_inner``, Mistral's ``sliding_window`` and a pad id are
optional) are read, by transformers' common names through the config's ``attribute_map`` (a GPT-2 config answers
``max_position_embeddings`` with its ``n_positions``, and is named by that spelling) or the other spellings of
``ALIASES``; activations and rope types are held to transformers' own tables (``ACT2FN``, ``ROPE_INIT_FUNCTIONS``).
Footguns: the upper bounds (``size_bounds``) refuse typos such as 10**9, not a model too large for memory; bos and
eos ids left at the family's default are not checked (GPT2Config keeps its 50,256 whatever vocab_size is given; they
only stop generation, and the save names them); ids a caller gave are (round 30, Y343: ``_check_given_token_ids``).

Round 28 (U135-U178) found a family's own settings unchecked: Granite's scales, Gemma 2's caps, Mixtral's experts,
Qwen2's ``layer_types`` (``family_settings``, one table row each), and rope settings (``rope_settings``).
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import UserError
from ..model.size_bounds import MAX_LAYERS, MAX_SIZE
from ..value_rules import check_whole, number_problem
from .family_settings import ALIASES, check_family_settings, spellings  # noqa: F401 (ALIASES: its table)
from .rope_settings import check_rope_lists, check_rope_numbers, check_rope_read, check_rotary_dim

# the sizes a causal LM's config holds, each a whole number of at least 1: an example for the message, the bound
SIZES = {"vocab_size": (32_000, MAX_SIZE), "hidden_size": (512, MAX_SIZE), "intermediate_size": (1376, MAX_SIZE),
         "num_hidden_layers": (8, MAX_LAYERS), "num_attention_heads": (8, MAX_SIZE),
         "num_key_value_heads": (8, MAX_SIZE), "head_dim": (64, MAX_SIZE), "max_position_embeddings": (2048, MAX_SIZE),
         "sliding_window": (4096, MAX_SIZE), "rotary_dim": (64, MAX_SIZE),
         "moe_intermediate_size": (1408, MAX_SIZE)}  # an expert's MLP width (round 28: 0 a raw RuntimeError)
# what None means for the optional sizes, said with their fix (a value of 0 or below was taken for "none")
UNSET = {"sliding_window": "full attention", "window_size": "full attention", "n_inner": "4 x the width",
         "rotary_dim": "the whole head"}
# a size read only while its switch is on: Qwen2-MoE's default config holds sliding_window=0 with
# use_sliding_window=False (round 28: a valid default config was refused)
SWITCHED = {"sliding_window": "use_sliding_window"}
DROPOUT = re.compile(r"(dropout|pdrop|layerdrop)$")  # resid_pdrop, attention_dropout, hidden_dropout, layerdrop, ...
NORM_EPS = ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon")


def _size_fix(config: Any, shown: str, example: int) -> str:
    """The fix a size's refusal offers, each value one the config takes: GPT-J's rotary_dim is the head width (64
    is past an 8-wide head), and "or None" only where the family's config takes None: GPTJConfig, CodeGenConfig and
    GPTNeoConfig refuse it for rotary_dim and window_size (transformers' strict fields, issue 30 round 29, W72)."""
    unset = f", or None for {UNSET[shown]}" if shown in UNSET and _takes_none(config, shown) else ""
    if shown == "rotary_dim" and (head := _head_width(config)) is not None and head >= 2:
        example, unset = head - head % 2, ": the whole head"  # as check_rotary_dim's own fix
    return f"set it in the config (e.g. {shown}={example}{unset})"


def _takes_none(config: Any, key: str) -> bool:
    """Whether ``config``'s class is made with ``key`` None (a refusal, or a class that needs other arguments: no)."""
    try:
        type(config)(**{key: None})
    except Exception:  # noqa: BLE001 (transformers' StrictDataclassFieldValidationError, a TypeError, ...)
        return False
    return True


def _head_width(config: Any) -> int | None:
    """``head_dim``, else hidden_size / heads (None when the config gives neither)."""
    heads, hidden = getattr(config, "num_attention_heads", None), getattr(config, "hidden_size", None)
    return getattr(config, "head_dim", None) or (hidden // heads if heads and hidden else None)


def check_source_config(config: Any) -> None:
    """One line for the first setting of ``config`` out of its range (module docstring), before the model is built."""
    name = type(config).__name__
    for key, (example, high) in SIZES.items():
        if getattr(config, SWITCHED.get(key, ""), None) is False:
            continue
        for shown, value in spellings(config, key):
            check_whole("adopt", f"{name}.{shown}", value, 1, high, _size_fix(config, shown, example))
    _check_heads(config, name)
    _check_rope(config, name)
    for key in NORM_EPS:
        value = getattr(config, key, None)
        problem = None if value is None else number_problem(value, shown="a finite number >= 0")
        if problem is not None or (value is not None and value < 0):
            raise UserError(f"adopt: {name}.{key} {problem or f'must be a finite number >= 0, got {value!r}'}; set it "
                            f"in the config (e.g. {key}=1e-6)")
    _check_dropouts(config, name)
    _check_activation_and_pad(config, name)
    _check_attention_setting(config, name)
    check_family_settings(config, name)  # Granite's scales, Gemma 2's caps, Mixtral's experts (round 28)


def _check_attention_setting(config: Any, name: str) -> None:
    """The config's ``attn_implementation`` one transformers knows and that runs here (``load_keywords.check_attention``,
    the rule of ``load_adopted``'s keyword): ``adopt(LlamaConfig(..., attn_implementation='flash'))`` was transformers'
    raw "Specified `attn_implementation="flash"` is not supported" from the model's ``__init__`` (issue 30 round 31,
    AA221's kind; ``LeviathanForCausalLM`` asks the same of its config)."""
    from .load_keywords import check_attention

    check_attention(getattr(config, "_attn_implementation", None), f"adopt: {name}")


def _check_dropouts(config: Any, name: str) -> None:
    """Every dropout probability the config holds in [0, 1]: torch's raw "dropout probability has to be between 0 and
    1" came at build (``resid_pdrop=1.5``) or only at the first training forward (``attention_dropout=2.0``)."""
    for key, value in sorted(config.to_dict().items()):
        if not DROPOUT.search(key) or value is None:
            continue
        problem = number_problem(value, shown="a probability in [0, 1]")
        if problem is not None or not 0 <= value <= 1:
            raise UserError(f"adopt: {name}.{key} {problem or f'must be a probability in [0, 1], got {value!r}'}; set "
                            f"it in the config (0.0: no dropout)")


def _check_activation_and_pad(config: Any, name: str) -> None:
    """The activation one of transformers' ``ACT2FN`` (another was its raw KeyError at build), and ``pad_token_id`` an
    id of the vocabulary or None (500 of 300 ids was torch's "Padding_idx must be within num_embeddings")."""
    from transformers.activations import ACT2FN

    from .configuration import token_id_problem

    for shown, value in spellings(config, "hidden_act"):
        if not isinstance(value, str) or value not in ACT2FN:
            raise UserError(f"adopt: {name}.{shown} is {value!r:.40}, not an activation transformers has; set it to "
                            f"one of {', '.join(sorted(ACT2FN))}")
    vocab = getattr(config, "vocab_size", None)
    if vocab is not None and (problem := token_id_problem("pad_token_id", getattr(config, "pad_token_id", None),
                                                          vocab)) is not None:
        raise UserError(f"adopt: {name}.{problem}; set pad_token_id to an id below {vocab:,} (its tokenizer's pad "
                        f"token), or None")
    _check_given_token_ids(config, name, vocab)


def _check_given_token_ids(config: Any, name: str, vocab: int | None) -> None:
    """``bos_token_id`` and ``eos_token_id`` (an id or a list of ids) given to the config: ids of its vocabulary, as
    ``pad_token_id`` is (``configuration.token_id_problem``, the rule ``LeviathanConfig`` and the savers hold):
    ``eos_token_id=[1, 400]`` over 300 ids was adopted without a word, a model whose ``generate`` could never stop at
    400 and whose ``save_pretrained`` then refused it (issue 30 round 30, Y343). Footgun: the family's own default
    left as it is (GPT2Config's 50,256 whatever ``vocab_size`` is given) is not refused here: only the ids a caller
    gave are; the save names a default id past the vocabulary."""
    from .configuration import token_id_problem

    if vocab is None:
        return
    defaults = _class_defaults(config)
    for key in ("bos_token_id", "eos_token_id"):
        value = getattr(config, key, None)
        if key in defaults and value == defaults[key]:
            continue
        if (problem := token_id_problem(key, value, vocab)) is not None:
            shown = f"{problem} (in {key}={value!r:.40})" if isinstance(value, (list, tuple)) else problem
            raise UserError(f"adopt: {name}.{shown}; set {key} to the tokenizer's id (below {vocab:,}), or None")


def _class_defaults(config: Any) -> dict:
    """The bos / eos ids a default config of ``config``'s class holds (empty when the class cannot be made bare)."""
    try:
        bare = type(config)()
    except Exception:  # noqa: BLE001 (a class that needs other arguments: every id is then checked)
        return {}
    return {key: getattr(bare, key, None) for key in ("bos_token_id", "eos_token_id")}


def _check_heads(config: Any, name: str) -> None:
    """The key-value heads divide the attention heads (each serves as many query heads), and without a ``head_dim``
    of its own the heads divide ``hidden_size`` (each head is hidden_size / heads wide)."""
    heads, hidden = getattr(config, "num_attention_heads", None), getattr(config, "hidden_size", None)
    kv_heads = getattr(config, "num_key_value_heads", None)
    if heads is not None and kv_heads is not None and heads % kv_heads:
        raise UserError(f"adopt: {name}.num_key_value_heads must divide num_attention_heads ({heads}), got "
                        f"{kv_heads}; set it to a divisor of {heads} (e.g. {heads}, or 1)")
    if heads is not None and hidden is not None and getattr(config, "head_dim", None) is None and hidden % heads:
        raise UserError(f"adopt: {name}.num_attention_heads must divide hidden_size ({hidden}), got {heads}; set "
                        f"num_attention_heads to a divisor of {hidden} (or head_dim, where the config has one)")


def _check_rope(config: Any, name: str) -> None:
    """The rotary settings the model reads, in each rope dict it has (``rope_dicts``): ``rope_theta`` a finite number
    > 0 (0 or below, or NaN, gave inf or NaN frequencies, so NaN angles), a ``rope_type`` transformers has (another was
    its raw KeyError), a scaling ``factor`` finite > 0 (-2 was taken), ``partial_rotary_factor`` in (0, 1], and a
    rotary width (head_dim x factor, as transformers rounds it down) that is even (rope turns pairs of values) and at
    least 2 (Phi's head_dim 8 x 0.1 rounded to 0: a model with no rotary positions, built without a word); and
    (round 28, ``rope_settings``) the rope dict there where the model reads it, no rope value set beside it that it
    ignores, each rope type's own numbers, and GPT-J's ``rotary_dim``."""
    dicts = rope_dicts(config)
    check_rope_read(config, name, dicts)
    head_dim = _head_width(config)
    check_rotary_dim(config, name, head_dim)
    for rope in dicts:
        theta = rope.get("rope_theta", getattr(config, "rope_theta", None))
        if theta is None:
            continue  # no rotary embedding (GPT-2's learned positions)
        if (problem := number_problem(theta, above=0.0, shown="a finite number > 0")) is not None:
            raise UserError(f"adopt: {name}'s rope_theta {problem}; set it in the config's rope_parameters (e.g. "
                            f"rope_theta=10000.0, the Llama default)")
        _check_rope_type(config, name, rope)
        factor = rope.get("partial_rotary_factor", getattr(config, "partial_rotary_factor", None))
        factor = 1.0 if factor is None else factor
        if (problem := number_problem(factor, above=0.0, shown="a number in (0, 1]")) is not None or factor > 1:
            raise UserError(f"adopt: {name}'s partial_rotary_factor {problem or f'must be in (0, 1], got {factor!r}'}; "
                            f"set it in the config's rope_parameters (1.0 rotates the whole head)")
        width = None if head_dim is None else int(head_dim * factor)
        if width is not None and (width % 2 or width < 2):
            what = "odd, and rope turns pairs" if width % 2 else "no pair of values to turn (no rotary positions)"
            raise UserError(f"adopt: {name}'s rotary width (head_dim x partial_rotary_factor = {head_dim} x "
                            f"{factor:g}, rounded down) is {width}, {what}; choose an even head_dim (or a factor "
                            f"that gives an even width of at least 2)")
        if width is not None:
            check_rope_lists(rope, name, width)


def rope_dicts(config: Any) -> list[dict]:
    """Each rope dict of ``config``: its ``rope_parameters`` (or the older ``rope_scaling``), one per layer type where
    they are nested (Gemma 3's sliding_attention / full_attention); ``[{}]`` for a config with neither, so that an
    older config's own ``rope_theta`` attribute is still read."""
    found: list[dict] = []
    for key in ("rope_parameters", "rope_scaling"):
        rope = getattr(config, key, None)
        if not isinstance(rope, dict) or not rope or any(rope is seen for seen in found):
            continue  # rope_scaling is rope_parameters under its older name on transformers 5's configs
        nested = all(isinstance(value, dict) or value is None for value in rope.values())
        found += [value for value in rope.values() if isinstance(value, dict)] if nested else [rope]
    return found or [{}]


def _check_rope_type(config: Any, name: str, rope: dict) -> None:
    """``rope_type`` (or the older ``type``) one of transformers' ``ROPE_INIT_FUNCTIONS`` or the config's default, and
    a scaling ``factor``, where there is one, a finite number > 0; then the type's own numbers (``rope_settings``)."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope_type = rope.get("rope_type", rope.get("type", "default"))
    known = {"default", getattr(config, "default_rope_type", "default"), *ROPE_INIT_FUNCTIONS}
    if not isinstance(rope_type, str) or rope_type not in known:
        raise UserError(f"adopt: {name}'s rope_parameters rope_type is {rope_type!r:.40}, not a rope transformers "
                        f"has; set it to one of {', '.join(sorted(known))} (or leave it out: default)")
    factor = rope.get("factor")
    if factor is not None and (problem := number_problem(factor, above=0.0, shown="a finite number > 0")) is not None:
        raise UserError(f"adopt: {name}'s rope_parameters factor (rope_type {rope_type!r}) {problem}; set it in the "
                        f"config's rope_parameters (a context scale, e.g. factor=2.0; 1.0 scales nothing)")
    check_rope_numbers(rope, rope_type, name)
