"""An adopted model's config changed in memory after the load, held to the model it describes before ``generate``
runs on it.

    check_config_in_memory(model, "LeviathanLlamaForCausalLM.generate")
    # ArgumentValueError: ...: model.config.num_hidden_layers is 0, and the model holds 1 decoder layer(s): ...

Issue 30 round 34: ``m.config.num_hidden_layers = 0`` was taken by generate, which made its cache for no layer and
returned other ids without a word (AG224; save_pretrained refused the same config); ``m.config.layer_types = ['x']``
ended in the guard's line about generation arguments, naming none (AG370); ``layer_types = ['sliding_attention']``
with ``sliding_window = -4`` made a cache for a window of -4 positions without a word (AG371). Reads attributes only,
once per call.
"""

from __future__ import annotations

from typing import Any

from ..errors import ArgumentValueError

_AGAIN = "set it back, or load the model again (load_adopted(DIR))"


def check_config_in_memory(model: Any, api: str) -> None:
    """``ArgumentValueError`` naming the first setting of ``model.config`` that no longer describes ``model`` (module
    docstring)."""
    from transformers.configuration_utils import ALLOWED_LAYER_TYPES

    from ..integers import is_integer

    config = getattr(model, "config", None)
    layers = getattr(getattr(model, "model", None), "layers", None)
    count = getattr(config, "num_hidden_layers", None)
    if layers is not None and hasattr(layers, "__len__") and count != len(layers):
        raise ArgumentValueError(f"{api}: model.config.num_hidden_layers is {count!r:.20}, and the model holds "
                                 f"{len(layers)} decoder layer(s): the config was changed after the load; "
                                 f"{_AGAIN}")
    kinds = getattr(config, "layer_types", None)
    if not isinstance(kinds, (list, tuple)):
        return
    if layers is not None and hasattr(layers, "__len__") and len(kinds) != len(layers):
        raise ArgumentValueError(f"{api}: model.config.layer_types names {len(kinds)} layer(s), and the model holds "
                                 f"{len(layers)}: the config was changed after the load; {_AGAIN}")
    if bad := [kind for kind in kinds if kind not in ALLOWED_LAYER_TYPES]:
        raise ArgumentValueError(f"{api}: model.config.layer_types holds {bad[0]!r:.30}, which is no layer type "
                                 f"transformers knows (full_attention, sliding_attention, ...); {_AGAIN}")
    window = getattr(config, "sliding_window", None)
    if "sliding_attention" in kinds and not (is_integer(window) and not isinstance(window, bool) and window > 0):
        raise ArgumentValueError(f"{api}: model.config.layer_types has sliding_attention layers, and "
                                 f"model.config.sliding_window is {window!r:.20}, no window of positions; set it to "
                                 f"a whole number >= 1, or {_AGAIN}")
