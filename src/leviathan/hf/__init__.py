"""Hugging Face integration: config, model adapter, Auto-class registration, export.

``import leviathan.hf`` registers ``LeviathanConfig`` (model_type ``"leviathan"``) with ``AutoConfig``
and ``LeviathanForCausalLM`` with ``AutoModelForCausalLM``, so a directory written by
``export.to_hf`` (or ``save_pretrained``) loads with ``AutoModelForCausalLM.from_pretrained(dir)``.
No remote code is shipped: ``trust_remote_code`` is never needed, but the loading process must
import ``leviathan.hf`` first. ``export.to_plain_llama`` writes a directory that needs neither.

``adopt(model_or_config, **generator_settings)`` puts the generator into any transformers causal LM (Llama, Qwen2,
Mistral, Gemma, GPT-2, ...), with ``fit=Fit(...)`` fitted to a trained model's table; ``load_adopted(dir)`` reloads
one, ``bake_adopted(model, dir)`` writes it back as its original class (see ``adoption.py`` and docs/USING.md).
"""

from transformers import AutoConfig, AutoModelForCausalLM

from . import export
from .adoption import (ScaledLeviathanGenerator, adopt, adopted_class, bake_adopted, is_adopted, load_adopted,
                       to_original)
from .adoption_fit import Fit, FitReport
from .configuration import LeviathanConfig
from .modeling import InputEmbeddingError, LeviathanForCausalLM, LeviathanPreTrainedModel

AutoConfig.register(LeviathanConfig.model_type, LeviathanConfig, exist_ok=True)
AutoModelForCausalLM.register(LeviathanConfig, LeviathanForCausalLM, exist_ok=True)

__all__ = ["LeviathanConfig", "LeviathanForCausalLM", "LeviathanPreTrainedModel", "InputEmbeddingError", "export",
           "adopt", "adopted_class", "bake_adopted", "is_adopted", "load_adopted", "to_original",
           "ScaledLeviathanGenerator", "Fit", "FitReport"]
