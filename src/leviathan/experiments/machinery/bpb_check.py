"""A results row's bits per byte against its loss and its data's bytes (issue 30 round 27, R56).

    problem = bpb_contradiction(row, sweep_folder)   # None, or why eval.NAME.bpb is not the row's own loss in bits per byte

An eval set's ``bpb`` is derived, never measured apart (``eval.perplexity.summarize``): the set's summed nats
(``loss`` x ``tokens`` predictions) / ln 2 / the UTF-8 bytes of the text scored, which for a split of the prepared
data is the split's bytes (meta.json's ``splits.NAME.bytes``) times the share of its tokens the sweep kept
(``eval.stream.EvalStream.capped``: the first ``eval.max_tokens + 1``). A results file whose bpb was halved in every
row was reported as written, exit 0: the rows agreed with each other, and ``_impossible`` (the row alone) holds no
byte count. The check needs the row's data folder, found by its ``data.dir`` (as written, or from the sweep folder
or its parent) and proven the row's by its fingerprint; a row without one, a collected copy without the data, a set
read from a text file or a restricted set (no bpb) is not checked: the rule proves nothing there.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

RELATIVE = 1e-6  # the same float64 arithmetic done again; an edit that matters differs far more


def bpb_contradiction(row, folder: Path) -> str | None:
    """Why a ``ResultRow`` of the sweep folder ``folder`` holds an ``eval.NAME.bpb`` its loss, tokens and data do not
    give (None: none contradicts, or nothing to check against)."""
    meta = _row_data(row, Path(folder))
    evaluation = row.evaluation
    if meta is None or evaluation is None:
        return None
    cap = int(evaluation.options.max_tokens or 0) or None  # the sweep's own reading (``sweep._EvalData.get``)
    for name, ev in row.eval.items():
        spec = evaluation.sets.get(name)
        info = meta.splits.get(spec.split) if spec is not None and spec.split else None
        if ev is None or info is None or not _numbers(ev.bpb, ev.loss, ev.tokens, info.tokens, info.bytes):
            continue
        kept = cap + 1 if cap is not None and info.tokens > cap + 1 else info.tokens
        wanted = ev.loss * ev.tokens / math.log(2) / (info.bytes * (kept / info.tokens))
        if abs(ev.bpb - wanted) > RELATIVE * wanted:
            return (f"the row of run {row.name!r} has eval.{name}.bpb {ev.bpb!r}, not its loss in bits per byte: "
                    f"{ev.loss!r} x {ev.tokens:,} tokens / ln 2 / the {info.bytes * kept / info.tokens:,.0f} bytes "
                    f"they encode ({spec.split} split of {row.data_provenance.dir!r}) = {wanted:.6g}")
    return None


def _numbers(*values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and math.isfinite(v)
               for v in values)


def _row_data(row, folder: Path):
    """The ``PreparedMeta`` of the row's data folder, when one is found whose fingerprint is the row's."""
    from ...data.meta import find_meta
    from ...errors import UserError

    data = row.data_provenance
    if not data.dir or not data.fingerprint:
        return None
    written = os.path.expandvars(data.dir)
    for candidate in (Path(written), folder / written, folder.parent / written):
        try:
            meta = find_meta(candidate) if candidate.is_dir() else None
        except (UserError, OSError, ValueError):  # a damaged folder proves nothing here; its readers say why
            meta = None
        if meta is not None and meta.fingerprint == data.fingerprint:
            return meta
    return None
