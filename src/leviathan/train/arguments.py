"""``train``'s Python arguments beside the config, checked before anything is read or written.

    check_train_arguments(resume, quiet)

``resume`` is None (a fresh run), ``"auto"`` (the run folder's latest checkpoint) or the path of a checkpoint:
``train(cfg, RUN, resume=True)`` reached pathlib's "expected str, bytes or os.PathLike object, not bool" inside
``checkpoint.find`` (a traceback, issue 30 round 17, E18), and '' would be read as the current folder. ``quiet`` is a
switch: ``quiet='no'`` was true and trained without a progress line (E19). The CLI gives both as what they are
(``--resume PATH``, no quiet flag); only a Python caller can pass the wrong kind.
"""

from __future__ import annotations

import os

from ..value_rules import check_switches


def check_train_arguments(resume, quiet) -> None:
    """TypeError naming ``resume`` or ``quiet`` when it is not of its kind (see the module docstring)."""
    check_switches("train", quiet=quiet)
    if resume is not None and (not isinstance(resume, (str, os.PathLike)) or os.fspath(resume) == ""):
        shown = "an empty path ('', read as the current folder)" if isinstance(resume, str) else repr(resume)[:60]
        raise TypeError(f"train: resume must be None (a fresh run), 'auto' (the run folder's latest checkpoint) or "
                        f"the path of a checkpoint, got {shown}; pass one of these")
