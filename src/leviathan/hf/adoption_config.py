"""The config ``adopt(config, ...)`` builds a fresh model from, checked before transformers builds anything.

    check_source_config(config)   # ArgumentValueError / ArgumentTypeError / UserError naming one setting and its range

``adopt(LlamaConfig(vocab_size=300, hidden_size=0))`` ended in transformers' raw "ZeroDivisionError: 0.0 cannot be
raised to a negative power" from the rotary embedding's ``__init__`` (issue 30 round 26, Q128), and the config's other
sizes the same way: ``hidden_size=-8`` torch's "negative dimension", ``num_key_value_heads=0`` a ZeroDivisionError,
``num_key_value_heads=3`` of 4 heads a shape mismatch at the first forward, ``num_hidden_layers=-1`` "__len__() should
return >= 0"; ``num_hidden_layers=0``, ``intermediate_size=0`` and a rope_theta of 0, -1 or NaN built a model without
a word (no layers, an MLP that adds nothing, NaN rotary angles). A config checks some of these when it is made, but
not a value set on it afterwards (``config.hidden_size = 0``).

Only the settings the config has (and not None) are read, by transformers' common names (a GPT-2 config answers
``hidden_size`` through its ``attribute_map``: ``n_embd``); a family that names its sizes otherwise is left to
transformers. Footgun: the upper bound (``MAX_SIZE``) refuses typos such as 10**9, not a model too large for memory.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from ..value_rules import check_whole, number_problem

MAX_SIZE = 2**24  # 16,777,216: above any vocabulary, width, depth or head count a causal LM has; larger is a typo
# the sizes a causal LM's config holds, each a whole number of at least 1, with an example for the message
SIZES = {"vocab_size": 32_000, "hidden_size": 512, "intermediate_size": 1376, "num_hidden_layers": 8,
         "num_attention_heads": 8, "num_key_value_heads": 8, "head_dim": 64}
NORM_EPS = ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon")


def check_source_config(config: Any) -> None:
    """One line for the first setting of ``config`` out of its range (module docstring), before the model is built."""
    name = type(config).__name__
    for key, example in SIZES.items():
        value = getattr(config, key, None)
        if value is not None:
            check_whole("adopt", f"{name}.{key}", value, 1, MAX_SIZE, f"set it in the config (e.g. {key}={example})")
    _check_heads(config, name)
    _check_rope(config, name)
    for key in NORM_EPS:
        value = getattr(config, key, None)
        problem = None if value is None else number_problem(value, shown="a finite number >= 0")
        if problem is not None or (value is not None and value < 0):
            raise UserError(f"adopt: {name}.{key} {problem or f'must be a finite number >= 0, got {value!r}'}; set it "
                            f"in the config (e.g. {key}=1e-6)")


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
    """The rotary settings the model reads, where it has them: ``rope_theta`` a finite number > 0 (0 or below, or
    NaN, gave inf or NaN frequencies, so NaN angles), ``partial_rotary_factor`` in (0, 1], and a rotary width
    (head_dim x factor) that is even (rope turns pairs of values)."""
    rope = getattr(config, "rope_parameters", None)
    rope = rope if isinstance(rope, dict) else {}
    theta = rope.get("rope_theta", getattr(config, "rope_theta", None))
    if theta is None:
        return  # no rotary embedding (GPT-2's learned positions)
    if (problem := number_problem(theta, above=0.0, shown="a finite number > 0")) is not None:
        raise UserError(f"adopt: {name}'s rope_theta {problem}; set it in the config's rope_parameters (e.g. "
                        f"rope_theta=10000.0, the Llama default)")
    factor = rope.get("partial_rotary_factor", getattr(config, "partial_rotary_factor", None))
    factor = 1.0 if factor is None else factor
    if (problem := number_problem(factor, above=0.0, shown="a number in (0, 1]")) is not None or factor > 1:
        raise UserError(f"adopt: {name}'s partial_rotary_factor {problem or f'must be in (0, 1], got {factor!r}'}; "
                        f"set it in the config's rope_parameters (1.0 rotates the whole head)")
    heads, hidden = getattr(config, "num_attention_heads", None), getattr(config, "hidden_size", None)
    head_dim = getattr(config, "head_dim", None) or (hidden // heads if heads and hidden else None)
    if head_dim is not None and int(head_dim * factor) % 2:
        raise UserError(f"adopt: {name}'s rotary width (head_dim x partial_rotary_factor = {head_dim} x {factor:g}) "
                        f"is {int(head_dim * factor)}, odd, and rope turns pairs; choose an even head_dim "
                        f"(or a factor that gives an even width)")
