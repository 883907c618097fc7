"""What a Hugging Face loader of leviathan's is given when it is no model folder: one line naming what it is instead.

    check_model_path(folder_or_name, "from_pretrained", config_given=False)   # before transformers reads anything
    refused = hub_failure(e, name, "from_pretrained")                           # transformers' OSError for a name
    refused = weights_failure(e, folder, "from_pretrained")                     # ... for a folder without weights

transformers' own words for these blamed something else (issue 30 round 23): a local folder that does not exist was
"We couldn't connect to 'https://huggingface.co' to load the files" (U43); the weights file given for its folder,
"the config file at 'ex1/model.safetensors' is not a valid JSON file" (U60); a prepared data folder or a training
run's, "Error no file named model.safetensors ... found in directory data", no fix (U61, U62), after taking
LeviathanConfig's defaults for the config.json the folder lacks, which ``LeviathanConfig.from_pretrained`` of such a
folder returned without a word (U412); a folder holding config.json without its weights was the same OSError. A
folder is named by ``file_kinds.folder_kind`` (its marker's verb).

Footgun: a name that is nothing here may be a hub model id ('org/name', 'gpt2'): it goes to transformers, and only
its failure is said with both readings (``hub_failure``). A name that cannot be a hub id ('./b3/a', 'a/b/c', an
absolute path) is refused here as a missing folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import UserError

_PASS = ("pass the folder of an export (leviathan export RUN OUT) or of save_pretrained: it holds config.json and the "
         "weights")


def check_model_path(where: Any, api: str, *, config_given: bool = False) -> None:
    """UserError when ``where`` (the path or hub name given to ``api``) is a local file, a local folder without
    config.json (unless ``config_given``: transformers then reads only the weights), or a path that is nothing here
    and cannot be a hub model id. Anything else is left to the caller's own checks and transformers."""
    from ..value_rules import check_switches

    check_switches("check_model_path", config_given=config_given)  # 'no' was true (round 30, Y621's kind)
    if not isinstance(where, (str, os.PathLike)):
        return
    path = os.fspath(where)
    if os.path.isdir(path):
        if not config_given and not os.path.lexists(os.path.join(path, "config.json")):
            raise UserError(f"{api}: {path!r} {_no_model_folder(path)}")
    elif os.path.isfile(path):
        if not config_given:  # a weights file with config= is transformers' own single-file load
            raise UserError(f"{api}: {path!r} is a file, not a model folder; {_holding_folder(path)}")
    elif os.path.lexists(path) or not _could_be_hub_id(path):
        from ..errors import missing

        raise UserError(f"{api}: {path!r} {missing(path)}; check the path, or {_PASS}")


def _no_model_folder(path: str) -> str:
    """"is a train run folder (...), not a model folder (it holds no config.json); export it first: ..."."""
    from ..file_kinds import folder_kind

    kind = folder_kind(path)
    if kind is None:
        return f"holds no config.json, so it is no model folder; {_PASS}"
    fix = (f"export it first (leviathan export {path} OUT) and load OUT" if "`leviathan train`" in kind else _PASS)
    return f"is {kind}, not a model folder (it holds no config.json); {fix}"


def _holding_folder(path: str) -> str:
    """The fix for a file given as the folder: its own folder, when that holds a model's config.json."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isfile(os.path.join(parent, "config.json")):
        shown = os.path.dirname(path) or "."
        return f"pass the folder that holds it ({shown!r}), not one of its files"
    return _PASS


def _could_be_hub_id(name: str) -> bool:
    """Whether ``name`` has the form of a hub model id ('gpt2', 'org/name'); './x', 'a/b/c' and '/x' have not."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def hub_failure(e: BaseException, where: Any, api: str) -> UserError | None:
    """``e``, transformers' OSError for a ``where`` that is nothing here (a hub model id, or a mistyped folder), as one
    line with both readings: "We couldn't connect to 'https://huggingface.co'" blamed the network for a folder that
    does not exist (round 23, U43). None for anything else (a storage failure has an errno: left as it is)."""
    if not isinstance(e, OSError) or e.errno is not None or not isinstance(where, (str, os.PathLike)):
        return None
    path = os.fspath(where)
    if os.path.lexists(path):
        return None
    said = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return UserError(f"{api}: {path!r} is no folder here (it does not exist) and could not be loaded as a hub model id "
                     f"either (transformers: {said}); check the path, or {_PASS}; for a hub model, check its id and "
                     f"the connection")


def is_network_failure(e: BaseException) -> bool:
    """Whether ``e`` is the Hugging Face Hub not reached (no network, no such host, offline mode, a refused
    connection): huggingface_hub's, httpx's (transformers 5 ships it as httpx2) and requests' own errors, and Python's
    ConnectionError and TimeoutError (issue 30 round 33, AE260)."""
    root = type(e).__module__.split(".")[0]
    return isinstance(e, (ConnectionError, TimeoutError)) or root in ("httpx", "httpx2", "huggingface_hub",
                                                                       "requests", "urllib3")


_WEIGHTS = ("model.safetensors", "model-", "pytorch_model")  # how the weight files' names begin (any shard, variant)


def weights_failure(e: BaseException, folder: Any, api: str) -> UserError | None:
    """``e``, transformers' "Error no file named model.safetensors, or pytorch_model.bin, found in directory D" (an
    OSError without errno), as one line with the fix, when the local ``folder`` holds no weight file of any name
    (round 23, U61's kind: config.json without the weights beside it). None for anything else."""
    from .weights_variant import held_variants

    if not isinstance(e, OSError) or e.errno is not None or not os.path.isdir(folder):
        return None
    if any(held_variants(Path(folder))):  # weights transformers reads by name (issue 30 round 35, AI451)
        return None
    renamed = sorted(name for name in os.listdir(folder) if name.startswith(_WEIGHTS))[:3]
    if renamed:  # model.safetensors.bak, model.safetensors.old: taken for weights by the name's start (AI451, AI457)
        return UserError(f"{api}: {os.fspath(folder)!r} holds config.json but no weights file transformers reads "
                         f"(model.safetensors, or its shards or a variant's model.V.safetensors); it holds "
                         f"{', '.join(renamed)}, which no loader reads by that name; rename it back to "
                         f"model.safetensors, or save the model again (save_pretrained)")
    return UserError(f"{api}: {os.fspath(folder)!r} holds config.json but no weights (model.safetensors, or its "
                     f"shards): the folder is incomplete; copy the weights back from where it came from, or export "
                     f"the checkpoint again (leviathan export RUN OUT) or save the model again (save_pretrained)")
