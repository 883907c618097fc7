"""Which prepared data a run trained on: every state.json records its data folder's fingerprint (``data_fingerprint``,
meta.json's), and a reader compares it with the data it is given (issue 30 round 15, A124, A123).

    problem = data_changed(state.raw, data_dir)   # None, or why the data is not the run's (both fingerprints named)

Before, a data folder re-prepared under the same name from a changed corpus (one word edited, the same number of
windows) was resumed onto with the saved loader position, exit 0, and eval of the run on its own data path scored the
other corpus as the run's. Old checkpoints (no ``data_fingerprint``) and data folders without one are not checked.

Round 20 (K8, K9): a step's state.json whose ``data_fingerprint`` was edited blamed the untouched data folder ("now
holds data of fingerprint ...; restore it"). A run trains one data set (a resume refuses another), so when the run's
other step folders record the data's fingerprint as it is, the odd state.json is named as damaged instead.
"""

from __future__ import annotations

import os

from pathlib import Path

from .. import json_text
from ..checkpoint.layout import list_checkpoints
from ..data.meta import find_meta
from ..errors import UserError

FIELD = "data_fingerprint"


AGAIN = "prepared again from another corpus or with other settings"


def data_changed(state: dict, data_dir: str | os.PathLike, step_dir: str | os.PathLike | None = None,
                 cause: str = AGAIN) -> str | None:
    """Why ``data_dir`` is not the data a step whose state.json is ``state`` trained on, or None. Given the step's
    folder, a UserError naming its state.json when the run's other steps record the data's fingerprint (K8).
    ``cause``: the likely reason the line gives (a sweep's run folder copied in from a sweep of other data is not
    ``AGAIN``)."""
    saved = state.get(FIELD)
    try:
        meta = find_meta(data_dir)
    except UserError:
        return None  # a damaged meta.json is refused by the verb's own read, with its own fix
    if not isinstance(saved, str) or meta is None or not meta.fingerprint or saved == meta.fingerprint:
        return None
    if step_dir is not None:
        _refuse_odd_step(Path(step_dir), saved, meta.fingerprint)
    return (f"the run trained on data of fingerprint {saved[:12]}..., but {str(data_dir)!r} now holds data of "
            f"fingerprint {meta.fingerprint[:12]}... ({cause})")


def _refuse_odd_step(step_dir: Path, saved: str, found: str) -> None:
    """UserError naming ``step_dir``'s state.json when another step folder of its run records ``found`` (the data's
    fingerprint now) where this one records ``saved``: one run trains one data set, so the step's record was edited
    or damaged, not the data changed (issue 30 round 20, K8, K9)."""
    for _, other in list_checkpoints(step_dir.parent.parent):
        try:
            raw = json_text.read_file(other / "state.json")
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if other.name != step_dir.name and isinstance(raw, dict) and raw.get(FIELD) == found:
            path = step_dir / "state.json"
            raise UserError(f"{str(path)!r}: field {FIELD!r} is {saved[:12]}..., but the run's {other.name} records "
                            f"{found[:12]}..., the fingerprint of its data as it is (one run trains one data set): "
                            f"the checkpoint was damaged or edited by hand: restore the file from a copy, or move the "
                            f"step folder {str(step_dir)!r} out of checkpoints/ to go on from the previous one")
