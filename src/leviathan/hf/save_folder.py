"""Whose folder a public ``save_pretrained`` may write into (issue 30 round 18, G244-G249).

    check_save_directory(save_directory, "save_pretrained")   # before an API save_pretrained writes anything

Footgun: transformers' ``save_pretrained`` writes config.json, generation_config.json and the weights into any folder,
over what is there. An adopted model's or ``from_native``'s ``save_pretrained`` wrote over an export's files, a run's
checkpoint weights (which eval then refused as not the files saved with that checkpoint), and a user's own
config.json, and mixed model files into a data or a sweep folder, no word. The rule is ``ownership``'s, as for
``Tokenizer.save``: no folder that is or lies inside a verb's output, and no file written over that an earlier
``save_pretrained`` did not write. ``export`` saves into its own temporary folder (``LeviathanForCausalLM.save_owned``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# what save_pretrained writes into its folder (weights sharded or not, safetensors or torch)
SAVED_FILES = ("config.json", "generation_config.json", "model.safetensors", "model-*.safetensors",
               "model.safetensors.index.json", "pytorch_model*.bin", "pytorch_model.bin.index.json")


def check_save_directory(save_directory: str | os.PathLike, who: str) -> None:
    """UserError when ``who`` (``save_pretrained``) would write into a verb's output or over a file it did not write
    (see the module docstring)."""
    from ..ownership import check_api_folder

    check_api_folder(save_directory, who, SAVED_FILES, legacy=_saved_here)


def _saved_here(directory: Path) -> bool:
    """Whether ``directory`` holds an earlier ``save_pretrained``: a config.json that is a model's (a JSON object with
    a ``model_type``); a user's own config.json (``{"mine": 1}``) is not one."""
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and isinstance(config.get("model_type"), str)
