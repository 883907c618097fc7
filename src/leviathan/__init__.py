"""leviathan: small language models whose input embedding table is a learned continuous generator.

Public API (see README):
    ModelConfig, CausalLM                     the model (LLaMA backbone, pluggable input side)
    LeviathanGenerator                        the generator (docs/DESIGN.md §2) as a drop-in nn.Embedding
    count_config, count_model, isoparametric_depth   parameter accounting
"""

from .lazy import lazy_exports

__version__ = "0.1.0"
# attributes load on first use (PEP 562): `leviathan --help` and the result readers do not import torch
_EXPORTS = {"ModelConfig": ".model.config", "CausalLM": ".model.llama", "KVCache": ".model.llama",
            "LeviathanGenerator": ".model.generator", "count_config": ".model.accounting",
            "count_model": ".model.accounting", "flops_per_token": ".model.accounting",
            "isoparametric_depth": ".model.accounting"}
__all__ = [*_EXPORTS, "__version__"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
