"""Whose folder a public ``save_pretrained`` may write into (issue 30 round 18, G244-G249).

    check_save_directory(save_directory, "save_pretrained")   # before an API save_pretrained writes anything

The rule is ``ownership``'s, as for ``Tokenizer.save``: no folder that is or lies inside a verb's output, and no file
written over that an earlier ``save_pretrained`` did not write (``save_folder``'s module docstring tells the damage it
stopped). A module of its own so that ``LeviathanConfig.save_pretrained`` asks the same rule as the model saves
(issue 30 round 32, AC281-AC285) without importing the model saver, which reads the config's token-id rules.
"""

from __future__ import annotations

import contextlib
import contextvars

import os
import re
from pathlib import Path

from .. import json_text

# what save_pretrained writes into its folder (weights sharded or not, safetensors or torch)
SAVED_FILES = ("config.json", "generation_config.json", "leviathan_save.json", "model.safetensors",
               "model-*.safetensors", "model.safetensors.index.json", "pytorch_model*.bin", "pytorch_model.bin.index.json")

# every weights file or index a loader reads, of any variant and either format: what other settings must not reach
# (save_folder._refuse_other_settings, a model save's rule; config_save.keep_weights_config, a config save's)
LOADABLE = re.compile(r"^(?:model(?:\.[^/]+)?\.safetensors|pytorch_model(?:\.[^/]+)?\.bin|"
                      r"(?:model\.safetensors|pytorch_model\.bin)\.index(?:\.[^/]+)?\.json)$")


def check_save_directory(save_directory: str | os.PathLike, who: str) -> None:
    """UserError when ``who`` (``save_pretrained``) would write into a verb's output or over a file it did not write
    (see the module docstring), or into a folder typed with a last '..' (``empty_paths.refuse_folder_above``)."""
    from ..empty_paths import refuse_folder_above
    from ..ownership import check_api_folder, check_path_given

    check_path_given(save_directory, who)
    refuse_folder_above(save_directory, who)  # 't/a/..' wrote among t's files (round 28, U770)
    check_api_folder(save_directory, who, SAVED_FILES, legacy=_saved_here)


def _saved_here(directory: Path) -> bool:
    """Whether ``directory`` holds an earlier ``save_pretrained``: a config.json that is a model's (a JSON object with
    a ``model_type``); a user's own config.json (``{"mine": 1}``) is not one."""
    try:
        config = json_text.read_file(directory / "config.json")
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and isinstance(config.get("model_type"), str)


# set while a model's own save writes its config.json into the save's temporary folder (``model_save``)
_MODEL_SAVE: "contextvars.ContextVar[bool]" = contextvars.ContextVar("leviathan_model_save", default=False)


@contextlib.contextmanager
def model_save():
    """Marks a model's own ``save_pretrained`` (``LeviathanForCausalLM.save_owned``): transformers writes config.json
    through ``config.save_pretrained`` into the temporary folder the model's save has already placed and checked, so
    ``LeviathanConfig.save_pretrained`` leaves its own place check to it (``in_model_save``). Without this the export
    of a run into RUN/hf was refused: its temporary folder lies inside the run (found by the CI of ff0d53a)."""
    token = _MODEL_SAVE.set(True)
    try:
        yield
    finally:
        _MODEL_SAVE.reset(token)


def in_model_save() -> bool:
    """Whether a model's own save is writing (``model_save``)."""
    return _MODEL_SAVE.get()
