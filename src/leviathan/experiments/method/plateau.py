"""The unigram plateau: the loss a model reaches by predicting token frequencies alone.

Used by both reports (``report``, ``ablation``) to mark where a dense baseline is still on the plateau:
early optimisation speed, not capacity. The entropy comes from the data folder's ``train_freq.npy``, else
from the ``unigram_entropy`` a copied grid.json holds (scripts/collect_results.py stores it there).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..machinery.sweep_grid import SweepGrid


def unigram_entropy(data_dir: str | Path) -> float | None:
    """Entropy (nats) of the training unigram distribution, from the data folder's train_freq.npy."""
    path = Path(data_dir) / "train_freq.npy"
    if not path.is_file():
        return None
    from ...data.companions import load_train_freq

    freq = load_train_freq(data_dir).astype(np.float64)
    p = freq[freq > 0] / freq.sum()
    return float(-(p * np.log(p)).sum())


def grid_plateau(grid: SweepGrid) -> float | None:
    """The unigram plateau of a sweep's grid.json: from its data folder when that is provably the sweep's data, else
    the ``unigram_entropy`` grid.json holds (scripts/collect_results.py stores it in a copy of the sweep).

    Footgun: grid.json's ``data_dir`` is relative to the folder the sweep ran in, so read from another folder it
    names whatever lies at that path there (a report of committed results run from a checkout whose
    ``data/gutenberg-o200k`` holds another preparation). The folder counts only when its fingerprint is the one
    grid.json records; a grid.json that records none falls back to the folder only when it stores no value."""
    from ..machinery.data_match import FINGERPRINT, grid_data, match_data
    from ..machinery.provenance import data_provenance

    if not grid.data_dir:
        return grid.unigram_entropy
    match = match_data(grid_data(grid), data_provenance(grid.data_dir))
    trusted = (not match.differences) if match.how == FINGERPRINT else grid.unigram_entropy is None
    plateau = unigram_entropy(grid.data_dir) if trusted else None
    return grid.unigram_entropy if plateau is None else plateau
