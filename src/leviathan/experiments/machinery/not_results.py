"""A file given as results that is recognisably another file: one error naming what it looks like, not warnings.

    what = other_file(path, values, bad)   # "the whole file is one JSON object ..." or None

``read_results('data1/meta.json')`` returned [] after five warnings that its lines were 'cut short or damaged' and
'the sweep trains or evaluates it again', and ``read_results('run1/metrics.jsonl')`` after six that its lines were
'not a results row': the file is not a results file at all, which the CLI said only after the same warnings (issue
30 round 16, C239, C240). A file none of whose lines is a row is named as such when it is recognisably something
else: the whole file parses as one JSON value (a data folder's meta.json, a grid.json, a run's summary), or every
line is a JSON object without a ``name`` (a run's metrics.jsonl). Footgun: a results file torn or damaged line by
line (a crash, a binary file) is neither, and keeps its warnings: the sweep then trains those runs again.
"""

from __future__ import annotations

import os
from typing import Any
from ... import json_text


def other_file(path: str | os.PathLike, values: list[tuple[int, Any]], bad: list) -> str | None:
    """What ``path`` is instead of a results file (module docstring), or None. ``values`` and ``bad``: its lines as
    ``jsonl.read_json_lines`` read them (parsed, and not parsed); called only when none of them is a row."""
    if not values and not bad:
        return None  # an empty file: a sweep folder before its first row
    from dataclasses import fields

    from ...file_kinds import RESULTS_KIND, file_kind
    from ...run_config import RunConfig

    # a run config, a grid, a token file, ... (round 17, D289-D291, E29); a results file whose every row is refused
    # is one (its warnings name each line's problem): "not a results file: it is a sweep's results.jsonl" named no
    # cause, and contradicted itself (issue 30 round 23, U103)
    if (kind := file_kind(path, frozenset(f.name for f in fields(RunConfig)))) == RESULTS_KIND:
        return None
    if kind is not None:
        return f"it is {kind}"
    if bad and not any("UTF-8" in why for _, why in bad):
        try:
            whole = json_text.loads(open(path, encoding="utf-8-sig").read())
        except (OSError, ValueError):
            whole = None
        if whole is not None:
            kind = {"dict": "object", "list": "array"}.get(type(whole).__name__, "value")
            return (f"it is one JSON {kind} over {len(values) + len(bad)} lines (a data folder's meta.json, a "
                    f"grid.json or a run's summary?)")
    if not bad and all(isinstance(v, dict) and "name" not in v for _, v in values):
        keys = sorted({k for _, v in values for k in v})[:4]
        return (f"its lines are JSON objects without a run's name (keys such as {', '.join(keys)}: a run's "
                f"metrics.jsonl?)")
    return None
