"""Which prepared data a run trained on: every state.json records its data folder's fingerprint (``data_fingerprint``,
meta.json's), and a reader compares it with the data it is given (issue 30 round 15, A124, A123).

    problem = data_changed(state.raw, data_dir)   # None, or why the data is not the run's (both fingerprints named)

Before, a data folder re-prepared under the same name from a changed corpus (one word edited, the same number of
windows) was resumed onto with the saved loader position, exit 0, and eval of the run on its own data path scored the
other corpus as the run's. Old checkpoints (no ``data_fingerprint``) and data folders without one are not checked.
"""

from __future__ import annotations

import os

from ..data.meta import find_meta
from ..errors import UserError

FIELD = "data_fingerprint"


AGAIN = "prepared again from another corpus or with other settings"


def data_changed(state: dict, data_dir: str | os.PathLike, cause: str = AGAIN) -> str | None:
    """Why ``data_dir`` is not the data a step whose state.json is ``state`` trained on, or None. ``cause``: the
    likely reason the line gives (a sweep's run folder copied in from a sweep of other data is not ``AGAIN``)."""
    saved = state.get(FIELD)
    try:
        meta = find_meta(data_dir)
    except UserError:
        return None  # a damaged meta.json is refused by the verb's own read, with its own fix
    if not isinstance(saved, str) or meta is None or not meta.fingerprint or saved == meta.fingerprint:
        return None
    return (f"the run trained on data of fingerprint {saved[:12]}..., but {str(data_dir)!r} now holds data of "
            f"fingerprint {meta.fingerprint[:12]}... ({cause})")
