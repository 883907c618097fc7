"""The largest size a model's config takes, one bound for ``ModelConfig`` and for the config ``adopt`` builds from.

    MAX_SIZE    # 2**24: vocabulary, widths, heads, positions; larger is a typo (10**9), not a model
    MAX_LAYERS  # 1,024 decoder blocks

Both paths refused 0 and negative sizes, but only adopt's check (``hf/adoption_config``) had an upper bound:
``ModelConfig(intermediate_size=10**9)`` and ``num_hidden_layers=10**7`` were taken without a word, 96 and 164
billion body parameters for a width of 32 (issue 30 round 27, S549, S550). Footgun: these refuse typos, not a model
too large for memory (the memory pre-flight says that); ``ModelConfig.hidden_size`` keeps its own, tighter bound.
"""

from __future__ import annotations

MAX_SIZE = 2**24  # 16,777,216: above any vocabulary, width, head count or context a causal LM has; larger is a typo
MAX_LAYERS = 1024  # 8x the deepest released causal LM (Llama 3.1 405B: 126 blocks); the presets use 2 to 16
