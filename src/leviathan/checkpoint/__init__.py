"""Checkpoints on disk, by what each room does: find a step folder, judge it damaged, read it.

    layout   the names: ``checkpoints/step-XXXXXXXX``, the files a complete one holds, listing them
    misnamed a newer step under a name train does not write, refused (``refuse_misnamed_newer``)
    damage   a damaged newest step folder refused, never passed over (``refuse_damaged_newest``)
    find     the step folder a path names (``find_checkpoint``), standing on layout and damage
    state    state.json read back checked, and the fingerprints that tie a folder's files together
    read     weights, tensors, the run config, the tokenizer and the inference loader (``load_model``)

Writing lives with training (``train/checkpoint.py``). The rooms import downwards only (layout <- misnamed <- damage
<- find <- read; state on its own; ``tests/unit/test_import_cycles.py``). This face re-exports what the verbs and tests
use (``ckpt.load_model("runs/tiny")``).
"""

from .damage import refuse_damaged_newest
from .find import find_checkpoint
from .layout import (CHECKPOINTS, FORMAT, REQUIRED, STEP_RE, is_complete, latest_checkpoint, list_checkpoints, step_name,
                     step_of)
from .read import (TOKENIZER_FILES, check_tokenizer, checked_step, load_model, load_model_state, load_run_config,
                   load_tensors, load_tokenizer, load_weights, read_progress, run_config_from_dict,
                   saved_tokenizer)
from .state import StepState, fingerprints, read_step_state, verify_companions

__all__ = ["CHECKPOINTS", "FORMAT", "REQUIRED", "STEP_RE", "TOKENIZER_FILES", "StepState", "check_tokenizer",
           "checked_step", "find_checkpoint", "fingerprints", "is_complete", "latest_checkpoint", "list_checkpoints",
           "load_model", "load_model_state", "load_run_config", "load_tensors", "load_tokenizer", "load_weights",
           "read_progress", "read_step_state", "refuse_damaged_newest", "run_config_from_dict", "saved_tokenizer",
           "step_name", "step_of",
           "verify_companions"]
