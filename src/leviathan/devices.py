"""The device a verb runs on, checked in one place for every way one is given (config, command line, Python).

    device_problem("tpu")            # "must be auto, cpu, cuda or cuda:N (N a GPU's index), got 'tpu'"
    device_problem("auto", auto=False)  # lm-eval passes the name to the harness, which knows no "auto"

torch.device raised a RuntimeError traceback for ``eval --device tpu``, ``generate --device cuda:x`` and
``device=cuda:x`` in a config (the config's check let anything starting with "cuda" through), and lm-evaluation-
harness silently ran ``lm-eval --device tpu`` on the CPU (issue 30 round 7).
"""

from __future__ import annotations

import re
from typing import Any

_CUDA = re.compile(r"cuda(:\d{1,4})?")


def device_problem(spec: Any, *, auto: bool = True) -> str | None:
    """Why ``spec`` names no device leviathan runs on (None when it names one): ``cpu``, ``cuda``, ``cuda:N`` and,
    where ``auto``, ``auto`` (cuda when available, else cpu)."""
    from .value_rules import check_switches

    check_switches("device_problem", auto=auto)  # 'no' was true (round 30, Y713)
    names = "auto, cpu, cuda or cuda:N" if auto else "cpu, cuda or cuda:N"
    if isinstance(spec, str) and (spec == "cpu" or (auto and spec == "auto") or _CUDA.fullmatch(spec)):
        return None
    return f"must be {names} (N a GPU's index, e.g. cuda:0), got {spec!r}"


def device_unavailable(spec: Any) -> str | None:
    """Why a well-formed device ``spec`` (``device_problem`` is None) is not on this machine: CUDA absent, or a GPU
    index past the count; None when it is here (``auto``, ``cpu``). ``load_model(RUN, device='cuda:7')`` on a machine
    without CUDA ended in torch's AssertionError, and the harness silently ran ``device='cuda:7'`` on the CPU (issue 30
    round 12, U145, U161)."""
    import torch

    text = str(spec)
    if not text.startswith("cuda"):
        return None
    if not torch.cuda.is_available():
        return f"is {text!r}, but CUDA is not available here; use cpu"
    index = int(text.split(":")[1]) if ":" in text else 0
    if index >= torch.cuda.device_count():
        return f"is {text!r}, but this machine has {torch.cuda.device_count()} GPU(s) (cuda:0 to " \
               f"cuda:{torch.cuda.device_count() - 1})"
    return None


def unavailable_line(spec: Any, option: str, auto: bool = True) -> str | None:
    """The line refusing a device ``spec`` that is not on this machine (``device_unavailable``), its fix spelt as the
    user gives a device: ``option`` "device=" (the config's setting) or "--device " (a verb's option; ``auto``:
    whether that option takes auto). ``generate --device cuda`` was told "use device=cpu or device=auto", a config
    override the verb takes none of (issue 30 round 26, P33). None when it is here."""
    from .value_rules import check_switches

    check_switches("unavailable_line", auto=auto)  # 'no' was true (round 30, Y621's kind)
    problem = device_unavailable(spec)
    if problem is None:
        return None
    also = f", or {option}auto (a GPU where there is one)" if auto else ""
    return f"{option.rstrip('= ')} {problem.removesuffix('; use cpu')}; use {option}cpu{also}"


def model_device_problem(spec: Any) -> str | None:
    """Why ``spec``, a device a Python caller moves a model to, is not one here (None when it is): a name as
    ``device_problem`` takes it (``auto`` aside), a ``torch.device``, or a GPU's index as torch takes one (``3`` is
    ``cuda:3``). ``load_model(RUN, device=3)`` skipped the check of a name and ended in torch's "Cannot access
    accelerator device when none is available", and ``device=True`` in "nn.Module.to only accepts floating point
    dtypes" (issue 30 round 18, G28, G35, G38)."""
    import torch

    from .integers import is_integer

    if isinstance(spec, torch.device):
        spec = str(spec)
    elif is_integer(spec):  # a bool is not an index: device=True was read by torch as a dtype
        spec = f"cuda:{int(spec)}" if spec >= 0 else spec
    return device_problem(spec, auto=False) or device_unavailable(spec)


def check_device_map(device_map: Any, who: str) -> None:
    """UserError when ``from_pretrained``'s ``device_map`` (a device, a GPU's index, or a dict of module -> either)
    puts weights on a GPU this machine lacks: ``device_map='cuda'`` or ``'cuda:3'`` on a torch without CUDA ended in
    torch's "AssertionError: Torch not compiled with CUDA enabled" through ``LeviathanForCausalLM.from_pretrained`` and
    ``load_adopted`` (issue 30 round 22, S604, S608, S609), where ``load_model(device='cuda')`` names it (S278); and
    ``True``, torch's many-line "device() received an invalid combination of arguments". Each place of a dict is held
    to the same rule as the string form: ``{'': 'cpu', 'lm_head': 'tpu'}`` was torch's raw "Expected one of cpu, cuda,
    ..." RuntimeError, and a place of ``None`` or ``2.5`` its many-line TypeError (round 26, Q410). transformers' own
    names (``auto``, ``balanced``, ``balanced_low_0``, ``sequential`` for the whole model; ``disk`` for a module) are
    left to it; the meta device is ``meta_device.refuse_meta_device_map``'s, checked first here: this is the one check
    of a device_map. A module on ``disk`` nested in one kept on a device, or the reverse, is refused too
    (``_nested_disk_problem``, round 29, W735)."""
    from .meta_device import refuse_meta_device_map

    if device_map is None:
        return
    refuse_meta_device_map(device_map, who)  # round 21, P470
    # transformers' raw "'int' object has no attribute 'count'" (round 32, AC244); a key None was taken for "none
    # found" and reached accelerate's "'NoneType' object has no attribute 'count'" (round 33, AE189)
    if isinstance(device_map, dict) and any(not isinstance(k, str) for k in device_map):
        from .errors import UserError

        key = next(k for k in device_map if not isinstance(k, str))

        raise UserError(f"{who}: device_map's key {key!r:.40} is no module's name (a device_map dict maps the "
                        f"model's modules, by their names, to a device); name the module ('model', 'lm_head', "
                        f"'model.layers.0', ...; '' for the whole model), or pass device_map={device_map[key]!r:.30} "
                        f"for the whole model")
    places = device_map.items() if isinstance(device_map, dict) else [(None, device_map)]
    for module, place in places:
        shown = "device_map" if module is None else f"device_map[{module!r}]"
        problem = _place_problem(place, _STRATEGIES if module is None else ("disk",))
        if problem is not None:
            from .errors import UserError

            raise UserError(f"{who}: {shown} {problem}")
    if isinstance(device_map, dict) and (problem := _nested_disk_problem(device_map)) is not None:
        from .errors import UserError

        raise UserError(f"{who}: {problem}")


def _nested_disk_problem(device_map: dict) -> str | None:
    """Why a ``device_map`` dict mixes ``disk`` and a device along one branch of the model (None when it does not):
    ``{'model.embed_tokens': 'disk', '': 'cpu'}`` (an adopted model's generator offloaded, the rest on the CPU; ``''``
    is the whole model) loaded the offloaded module's weights as nothing and ended in accelerate's raw "codebooks is
    on the meta device, we need a `value` to put in on cpu" (issue 30 round 29, W735); transformers' own Llama meets
    the same with any module (``lm_head``), and ``{'': 'disk', 'lm_head': 'cpu'}`` too. Modules side by side
    (``{'model': 'disk', 'lm_head': 'cpu'}``) and the whole model on disk (``{'': 'disk'}``, W131) load, and are
    taken."""
    def inside(outer: str, inner: str) -> bool:
        return outer == "" or inner.startswith(outer + ".")

    names = [name for name in device_map if isinstance(name, str)]
    for disk in (name for name in names if device_map[name] == "disk"):
        for other in (name for name in names if device_map[name] != "disk"):
            if inside(other, disk) or inside(disk, other):
                outer, inner = (other, disk) if inside(other, disk) else (disk, other)
                whole = " (the whole model)" if outer == "" else ""
                return (f"device_map puts {inner!r} on {device_map[inner]!r} inside {outer!r}{whole} on "
                        f"{device_map[outer]!r}, which transformers' loader cannot do (the offloaded weights load as "
                        f"none); map modules side by side, naming the others in place of {outer!r} (as "
                        f"{{'model.embed_tokens': 'disk', 'model.layers': 'cpu', ..., 'lm_head': 'cpu'}}), or put "
                        f"the whole model on disk ({{'': 'disk'}})")
    return None


def check_map_covers(device_map: Any, model_of: Any, who: str) -> None:
    """UserError when a ``device_map`` dict gives no device to some of the model's tensors, naming the modules left
    out (and the keys that name no module, the usual cause: a misspelt ``'model.embed_token'``): accelerate's raw
    "ValueError: The device_map provided does not give any device for the following parameters: ..." came after the
    weights were read (issue 30 round 30, Y91). ``model_of()`` builds the model on the meta device (names only), and
    is called only for a dict naming a module: a device or a strategy covers every tensor, as ``{'': ...}`` does. A key
    naming no module or tensor of the model is refused too when the rest covers it (``{'model': 'cpu', 'lm_head':
    'cpu', 'model.layers.7': 'cpu'}`` on one layer, ``{'': 'cpu', 'bogus': 'cpu'}``): transformers dropped it without
    a word (issue 30 round 31, AA21, AA25; AA510 through ``LeviathanForCausalLM.from_pretrained``). It may return None
    (the model cannot be built here: left to transformers)."""
    if not isinstance(device_map, dict) or not any(isinstance(k, str) and k != "" for k in device_map):
        return
    model = model_of()
    if model is None:
        return
    keys = [k for k in device_map if isinstance(k, str) and k != ""]
    tensors = list(model.state_dict())
    modules = dict(model.named_modules())
    named = set(modules) | set(tensors) | {n for n, _ in model.named_parameters()} | {n for n, _ in
                                                                                      model.named_buffers()}
    unknown = [k for k in keys if k not in named]
    left = [] if "" in device_map else [name for name in tensors
                                        if not any(name == k or name.startswith(k + ".") for k in keys)]
    from .errors import UserError

    if not left:
        if unknown:  # taken without a word when the rest covered the model (issue 30 round 31, AA21, AA25, AA510)
            raise UserError(f"{who}: device_map names {_unknown_shown(unknown, modules)}, no module or tensor of the "
                            f"model, which transformers' loader would drop without a word; correct the name, or "
                            f"remove the key")
        return
    owners = sorted({_outermost_left(name, left, tensors) for name in left})
    shown = ", ".join(repr(m) for m in owners[:4]) + (f", ... ({len(owners) - 4} more)" if len(owners) > 4 else "")
    typo = f" (device_map names {', '.join(repr(k) for k in unknown)}, no module of the model)" if unknown else ""
    raise UserError(f"{who}: device_map gives no device to {shown} ({len(left)} tensor(s)){typo}; give "
                    f"each a device beside the others (e.g. {owners[0]!r}: 'cpu'), or leave device_map out")


def _unknown_shown(unknown: list[str], modules: dict) -> str:
    """``'model.layers.7' (the model's modules near it: 'model.layers.0')`` for the keys of a device_map that name
    nothing in the model, each with the module names closest to it (its outer modules where none is close)."""
    import difflib

    outer = [name for name in modules if name and name.count(".") < 2]
    parts = []
    for key in unknown[:3]:
        near = difflib.get_close_matches(key, [m for m in modules if m], n=2, cutoff=0.6) or outer[:6]
        parts.append(f"{key!r:.60} (the model's modules near it: {', '.join(repr(m) for m in near)})")
    return ", ".join(parts) + (f", ... ({len(unknown) - 3} more)" if len(unknown) > 3 else "")


def _outermost_left(name: str, left: list[str], tensors: list[str]) -> str:
    """The outermost module above the tensor ``name`` all of whose tensors are ``left`` unmapped ('model.embed_tokens'
    for 'model.embed_tokens.codebooks'), or ``name`` itself."""
    parts = name.split(".")[:-1]
    for module in (".".join(parts[:i]) for i in range(1, len(parts) + 1)):
        if all(n in left for n in tensors if n.startswith(module + ".")):
            return module
    return name


_STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")  # transformers' names for the whole model's map
_PLACES = "pass 'cpu', 'cuda', 'cuda:N' (N a GPU's index), 'auto', or a dict of module -> device (or 'disk')"


def _place_problem(place: Any, names: tuple[str, ...]) -> str | None:
    """Why one ``device_map`` place is no device here (``check_device_map``), or None; ``names``: the words
    transformers takes there besides a device (its strategies for the whole map, ``disk`` for one module)."""
    import numpy as np
    import torch

    from .integers import is_integer

    if isinstance(place, (bool, np.bool_)):
        return f"is {place!r}, not a device; {_PLACES}"
    if is_integer(place):
        if place < 0:
            return f"is {int(place)}, no GPU's index (an index is 0 or more); {_PLACES}"
        place = f"cuda:{int(place)}"
    if isinstance(place, str) and place in names:
        return None
    if not isinstance(place, (str, torch.device)):
        return f"is {type(place).__name__} {place!r:.40}, not a device; {_PLACES}"
    try:
        torch.device(place)
    except RuntimeError:
        return f"is {place!r:.40}, not a device torch knows; {_PLACES}"
    problem = device_here_problem(place)
    return None if problem is None else f"{problem} (leave device_map out to load onto the CPU)"


def device_here_problem(place: Any) -> str | None:
    """Why ``place``, a device torch knows (a name it parses, or a ``torch.device``), is not on this machine, in
    ``device_unavailable``'s words ("is 'cuda', but CUDA is not available here; use cpu"); None when it is here.
    ``cpu:N`` past ``cpu:0`` is refused: torch has one CPU device and quietly reads ``cpu:1`` as it, so
    ``check_device_map('cpu:1')`` passed a device this machine has not (issue 30 round 28, U576). Footgun: a name
    torch cannot parse is the caller's to refuse first (``torch.device`` raises its RuntimeError here)."""
    import torch

    device = torch.device(place)
    if device.type == "cuda":
        return device_unavailable(str(device))
    if device.type == "cpu":
        if device.index:
            return f"is {str(device)!r}, but torch has one CPU device (cpu, or cpu:0); use cpu"
        return None
    return _other_device_problem(device.type)


def _other_device_problem(kind: str) -> str | None:
    """Why a device of type ``kind`` (``mps``, ``xpu``, ...; cpu and meta aside) is not here, by its torch module's
    ``is_available()``: ``device_map='mps'`` where torch has none was its raw "not linked with support for mps
    devices" (round 26, Q410's kind); None when it is here, or torch has no such module to ask."""
    import torch

    module = getattr(torch, kind, None)
    available = getattr(module, "is_available", None) if kind not in ("cpu", "meta") else None
    if available is None or available():
        return None
    return f"is {kind!r}, but this torch has no {kind} device here; use cpu"
