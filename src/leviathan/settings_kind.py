"""What a file given as YAML settings (``--config``, ``--grid``) plainly is when it is something else.

    what = not_settings(data)    # "is a sweep's results.jsonl (written by `leviathan sweep`: ...)", or None

A results.jsonl given as ``train --config`` was "not valid YAML (expected '<document start>', but found '{' ...);
correct it where named" (issue 30 round 9, M116): true, but the fix is another file, not an edit. A file of JSON
lines, or one that is not text (a checkpoint's weights, a token file, an array), or a JSON file leviathan writes (a
sweep's grid.json was "unknown key 'path' in RunConfig; did you mean 'data.path'?", round 10 Q149) is named for what
it is, and the reader says what it expects instead. Any other JSON object is left to the reader: JSON is YAML, and a
config may be written in it (its keys are then checked like any other).
"""

from __future__ import annotations


from .data.binary import binary_kind
from . import json_text
from .file_kinds import GRID_MARKS, json_kind, json_lines_kind


def not_settings(data: bytes) -> str | None:
    """What a file holding ``data`` is ("is a PNG image", "holds results rows ...") when it is plainly not YAML
    settings; None when it may be settings."""
    if len(data) >= 10 and int.from_bytes(data[:8], "little") < len(data) and data[8:10] == b'{"':
        return "is a safetensors file (a model's weights)"
    kind = binary_kind(data[:8192])
    if kind is not None:
        return "is " + kind + (" (PyTorch saves its .pt files as one)" if kind == "a zip archive" else "")
    return _json_lines(data) or _json_file(data)


def _json_file(data: bytes) -> str | None:
    """What a JSON object leviathan writes is (a config may be written in JSON: only ``file_kinds``' layouts are
    named)."""
    try:
        what = json_kind(json_text.loads(data))
    except ValueError:  # nested too deeply too (json_text): left to the YAML reader, which names it
        return None
    return None if what is None else "is " + what


def _json_lines(data: bytes) -> str | None:
    """What a file of JSON lines holds (its first two lines JSON objects: YAML reads no such file; a torn line later
    still leaves it a JSON lines file); None otherwise."""
    lines = [line for line in data.splitlines() if line.strip()]
    try:
        first = [json_text.loads(line) for line in lines[:2]]
    except ValueError:
        return None
    if len(first) < 2 or not all(isinstance(value, dict) for value in first):
        return None
    if (what := json_lines_kind(first)) is not None:
        return "is " + what
    return f"holds JSON lines ({len(lines):,} lines, one JSON object each)"


def other_settings_file(raw: dict, expected: str, path, run_keys=frozenset(), grid_keys=frozenset()) -> str | None:
    """The line for settings ``raw`` of the other kind than ``expected`` ("run config" or "grid") when they plainly
    are, with the verb that takes them; None otherwise. ``run_keys`` and ``grid_keys`` are RunConfig's and a grid
    file's top-level keys (passed in: this module sits below both readers). Issue 30 round 16: ``train --config
    g1.yaml`` (a grid) said "unknown key name in RunConfig" (C263) and ``sweep --grid tiny.yaml`` (a run config)
    "unknown key batch_tokens in grid" (C264), where a meta.json or a state.json given there is named for what it is
    (C265, C266). Called where a key of ``raw`` is unknown to ``expected``, so a file of the expected kind is never
    named otherwise."""
    marks = [key for key in GRID_MARKS if key in raw]
    if expected == "run config" and marks:
        return (f"config file {str(path)!r} is a sweep grid (it has {' and '.join(marks)}), not a run config; run it "
                f"with `leviathan sweep --grid {path}`, or give train a run config (--config tiny, or a run's "
                f"config.yaml)")
    if path is None and (what := json_kind(raw)) is not None:  # a sweep's grid.json read into a dict (round 24, W489)
        recorded = raw.get("path") if isinstance(raw.get("path"), str) and "runs" in raw else None
        return (f"the {expected} given (a dict) is {what}, not a {expected}; "
                + (f"pass the grid file it records, {recorded!r}, or its dict" if recorded
                   else f"pass a {expected} file or its dict"))
    only_run = sorted(str(key) for key in raw if key in run_keys and key not in grid_keys)
    if expected == "grid" and only_run and not marks and path is None:  # load_grid(dict) named 'None' (round 17, E300)
        return (f"the grid given (a dict) is a run config (it has {', '.join(only_run[:3])}), not a grid; give "
                f"load_grid a grid (with sizes and experiments), or write these settings to a YAML file and train it "
                f"with `leviathan train --config FILE`")
    if expected == "grid" and only_run and not marks:
        return (f"grid file {str(path)!r} is a run config (a `leviathan train --config` file: it has "
                f"{', '.join(only_run[:3])}), not a grid; train it with `leviathan train --config {path}`, or name it "
                f"in a grid as its base_config")
    return None
