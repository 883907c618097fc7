"""What a file or folder of the product's kinds is, named with the verb that writes (or reads) it.

    what = file_kind(path)     # "a train run config (read by `leviathan train --config`)", or None
    what = folder_kind(path)   # "a report folder (written by `leviathan report`)", or None
    what = json_kind(value)    # for a JSON object already read: "a run's summary.json (written by `leviathan train`)"

The one recogniser every reader calls when it refuses an input, so the refusal says "X is <kind>; give <what is
expected>" instead of reading X as a damaged file of the kind it expected (issue 30 round 17): a run config or a
grid given as results was six warnings that each YAML line was a torn row "the sweep trains again" (D289-D291); a
data folder's train.bin, 81 such warnings (E29, E31); an export's config.json, lm-eval's lm_eval.json, a report's
analysis.json and a run's summary.json given as a config were "unknown key 'head_dim' in RunConfig" (E393,
E396-E399); a report, data or run folder given to `sweep --reuse` was "no rows there yet" and exit 0 (D298, D299,
D303).

Footgun: a guess would call a user's own file one of leviathan's. Each kind is named only by what only it has: a
folder by its marker's verb (read as a name only: a copied marker names its kind, even where it proves no
ownership) or the file only that verb writes there; a JSON object by keys only that file has together; a token
file by its data folder's meta.json, which lists it. Anything else is None, and the reader keeps its own words.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from . import json_text

_JSON_OBJECTS = (  # (keys a JSON object has together, what the file then is)
    ({"base_overrides", "eval_options", "runs"}, "a sweep's grid.json (written by `leviathan sweep`: the record of "
                                                 "the grid it ran)"),
    ({"format", "step", "loader", "rng"}, "a checkpoint's state.json (written by `leviathan train`)"),
    ({"splits", "vocab_size", "eot_id"}, "a prepared data folder's meta.json (written by `leviathan prepare`)"),
    ({"run", "definitions", "probes"}, "an embeddings record (written by `leviathan analyze embeddings`)"),
    ({"format", "verb", "files"}, "a verb's ownership marker (leviathan_output.json)"),
    ({"model_type", "vocab_size", "hidden_size"}, "a Hugging Face model config (config.json, written by `leviathan "
                                                  "export` or save_pretrained)"),
    ({"source", "hf_dir", "tasks", "results"}, "lm-eval's results (lm_eval.json, written by `leviathan lm-eval`)"),
    ({"num_runs", "eval_set", "comparisons"}, "a report's analysis.json (written by `leviathan report`)"),
    ({"run_dir", "steps", "tokens", "train_time_s"}, "a run's summary.json (written by `leviathan train`)"),
)

RESULTS_KIND = "a sweep's results.jsonl (written by `leviathan sweep`: results rows, one JSON object a line)"
_JSON_LINES = (  # (keys every object of a JSON lines file has, what the file then is)
    ({"name", "variant", "seed", "params"}, RESULTS_KIND),
    ({"step", "tokens"}, "a run's metrics.jsonl (written by `leviathan train`: training metrics, one JSON object a "
                         "line)"),
)

_VERB_FOLDERS = {  # a marker's verb -> what its folder is
    "train": "a train run folder (written by `leviathan train`)",
    "sweep": "a sweep folder (written by `leviathan sweep`)",
    "prepare": "a prepared data folder (written by `leviathan prepare`)",
    "export": "an export, a Hugging Face folder (written by `leviathan export`)",
    "report": "a report folder (written by `leviathan report`)",
    "lm-eval": "an lm-eval folder (written by `leviathan lm-eval`)",
}

_FOLDER_FILES = (  # (a file only that kind of folder holds, what the folder is): folders written before markers
    ("meta.json", _VERB_FOLDERS["prepare"]),
    ("checkpoints", _VERB_FOLDERS["train"]),
    ("state.json", "a checkpoint's step folder (written by `leviathan train`)"),
    ("report.md", _VERB_FOLDERS["report"]),
    ("lm_eval.json", _VERB_FOLDERS["lm-eval"]),
    ("config.json", "a Hugging Face model folder (written by `leviathan export` or save_pretrained)"),
)

GRID_MARKS = ("sizes", "experiments")  # what only a grid has: the models and the regimes it sweeps


def json_kind(value: Any) -> str | None:
    """What a JSON object leviathan writes is ("a run's summary.json (written by `leviathan train`)"); None for any
    other value (a config may be written in JSON: only these layouts are named)."""
    if isinstance(value, dict):
        for keys, what in _JSON_OBJECTS:
            if keys <= set(value):
                return what
    return None


def json_lines_kind(lines: list[Any]) -> str | None:
    """What a file of JSON lines is, from its first objects ``lines``; None when they are not all objects of one of
    the kinds leviathan writes."""
    if not lines or not all(isinstance(value, dict) for value in lines):
        return None
    for keys, what in _JSON_LINES:
        if all(keys <= set(value) for value in lines):
            return what
    return None


def settings_kind(raw: Any, run_keys: frozenset[str]) -> str | None:
    """What YAML settings ``raw`` are: a grid (it has sizes or experiments) or a run config (every key one of
    ``run_keys``, RunConfig's top-level keys: passed in, as this module sits below the config readers); None
    otherwise."""
    if not isinstance(raw, dict) or not raw:
        return None
    if any(key in raw for key in GRID_MARKS):
        return "a sweep grid (read by `leviathan sweep --grid`)"
    if run_keys and all(key in run_keys for key in raw):
        return "a train run config (read by `leviathan train --config`)"
    return None


def folder_kind(folder: str | os.PathLike) -> str | None:
    """What ``folder`` is by its marker's verb, or by a file only one kind of folder holds; None otherwise."""
    folder = Path(folder)
    try:
        verb = json_text.read_file(folder / "leviathan_output.json").get("verb")
    except (OSError, ValueError, AttributeError):
        verb = None
    if verb in _VERB_FOLDERS:
        return _VERB_FOLDERS[verb]
    for name, what in _FOLDER_FILES:
        if os.path.lexists(folder / name):
            return what
    return None


COLLECTED = ("a results folder scripts/collect_results.py wrote (its grid.json records the unigram_entropy collect "
             "adds)")


def is_collected(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is a results folder scripts/collect_results.py wrote: its grid.json holds the
    ``unigram_entropy`` only collect adds (it writes no marker). An export, a run or a data folder inside one was
    accepted where every verb's own output refuses them (issue 30 round 20, K148), and prepare read its results.jsonl
    as a corpus after training a tokenizer (K125). The key counts even when null: collect stores null where the
    sweep's data folder is not found from where it runs, and such a fresh collect was not recognised (its report
    refused beside its rows: round 21, N345); a sweep's own grid.json has no such key."""
    try:
        grid = json_text.read_file(Path(folder) / "grid.json")
    except (OSError, ValueError):
        return False
    return isinstance(grid, dict) and "unigram_entropy" in grid


def file_kind(path: str | os.PathLike, run_keys: frozenset[str] = frozenset()) -> str | None:
    """What the file or folder ``path`` is (module docstring); None when it is none of the product's kinds.
    ``run_keys``: RunConfig's top-level keys, to name a run config (left out: a YAML file is named only as a grid)."""
    path = Path(path)
    if os.path.isdir(path):
        return folder_kind(path)
    if not os.path.isfile(path):  # a device or a pipe is none of them: /dev/zero was read whole until memory ran
        return None               # out, and a pipe without a writer blocked for ever (issue 30 round 26, Q394, Q409)
    if (token := _token_file(path)) is not None:
        return token
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)  # the first MiB, not the whole file cut to it
    except OSError:
        return None
    return _text_kind(data, run_keys)


def _token_file(path: Path) -> str | None:
    """"a token file of a prepared data folder (...)" when the meta.json beside ``path`` lists it as a split."""
    try:
        meta = json_text.read_file(path.parent / "meta.json")
        names = {split.get("file") for split in meta["splits"].values()}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None
    if path.name in names:
        return "a token file of a prepared data folder (written by `leviathan prepare`)"
    return None


def _text_kind(data: bytes, run_keys: frozenset[str]) -> str | None:
    """What a file of text ``data`` is: a JSON object, JSON lines or YAML settings of a known kind."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    try:
        return json_kind(json.loads(text))
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to read (thousands of '[')
        pass
    lines = [line for line in text.splitlines() if line.strip()][:2]
    try:
        return json_lines_kind([json.loads(line) for line in lines])
    except (ValueError, RecursionError):
        pass
    import yaml

    try:
        return settings_kind(yaml.safe_load(text), run_keys)
    except (yaml.YAMLError, RecursionError):  # not YAML, or nested too deeply to read: none of the kinds
        return None
