"""A config's own ``save_pretrained`` held to the model saves' rule: it never replaces the config.json that the
weights beside it were saved with (issue 30 round 35, AI581-AI583, AI586).

    written = keep_weights_config(config, save_directory)   # False: the folder's config.json says this already
    held_config(config)      # an adopted model's config (transformers' class): its save_pretrained follows the rule

Footgun: ``config.save_pretrained(DIR)`` writes config.json into any folder. Into a model folder it replaced the
config.json its weights were saved with, no word: a ``LeviathanConfig`` of rope_theta 10 made the weights load as
another model (other logits, AI581), one of other sizes left the folder unloadable (AI582), a native config saved into
an adopted model's folder dropped its generator settings and their digests (AI583), and one saved into a Trainer
checkpoint changed what resuming it trains (AI586). The model saves refuse exactly this since round 33
(``save_folder._refuse_other_settings``, AE299/AE303). A config save into a folder holding weights is now refused
unless it says what the folder's config.json says (leviathan's records, ``transformers_version`` and the keys left at
their defaults aside); then the folder's file is kept as it is, its records with it, and nothing is written.
Saving into a fresh folder, or a folder holding a config only, stays allowed. An adopted model's config, transformers'
own class, is given the rule by ``held_config`` where adopt and load_adopted make it (AI585, AI588).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from .. import json_text
from ..errors import UserError

# what a save writes beside a model's settings, not one of them: the weights' and settings' records, the version, and
# the name the config was loaded from
_NOT_SETTINGS = ("leviathan_weights_sha256", "leviathan_native_sha256", "transformers_version", "_name_or_path")


def keep_weights_config(config: Any, save_directory: str | os.PathLike) -> bool:
    """UserError when ``save_directory`` holds weights (a file any loader reads, ``save_place.LOADABLE``) beside a
    config.json that says other settings than ``config`` would write; True when the config save may write (no
    weights there, or no config.json), False when the folder's config.json already says what ``config`` would write
    (the caller writes nothing, so the records it holds are kept: AI588's kind)."""
    from .save_place import LOADABLE

    out = Path(save_directory)
    try:
        weights = sorted(name for name in os.listdir(out) if LOADABLE.match(name) and (out / name).is_file())
        if (out / "config.json").is_symlink():  # the save writes through the link: the weights beside its target
            # count (a config-only folder linked to a model's config.json, issue 30 round 36, AK8, AK10)
            target = Path(os.path.realpath(out / "config.json")).parent
            weights += sorted(str(target / name) for name in os.listdir(target)
                              if LOADABLE.match(name) and (target / name).is_file())
    except OSError:  # no folder yet, or a name the system refuses: the save's own write names it
        return True
    if not weights or not (out / "config.json").is_file():
        return True
    try:
        earlier = json_text.read_file(out / "config.json")
    except (OSError, ValueError):
        earlier = None
    new = _settings(config)
    if isinstance(earlier, dict) and _with_defaults(config, earlier) == new:
        return False
    differ = (sorted(k for k in {*earlier, *new} - set(_NOT_SETTINGS)
                     if _with_defaults(config, earlier).get(k) != new.get(k)) if isinstance(earlier, dict) else [])
    shown = ", ".join(weights[:3]) + (f" and {len(weights) - 3} more" if len(weights) > 3 else "")
    kind = earlier.get("model_type") if isinstance(earlier, dict) else None
    said = (f"its config.json is a {kind!r} model's, this config a {new.get('model_type')!r} one's"
            if kind != new.get("model_type") and isinstance(kind, str) else
            f"its config.json differs in {', '.join(differ[:4])}" if differ else
            "its config.json is not one this config can read")
    raise UserError(f"config.save_pretrained: {str(out)!r} holds {shown}, saved with its own config.json, and {said}: "
                    f"writing this config there would make those weights load as another model (or not at all); "
                    f"nothing was written; save the config into another folder (or save the whole model there: "
                    f"model.save_pretrained(DIR))")


def _settings(config: Any) -> dict:
    """The settings ``config`` writes, every field (defaults included), its records and version aside."""
    full = json.loads(config.to_json_string(use_diff=False))
    return {k: v for k, v in full.items() if k not in _NOT_SETTINGS}


def _with_defaults(config: Any, written: dict) -> dict:
    """``written`` (a config.json, saved with the keys left at their defaults dropped) with those defaults put back,
    ``config``'s class's, its records and version aside; a config.json of another model_type is left as it is."""
    if written.get("model_type") != getattr(config, "model_type", None):
        return {k: v for k, v in written.items() if k not in _NOT_SETTINGS}
    try:
        defaults = json.loads(type(config)().to_json_string(use_diff=False))
    except Exception:  # a config class that cannot be made without arguments: compare what is written
        defaults = {}
    return {k: v for k, v in {**defaults, **written}.items() if k not in _NOT_SETTINGS}


def held_config(config: Any) -> Any:
    """``config`` (an adopted model's: transformers' own class, ``Qwen2Config`` holding ``leviathan_generator``) made
    an instance of its class's ``held_class``, whose ``save_pretrained`` follows ``keep_weights_config`` too: such a
    config saved into a native model's folder replaced its config.json (AI585), and the loaded model's own config saved
    back into its folder dropped the weights' sha256 record, so the folder no longer loaded (AI588). Returns
    ``config``, changed in place; a LeviathanConfig (which holds the rule itself) is returned as it is."""
    if getattr(config, "model_type", None) != "leviathan" and not getattr(type(config), "_leviathan_held", False):
        config.__class__ = held_class(type(config))
    return config


@functools.cache
def held_class(cls: type) -> type:
    """The subclass of the config class ``cls`` whose ``save_pretrained`` is ``_held_save`` (one per class, registered
    in this module for pickle). It keeps ``cls``'s ``__name__``: transformers finds a config's model class by its
    class's name (``AutoModelForCausalLM``'s mapping), which must still find the original's."""
    if getattr(cls, "_leviathan_held", False):
        return cls
    qualname = f"Held{cls.__name__}"
    held = type(cls.__name__, (cls,), {"__module__": __name__, "__qualname__": qualname, "_leviathan_held": True,
                                        "save_pretrained": _held_save, "__doc__": cls.__doc__,
                                        "__reduce_ex__": _held_reduce})
    globals()[qualname] = held  # so pickle finds it by name in this process
    return held


def _held_reduce(self, protocol):
    """Pickled as the original class's config and held again when read (``_held_again``): the held class exists only
    in the process that made it, so a config pickled here could not be read in a fresh one."""
    return _held_again, (type(self).__mro__[1], self.__dict__)


def _held_again(cls: type, state: dict) -> Any:
    """The config of class ``cls`` holding ``state``, held (``held_config``): ``_held_reduce``'s reader."""
    config = cls.__new__(cls)
    config.__dict__.update(state)
    return held_config(config)


def _held_save(self, save_directory, push_to_hub: bool = False, **kwargs):
    """transformers' ``save_pretrained`` of the config by ``save_config`` (see ``held_config``), after the switch and
    token rules ``LeviathanConfig.save_pretrained`` holds (AI389, AI330)."""
    from ..value_rules import check_switches, hub_token_problem

    check_switches("save_pretrained", push_to_hub=push_to_hub)
    if (problem := hub_token_problem(kwargs.get("token"))) is not None:
        raise UserError(f"save_pretrained: {problem}; pass the token's text, or leave token out")
    return save_config(self, save_directory, push_to_hub, kwargs, super(type(self), self).save_pretrained)


def save_config(config: Any, save_directory, push_to_hub: bool, kwargs: dict, save) -> Any:
    """Both config classes' ``save_pretrained`` after their own argument checks: ``save`` (transformers' own, bound)
    into a place held to the model saves' rules (``save_place.check_save_directory``), never over the config.json of
    weights (``keep_weights_config``), a storage failure the ``errors.StorageError`` line (``storage.api_writes``).
    ``LeviathanConfig`` had all of it (round 32, AC281-AC285; round 35, AI581); the adopted model's held config only
    the weights rule, so it wrote config.json among a verb's output (a data folder, whose own --overwrite then
    refused it) and None, bytes, a NUL, a file's path or a 300-byte name were raw errors (issue 30 round 36, AK7,
    AK19-AK26). Inside a model's own save (``save_place.in_model_save``) the model's save has placed the folder."""
    from ..storage import api_writes
    from .save_place import check_save_directory, in_model_save

    if in_model_save():
        return save(save_directory, push_to_hub=push_to_hub, **kwargs)
    check_save_directory(save_directory, "save_pretrained")
    if not keep_weights_config(config, save_directory) and not push_to_hub:
        return None  # the folder's config.json says this already: kept, with its records
    made = not os.path.lexists(save_directory)
    with api_writes("save_pretrained", save_directory):
        os.makedirs(save_directory, exist_ok=True)  # a file in its place: the storage line, not an AssertionError
        try:  # as text: transformers splits it for the repo id, a Path was its raw AttributeError (AE260's)
            if push_to_hub:  # the Hub's upload reads the folder itself
                return save(os.fspath(save_directory), push_to_hub=push_to_hub, **kwargs)
            return _save_whole(save, Path(save_directory), kwargs)
        except Exception as e:
            refused = _hub_unreachable(e, save_directory, made) if push_to_hub else None
            if refused is None:
                raise
            raise refused from None


def _save_whole(save, out: Path, kwargs: dict) -> Any:
    """``save`` into a hidden temporary folder inside ``out``, then its config.json renamed over ``out``'s: a save that
    failed while writing (a value json cannot write) truncated the config.json already there, a user's own (issue 30
    round 36, AK127). The temporary folder is removed whatever happens."""
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix=".config-save-", dir=out))
    try:
        result = save(os.fspath(tmp), push_to_hub=False, **kwargs)
        for name in os.listdir(tmp):
            os.replace(tmp / name, out / name)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _hub_unreachable(e: BaseException, folder: Any, made: bool) -> UserError | None:
    """``save_pretrained(push_to_hub=True)``'s failure to reach the Hub (``model_path.is_network_failure``) as one
    line: no network here ended in httpx's raw "ConnectError: [Errno -2] Name or service not known", and the empty
    folder transformers makes before it asks the Hub was left behind (issue 30 round 33, AE260). The folder is
    removed again when this save made it and it is still empty. None for any other failure."""
    from .model_path import is_network_failure

    if not is_network_failure(e):
        return None
    written = os.path.isfile(os.path.join(os.fspath(folder), "config.json"))
    if made and not written:
        try:
            os.rmdir(folder)
        except OSError:
            pass
    said = str(e).strip().splitlines()[0] if str(e).strip() else ""
    state = ("config.json was written there, not uploaded" if written else "nothing was written")
    return UserError(f"save_pretrained(push_to_hub=True): the Hugging Face Hub could not be reached "
                     f"({type(e).__name__}: {said:.120}); {state}: save without push_to_hub "
                     f"(config.save_pretrained({os.fspath(folder)!r:.60})), then upload the folder where the network "
                     f"reaches the Hub (huggingface_hub.upload_folder(repo_id=..., folder_path=DIR))")
