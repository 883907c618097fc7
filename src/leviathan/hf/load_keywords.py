"""``load_adopted``'s keywords that transformers would take raw: checked at leviathan's boundary, in one line naming the
keyword, its value and the fix.

    check_load_keywords(from_pretrained_kwargs, path)   # UserError for subfolder=, state_dict=, a text switch, ...
    check_transformers_keywords(kwargs, folder, "from_pretrained")   # all but subfolder=, for LeviathanForCausalLM

Round 24 closed this for ``config=`` and the config's settings (``adoption._check_load_options``); round 25 found the
same kind in from_pretrained's own options (issue 30, Y156, Y157, Y159):

- ``subfolder='nope'``: load_adopted reads config.json, the settings digest and the weights of the folder it is given,
  so a subfolder would load another folder's weights under this one's config; transformers then said "no file named
  model.safetensors ... in directory PATH", naming the parent folder, not the subfolder;
- ``attn_implementation='nope'``: transformers' raw ValueError from deep inside the model's ``__init__``;
- ``state_dict={}``: transformers' raw "`state_dict` cannot be passed together with a model name";
- ``dtype='int8'`` (or ``torch_dtype=``): transformers' raw "cannot be instantiated under `dtype=torch.int8` as it's
  not a floating-point dtype" (round 26, Q142), where the same dtype in config.json is one line (Y516): the keyword is
  held to config.json's rule (``config_file.dtype_problem``: a floating type the weights load in, or ``'auto'``).

``LeviathanForCausalLM.from_pretrained`` met the same two raw errors; it takes a subfolder (round 22, S607) and
``state_dict`` without a folder (``from_pretrained(None, config=..., state_dict=...)``, transformers' own use).

Round 27 (S73, S74, S472, S473, S502, S506) found the same kind in the keywords the table ``_RULES`` now holds, each
by name: ``use_safetensors=False`` on a folder of safetensors only was transformers' "no file named
model.safetensors ... found in directory" (the folder holds one); ``gguf_file=`` a raw TypeError or a hub address for
a local folder; ``quantization_config=object()`` a raw AttributeError; and ``local_files_only='no'`` was read as true,
the opposite of what was written (a switch: True or False, ``value_rules.check_switches``, as every switch of
leviathan's own). A keyword the table does not name is left to transformers, as before.

Round 29 (W100, W790): an ``attn_implementation`` naming a hub kernel (``'kernels-community/flash-attn'``, any
``'org/repo'`` or ``'org/repo:kernel'``, also behind ``'paged|'``) passed here and ended in the kernels package's raw
"could not verify publisher trust status" (load_adopted) or transformers' "does not support Flash Attention yet"
(LeviathanForCausalLM): refused by its form (a ``/`` in the name), as U291's flash attention that cannot run here.
Round 30: an ``offload_folder`` that is a named pipe or a file (Y64, Y93, Y94) was ``os.makedirs``' raw
FileExistsError from transformers' disk offload: named as what it is (``_offload_folder``); a ``variant`` that is no
name, or names no weights the folder holds (Y732, Y736-Y740), is ``weights_variant.check_weights_variant``'s line.

Round 31 (AA41, AA511): ``max_memory`` is held to accelerate's form, beside a device_map strategy that reads it
(``_check_max_memory``); ``offload_folder`` to a name a folder can have (AA5, AA6).

Footgun: the form is all that is asked; leviathan's models run their attention through transformers' own functions,
and no kernel is fetched from the hub here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..value_rules import check_switches
from .config_file import DTYPE_KEYS, LOADABLE_DTYPES, dtype_problem


def check_load_keywords(kwargs: dict, path: Path) -> None:
    """UserError for a ``load_adopted`` keyword that transformers would refuse raw or read elsewhere (module
    docstring)."""
    subfolder = kwargs.get("subfolder")
    if subfolder not in (None, ""):
        inner = str(path / subfolder) if isinstance(subfolder, str) else "PATH/SUBFOLDER"
        raise UserError(f"load_adopted: subfolder={subfolder!r:.60} is not taken: load_adopted reads the config.json, "
                        f"settings and weights of the folder it is given ({str(path)!r}); pass the subfolder itself: "
                        f"load_adopted({inner!r})")
    check_transformers_keywords(kwargs, path, "load_adopted", adopted=True)


def check_transformers_keywords(kwargs: dict, path: Any, who: str, adopted: bool = False,
                                model_class: type | None = None) -> None:
    """UserError for ``state_dict=`` beside the folder ``path`` (transformers takes one or the other), for an
    ``attn_implementation`` transformers does not know, for a ``dtype`` / ``torch_dtype`` the weights do not load
    in, and for a keyword of ``_RULES`` its rule refuses, in ``who``'s words (``load_adopted``, and
    ``LeviathanForCausalLM.from_pretrained``, which met the same raw errors); ``adopted``: the model is an adopted one
    (``load_adopted``'s class), which takes no quantization; ``model_class``: the class loaded, whose supported
    attention implementations ``attn_implementation`` is held to (``check_attention``)."""
    from ..value_rules import check_switches

    check_switches("check_transformers_keywords", adopted=adopted)  # 'no' was true (round 30, Y621's kind)
    folder = _folder(path, kwargs.get("subfolder"))
    for key, rule in _RULES.items():
        if key in kwargs:
            rule(who, key, kwargs[key], folder, adopted)
    from .weights_variant import check_weights_variant

    check_weights_variant(who, kwargs.get("variant"), folder)  # round 30, Y732, Y736-Y740 (and M9, no variant given)
    if "state_dict" in kwargs and path is not None:
        raise UserError(f"{who}: state_dict= is not taken with a folder: {who} loads the weights saved in "
                        f"{str(path)!r}; leave it out, and load tensors of your own afterwards (model = {who}(...); "
                        f"model.load_state_dict(state_dict))")
    if "attn_implementation" in kwargs:
        check_attention(kwargs["attn_implementation"], who, model_class)
    if "max_memory" in kwargs:
        kwargs["max_memory"] = _plain_memory(kwargs["max_memory"])  # numpy's ints (round 32, AC227)
        _check_max_memory(kwargs["max_memory"], kwargs.get("device_map"), who)
    for key in DTYPE_KEYS:
        _check_dtype(kwargs.get(key), key, who)


def _check_dtype(value: Any, key: str, who: str) -> None:
    """UserError unless ``value`` is None, ``'auto'``, a floating type the weights load in (a ``torch.dtype`` or its
    name, as torch spells it: ``'float16'``, ``'half'``), or a dict of module -> one of those (transformers' older
    per-module form). ``'int8'`` was transformers' raw ValueError, ``'float8'`` its "can only be 'auto', or a string
    representation of a valid torch.dtype" (round 26, Q142)."""
    import torch

    places = value.items() if isinstance(value, dict) else [(None, value)]
    for module, one in places:
        if one is None or (isinstance(one, str) and one == "auto"):
            continue
        named = getattr(torch, one, None) if isinstance(one, str) else one
        if not isinstance(named, torch.dtype) or dtype_problem(named) is not None:
            shown = key if module is None else f"{key}[{module!r}]"
            raise UserError(f"{who}: {shown}={one!r:.40} is not a type the weights load in (one of "
                            f"{', '.join(LOADABLE_DTYPES)}); pass one of those (a floating type: quantize with "
                            f"quantization_config=, not with {key}), or leave it out")


def check_attention(value: Any, who: str, model_class: type | None = None) -> None:
    """UserError unless ``value`` is None or an attention implementation this transformers knows (``eager``, and
    those of ``ALL_ATTENTION_FUNCTIONS``: sdpa, flash_attention_2, ...) that runs here; a hub kernel's
    ``'org/repo[:kernel]'`` is refused by its form (module docstring, W100). With ``model_class``, one that class
    declares it supports (its ``_supports_flash_attn`` / ``_supports_flex_attn`` / ``_supports_sdpa``): ``from_native(m,
    attn_implementation='flash_attention_2')`` was transformers' raw "LeviathanForCausalLM does not support Flash
    Attention 2 yet. Please request to add support ... on its model hub page" (issue 30 round 31, AA657)."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if value is None:
        return
    name = value.removeprefix("paged|") if isinstance(value, str) else None
    if name is not None and "/" in name:
        raise UserError(f"{who}: attn_implementation={value!r:.80} names a kernel on the Hugging Face hub, which is "
                        f"not loaded here (kernels from the hub are fetched and trusted as code, and leviathan's "
                        f"models run transformers' own attention); pass 'sdpa' or 'eager', or leave it out (sdpa "
                        f"where the model supports it)")
    known = ["eager", *ALL_ATTENTION_FUNCTIONS.valid_keys()]
    if name not in known:
        raise UserError(f"{who}: attn_implementation={value!r:.60} is no attention implementation transformers "
                        f"knows; pass one of {', '.join(repr(k) for k in known)}, or leave it out (sdpa where the "
                        f"model supports it)")
    if model_class is not None and not getattr(model_class, _SUPPORT_FLAGS.get(name.split("|")[-1], ""), True):
        taken = ["eager", *(n for n, flag in _SUPPORT_FLAGS.items() if getattr(model_class, flag, False))]
        raise UserError(f"{who}: attn_implementation={value!r:.60} is not one {model_class.__name__} supports; pass "
                        f"one of {', '.join(repr(k) for k in taken)}, or leave it out")
    if (problem := _attention_unusable(name)) is not None:
        raise UserError(f"{who}: attn_implementation={value!r:.60} cannot be used here: {problem}; leave it out (sdpa "
                        f"where the model supports it), or pass 'sdpa' or 'eager'")


def check_attention_set(model: Any, api: str) -> None:
    """``check_attention`` of the implementation ``model``'s config holds now, for a forward (``api``): one set on
    the loaded model's config (``m.config._attn_implementation = 'bogus'``) was taken by LeviathanForCausalLM's forward
    without a word (issue 30 round 32, AC239), where a config holding it before the model was made is refused
    (round 31, AA221). Asked once per value (the last one taken is kept on the model), so a forward pays one
    attribute read."""
    value = getattr(getattr(model, "config", None), "_attn_implementation", None)
    if value == "flex_attention":
        _check_flex_backward(model, api)
    if value is None or model.__dict__.get("_leviathan_attention_taken", None) == value:
        return
    check_attention(value, f"{api} (its config's _attn_implementation, set after the model was made)", type(model))
    object.__setattr__(model, "_leviathan_attention_taken", value)


def _check_flex_backward(model: Any, api: str) -> None:
    """UserError when a forward under ``flex_attention`` would need its backward on the CPU, which torch lacks: grad
    on and a trainable weight of the model on the CPU. ``set_attn_implementation('flex_attention')`` (or
    ``load_adopted(..., attn_implementation='flex_attention')``) is taken on the CPU, where it runs under
    ``torch.no_grad()``, and a forward outside it was torch's raw "NotImplementedError: FlexAttention does not support
    backward on CPU" (issue 30 round 33, AE187)."""
    import torch

    if not torch.is_grad_enabled():
        return
    weight = next((p for p in model.parameters() if p.requires_grad), None)
    if weight is None or weight.device.type != "cpu":
        return
    raise UserError(f"{api}: attn_implementation 'flex_attention' runs no backward on the CPU (torch's FlexAttention "
                    f"has none there), and this forward would need one (grad is on and the model's weights train); "
                    f"run it under torch.no_grad() (or torch.inference_mode()) for inference, or "
                    f"set_attn_implementation('sdpa') to train on the CPU, or move the model to a GPU")


def check_attention_change(model: Any, attn_implementation: Any, api: str) -> None:
    """``check_attention`` of ``set_attn_implementation``'s value (a name, or transformers' dict of sub-config ->
    name, whose ``''`` is the model's own) before transformers sets it: ``set_attn_implementation(
    'flash_attention_2')`` on LeviathanForCausalLM was transformers' raw "does not support Flash Attention 2 yet.
    Please request to add support ... on its model hub page" (issue 30 round 32, AC240), as the same keyword of
    ``from_pretrained`` was before round 31 (AA657). Both Hugging Face classes ask this."""
    value = attn_implementation.get("", None) if isinstance(attn_implementation, dict) else attn_implementation
    if value is None and not isinstance(attn_implementation, dict):
        raise UserError(f"{api}: attn_implementation=None names no attention implementation; pass 'sdpa' or "
                        f"'eager'")
    check_attention(value, api, type(model))


# attention implementation -> the class flag transformers reads to take it (its _check_and_adjust_attn_implementation)
_SUPPORT_FLAGS = {"sdpa": "_supports_sdpa", "flash_attention_2": "_supports_flash_attn",
                  "flash_attention_3": "_supports_flash_attn", "flash_attention_4": "_supports_flash_attn",
                  "flex_attention": "_supports_flex_attn"}


def _attention_unusable(name: str) -> str | None:
    """Why a known attention implementation cannot run on this machine (None when it can, or transformers gives no
    way to ask): ``flash_attention_2`` without the flash-attn package, or without a device it runs on, was
    transformers' raw ImportError from the model's ``__init__`` (issue 30 round 28, U291). Asked in transformers' own
    terms (``FLASH_ATTENTION_COMPATIBILITY_MATRIX``: a custom device such as Ascend's NPU first, then the general
    check), so what transformers would take is taken."""
    from transformers import modeling_utils
    from transformers.utils import is_torch_flex_attn_available

    if name == "flex_attention":
        return None if is_torch_flex_attn_available() else "this torch has no flex_attention"
    version = {"flash_attention_2": 2, "flash_attention_3": 3, "flash_attention_4": 4}.get(name)
    matrix = getattr(modeling_utils, "FLASH_ATTENTION_COMPATIBILITY_MATRIX", {}).get(version)
    if matrix is None or any(check() for check, _ in matrix.get("custom_supported_devices", ())):
        return None
    if matrix["general_availability_check"]():
        return None
    if not matrix["pkg_availability_check"]():
        return f"the package of FlashAttention{version} is not installed (install it on a machine with a GPU it " \
               f"supports)"
    devices = ", ".join(device for _, device in matrix["supported_devices"])
    return f"FlashAttention{version} does not run on this machine's devices (it needs one of: {devices}, of a " \
           f"version it supports)"


# transformers' names for a device_map it computes, the only ones that read max_memory (devices._STRATEGIES' names)
_STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")
_MEMORY_PLACES = "a GPU's index (0, 1, ...), 'cpu', 'mps' or 'disk'"


def _check_max_memory(value: Any, device_map: Any, who: str) -> None:
    """UserError unless ``max_memory`` is None, or a dict of place (a GPU's index, ``'cpu'``, ``'mps'``, ``'disk'``)
    -> a size accelerate reads (a byte count, or a text such as ``'5GB'``, ``'500MiB'``), given with a ``device_map``
    strategy that reads it (``'auto'``, ...). ``max_memory='1GB'`` was accelerate's raw "TypeError: string indices must
    be integers" and ``{'cpu': 'lots'}`` its "ValueError: `size` lots is not in a valid format", after the config and
    the model were built (issue 30 round 31, AA41 through ``load_adopted``, AA511 through
    ``LeviathanForCausalLM.from_pretrained``); a key such as ``'cuda:0'`` its "Device cuda:0 is not recognized", a GPU
    this machine lacks (``0`` without CUDA) torch's "Cannot access accelerator device" (``devices.device_unavailable``,
    the rule of a device_map's GPU); and
    beside no device_map, or a device or a dict of modules, max_memory was dropped without a word (transformers reads
    it only to compute a map)."""
    from ..devices import device_unavailable

    if value is None:
        return
    fix = (f"pass a dict of {_MEMORY_PLACES} -> a size (a byte count, or a text such as '5GB'), e.g. "
           f"max_memory={{'cpu': '2GB'}}, or leave max_memory out")
    if not isinstance(value, dict) or not value:
        what = "is an empty dict" if isinstance(value, dict) else "is no dict of place -> size"
        raise UserError(f"{who}: max_memory={value!r:.60} {what}; {fix}")
    for place, size in value.items():
        if not (isinstance(place, str) and place in ("cpu", "mps", "disk")) and not (
                isinstance(place, int) and not isinstance(place, bool) and place >= 0):
            raise UserError(f"{who}: max_memory names the place {place!r:.40}, which is none of {_MEMORY_PLACES} "
                            f"(a GPU is named by its index: 0, not 'cuda:0'); {fix}")
        if not isinstance(place, str) and (missing := device_unavailable(f"cuda:{place}")) is not None:
            shown = missing.removeprefix("is ").removesuffix("; use cpu")
            raise UserError(f"{who}: max_memory names the GPU {place} ({shown}); name only the GPUs this machine has "
                            f"(and 'cpu'), or leave max_memory out")
        if _size_problem(size):
            raise UserError(f"{who}: max_memory[{place!r:.40}]={size!r:.40} is no size (a byte count, or a number "
                            f"with a unit: '5GB', '500MB', '2GiB'); {fix}")
    if device_map not in _STRATEGIES:
        raise UserError(f"{who}: max_memory is read only when transformers computes the device_map "
                        f"(device_map='auto', 'balanced', 'balanced_low_0' or 'sequential'), and device_map is "
                        f"{device_map!r:.60}, so it would be dropped without a word; pass device_map='auto' too, or "
                        f"leave max_memory out")


def _plain_memory(value: Any) -> Any:
    """``max_memory`` with numpy's integers (a GPU's index, a byte count) as Python's: accelerate passes a byte count
    that is no text on as it is (``get_max_memory``) and compares it as a number, so ``{'cpu': np.int64(10**9)}`` is
    a byte count it takes, which was refused as "no size" (issue 30 round 32, AC227); accelerate finds GPUs by
    ``isinstance(key, int)``, so a numpy index is handed on as Python's. Anything else unchanged, for the check."""
    from ..integers import as_int

    if not isinstance(value, dict):
        return value
    return {as_int(place): as_int(size) for place, size in value.items()}


def _size_problem(size: Any) -> bool:
    """Whether ``size`` is no size accelerate reads (``convert_file_size_to_int``'s rule: an int of bytes, not a
    bool, not negative; or a number and a unit: GB, MB, KB, GiB, MiB, KiB)."""
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        return True
    if isinstance(size, int):
        return size < 0
    from accelerate.utils import convert_file_size_to_int

    try:
        return convert_file_size_to_int(size) < 0
    except (ValueError, TypeError):
        return True


# ---- the keywords checked by name (round 27) ------------------------------------------------------------------
def _folder(path: Any, subfolder: Any) -> Path | None:
    """The local folder transformers would read the weights from (``path``, or ``path/subfolder``), None for a hub
    name or a folder that is not there (left to ``model_path`` and transformers)."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    folder = Path(path) / subfolder if isinstance(subfolder, str) and subfolder else Path(path)
    return folder if folder.is_dir() else None


def _switch(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """True or False: transformers reads any non-empty text as true (S502: ``local_files_only='no'``)."""
    check_switches(who, **{key: value})


def _switch_or_none(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """True, False, or None (transformers' "decide for me")."""
    if value is not None:
        check_switches(who, **{key: value})


def _safetensors(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """A switch or None; and a folder holding the kind of weights asked for: ``use_safetensors=False`` on a folder of
    safetensors only was transformers' "no file named model.safetensors ... found in directory" (S73, S472), blaming
    a file the folder holds."""
    _switch_or_none(who, key, value, folder, adopted)
    if value is None or folder is None:
        return
    names = os.listdir(folder)
    safetensors = any(n.endswith((".safetensors", ".safetensors.index.json")) for n in names)
    pickled = any(n.startswith("pytorch_model") and n.endswith((".bin", ".bin.index.json")) for n in names)
    if not value and safetensors and not pickled:
        raise UserError(f"{who}: use_safetensors=False asks for pickled weights (pytorch_model.bin), but "
                        f"{str(folder)!r} holds its weights as safetensors only (model.safetensors); leave "
                        f"use_safetensors out (or pass True)")
    if value and pickled and not safetensors:
        raise UserError(f"{who}: use_safetensors=True asks for model.safetensors, but {str(folder)!r} holds its "
                        f"weights as pickled pytorch_model.bin only; leave use_safetensors out (or pass False)")


def _no_gguf(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """Refused: leviathan's models are saved as config.json and safetensors; transformers' GGUF reader knows no
    generator (S74: a raw TypeError; S473: a hub address for a local folder)."""
    if value is not None:
        raise UserError(f"{who}: gguf_file={value!r:.60} is not taken: leviathan's models are saved as config.json "
                        f"and model.safetensors (save_pretrained, leviathan export), which hold the generator a GGUF "
                        f"file has no place for; leave gguf_file out and pass the saved folder")


def _quantization(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """Refused on an adopted model: its generator computes the embedding from float tensors of its own, which a
    quantizer does not know; bake first. Elsewhere, a quantization config transformers knows (S506:
    ``quantization_config=object()`` was a raw AttributeError)."""
    if value is None:
        return
    if adopted:
        raise UserError(f"{who}: quantization_config={type(value).__name__} is not taken by an adopted model: its "
                        f"LeviathanGenerator computes the embedding from float tensors a quantizer does not know; "
                        f"leave quantization_config out (a float dtype= still halves memory), or bake the model "
                        f"(leviathan.hf.bake_adopted(model, DIR)) and load DIR with quantization_config=")
    from transformers.quantizers.auto import AUTO_QUANTIZATION_CONFIG_MAPPING
    from transformers.utils.quantization_config import QuantizationConfigMixin

    method = value.get("quant_method") if isinstance(value, dict) else None
    if not isinstance(value, QuantizationConfigMixin) and method not in AUTO_QUANTIZATION_CONFIG_MAPPING:
        raise UserError(f"{who}: quantization_config={value!r:.60} is no quantization config transformers knows (a "
                        f"transformers.BitsAndBytesConfig, ..., or a dict whose quant_method is one of "
                        f"{', '.join(sorted(AUTO_QUANTIZATION_CONFIG_MAPPING))}); pass one, or leave it out")


def _token(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """None, a token's text, or a switch (``value_rules.hub_token_problem``, round 35, AI330's sibling)."""
    from ..value_rules import hub_token_problem

    if (problem := hub_token_problem(value)) is not None:
        raise UserError(f"{who}: {problem}; pass the token's text, or leave token out")


def _dropped(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """A switch transformers 5 no longer reads (it pops the keyword and drops it): taken as True it would do nothing
    without a word, and ``offload_state_dict='yes'`` passed (issue 30 round 35, AI126); False, asking nothing, is
    taken."""
    check_switches(who, **{key: value})
    if value:
        raise UserError(f"{who}: {key}=True does nothing: transformers {_transformers_version()} no longer reads "
                        f"{key} and drops it without a word; leave it out")


def _transformers_version() -> str:
    import transformers

    return transformers.__version__


def _offload_folder(who: str, key: str, value: Any, folder: Path | None, adopted: bool) -> None:
    """None, or a folder (made when missing): a named pipe or a regular file given as ``offload_folder`` was
    ``os.makedirs``' raw "FileExistsError: [Errno 17] File exists" from transformers' disk offload (issue 30 round 30,
    Y64, Y93 through ``load_adopted``; Y94 through ``LeviathanForCausalLM.from_pretrained``); so is a path under a
    file, and a value that is no path (``os.makedirs``' TypeError). Named as what stands there
    (``errors.not_a_folder_there``). A name no folder can have, one holding a NUL byte or one past the file system's
    255 bytes, was ``os.makedirs``' raw "ValueError: embedded null byte" / "OSError: [Errno 36] File name too long"
    (issue 30 round 31, AA5, AA536; AA6, AA509 through ``LeviathanForCausalLM.from_pretrained``): the same words as a
    reader's (``errors.nul_byte``, ``errors.name_too_long``)."""
    from ..errors import file_above, name_too_long, not_a_folder_there, nul_byte

    if value is None:
        return
    fix = "pass a folder (made when missing) for the offloaded weights, or leave offload_folder out"
    if not isinstance(value, (str, os.PathLike)) or os.fspath(value) in ("", b""):
        raise UserError(f"{who}: offload_folder={value!r:.60} is no folder's path; {fix}")
    if (problem := nul_byte(value) or name_too_long(value)) is not None:  # round 31, AA5, AA6, AA509, AA536
        text = os.fspath(value)
        shown = text if len(text) <= 80 else text[:60] + "…"
        raise UserError(f"{who}: offload_folder {shown!r} {problem}, so no folder can have it; {fix}")
    if os.path.lexists(value) and not os.path.isdir(value):
        raise UserError(f"{who}: offload_folder {os.fspath(value)!r} {not_a_folder_there(value)}; {fix}")
    if (blocker := file_above(value)) is not None:
        raise UserError(f"{who}: offload_folder {os.fspath(value)!r} lies under {blocker!r}, which "
                        f"{not_a_folder_there(blocker)}; {fix}")


# from_pretrained's keywords by name -> the rule its value is held to; a name not here is left to transformers
_RULES = {
    "local_files_only": _switch, "force_download": _switch, "ignore_mismatched_sizes": _switch,
    "weights_only": _switch, "output_loading_info": _switch, "offload_buffers": _switch,
    "allow_all_kernels": _switch, "low_cpu_mem_usage": _switch_or_none, "disable_mmap": _switch_or_none,
    "trust_remote_code": _switch_or_none, "use_kernels": _switch_or_none,
    "use_safetensors": _safetensors, "gguf_file": _no_gguf, "quantization_config": _quantization,
    "offload_folder": _offload_folder, "token": _token,
    "offload_state_dict": _dropped, "from_tf": _dropped, "from_flax": _dropped,  # round 35, AI126
}
