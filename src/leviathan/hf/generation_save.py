"""The generation settings a save writes: the form its own loader takes, or a refusal before anything is written.

    with generation_config_as_saved(model):   # save_pretrained of both Hugging Face classes, bake_adopted
        save_whole(...)

The savers checked ``model.generation_config`` as the Python object it is, while transformers writes its JSON form,
so what was checked was not what was written (issue 30 round 34): ``sequence_bias={(5,): 1.0}`` (the form generate
takes) was written as ``{"(5,)": 1.0}``, which the model's own loader refuses (damage, AG393); numpy numbers (which
generate takes as Python's) were json's raw TypeError (``eos_token_id=np.int64(5)``, ``bad_words_ids=[[np.int64(5)]]``,
AG391, AG392) or refused as no number (``top_k=np.int64(5)``, a bias ``np.float32(1.5)``, ``do_sample=np.bool_(True)``,
AG390, AG394, AG396); a setting of the caller's that is no JSON value (a set) json's raw TypeError (AG399); a
``watermarking_config`` dict (which generate takes) transformers' raw AttributeError from its ``validate`` (AG395).

``saved_settings`` is the copy a save writes: numpy numbers as Python's, ``sequence_bias`` as its list of pairs
(``[[[5], 1.0]]``, which generate and the loader both take), a watermark dict as transformers' ``WatermarkingConfig``;
the model's own object is swapped for it during the save only and put back after. ``json_problem`` names a setting
that has no JSON form. Costs one copy of the settings per save.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any, Iterator


def saved_settings(generation: Any) -> Any:
    """``generation`` (a ``GenerationConfig``) as its save writes it (module docstring); itself when nothing changes,
    else a copy; None stays None."""
    from transformers import GenerationConfig, WatermarkingConfig

    from .configuration import _plain
    from .generate_arguments import _holds_numpy

    if not isinstance(generation, GenerationConfig):
        return generation
    changes = {}
    for name, value in vars(generation).items():
        if _holds_numpy(value):
            changes[name] = _plain(value)
    bias = changes.get("sequence_bias", getattr(generation, "sequence_bias", None))
    if isinstance(bias, dict) and all(isinstance(key, tuple) for key in bias):
        changes["sequence_bias"] = [[list(key), value] for key, value in bias.items()]
    mark = getattr(generation, "watermarking_config", None)
    if isinstance(mark, dict):
        try:
            changes["watermarking_config"] = WatermarkingConfig.from_dict(_plain(mark))
        except Exception:  # keys it does not take: the watermark's own rule names them
            pass
    if not changes:
        return generation
    plain = copy.deepcopy(generation)
    for name, value in changes.items():
        setattr(plain, name, value)
    return plain


def json_problem(generation: Any) -> str | None:
    """Why a setting of ``generation`` (as ``saved_settings`` makes it) has no JSON form: "my_own_setting {1, 2} is no
    JSON value (a set)"; None when every one has."""
    settings = vars(generation) if hasattr(generation, "__dict__") else {}
    for name, value in settings.items():
        if name.startswith("_") or name == "watermarking_config":
            continue
        try:
            json.dumps(value, allow_nan=True)
        except (TypeError, ValueError):
            return f"{name} {value!r:.40} is no JSON value (a {type(value).__name__})"
    return None


@contextlib.contextmanager
def generation_config_as_saved(model: Any) -> Iterator[None]:
    """``model.generation_config`` swapped for ``saved_settings``' copy while the block saves, put back after (also on
    an error): the caller's own object is never changed."""
    held = getattr(model, "generation_config", None)
    plain = saved_settings(held)
    if plain is held:
        yield
        return
    model.generation_config = plain
    try:
        yield
    finally:
        model.generation_config = held
