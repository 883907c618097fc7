"""leviathan: small language models whose input embedding table is a learned continuous generator.

Public API (see README):
    ModelConfig, CausalLM                     the model (LLaMA backbone, pluggable input side)
    LeviathanGenerator                        the generator (docs/DESIGN.md §2) as a drop-in nn.Embedding
    count_config, count_model, isoparametric_depth   parameter accounting
"""

from .model.accounting import count_config, count_model, flops_per_token, isoparametric_depth
from .model.config import ModelConfig
from .model.generator import LeviathanGenerator
from .model.llama import CausalLM, KVCache

__version__ = "0.1.0"
__all__ = ["ModelConfig", "CausalLM", "KVCache", "LeviathanGenerator", "count_config", "count_model",
           "flops_per_token", "isoparametric_depth", "__version__"]
