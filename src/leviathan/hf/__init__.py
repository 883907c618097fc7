"""Hugging Face integration: config, model adapter, Auto-class registration, export, adoption.

``import leviathan.hf`` registers ``LeviathanConfig`` (model_type ``"leviathan"``) with ``AutoConfig`` and
``LeviathanForCausalLM`` with ``AutoModelForCausalLM``, so a directory written by ``export.to_hf`` loads with
``AutoModelForCausalLM.from_pretrained(dir)``: no remote code, but the loading process must import ``leviathan.hf``
first (``export.to_plain_llama`` writes a directory that needs neither). ``adopt``, ``load_adopted`` and
``bake_adopted`` put the generator into any transformers causal LM and back (``adoption.py``, docs/USING.md).
"""

from transformers import AutoConfig, AutoModelForCausalLM

from . import export
from .adoption import (ScaledLeviathanGenerator, adopt, adopted_class, bake_adopted, is_adopted, load_adopted,
                       to_original)
from .adoption_fit import Fit, FitReport
from .checkpoint_record import RecordCheckpointFiles
from .configuration import LeviathanConfig
from .modeling import InputEmbeddingError, LeviathanForCausalLM, LeviathanPreTrainedModel
from .trainer_resume import check_resume_checkpoint

AutoConfig.register(LeviathanConfig.model_type, LeviathanConfig, exist_ok=True)
AutoModelForCausalLM.register(LeviathanConfig, LeviathanForCausalLM, exist_ok=True)

__all__ = ["LeviathanConfig", "LeviathanForCausalLM", "LeviathanPreTrainedModel", "InputEmbeddingError", "export",
           "adopt", "adopted_class", "bake_adopted", "is_adopted", "load_adopted", "to_original",
           "ScaledLeviathanGenerator", "Fit", "FitReport", "check_resume_checkpoint", "RecordCheckpointFiles"]
