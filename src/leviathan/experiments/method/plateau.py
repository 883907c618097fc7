"""The unigram plateau: the loss a model reaches by predicting token frequencies alone.

Used by both reports (``report``, ``ablation``) to mark where a dense baseline is still on the plateau:
early optimisation speed, not capacity. The entropy comes from the data folder's ``train_freq.npy``, else
from the ``unigram_entropy`` a copied grid.json holds (scripts/collect_results.py stores it there):
``machinery.data_match.grid_plateau`` chooses, since it must check that the folder is the sweep's data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def unigram_entropy(data_dir: str | Path) -> float | None:
    """Entropy (nats) of the training unigram distribution, from the data folder's train_freq.npy; None for a
    prepared data folder without one (a preparation older than the file). A folder with neither the file nor a
    prepared folder's meta.json (none there, an export, a run) is a UserError naming it (``data_folder_problem``): it returned None, "no
    plateau", without a word (issue 30 round 35, AI202, AI203)."""
    from ...data.meta import DATA_DIR_FIX, META_FILE, data_folder_problem
    from ...errors import UserError
    from ...value_rules import check_read_path

    check_read_path("unigram_entropy", "data_dir", data_dir, DATA_DIR_FIX)  # M339 (round 20)
    path = Path(data_dir) / "train_freq.npy"
    if not path.is_file():
        if not (Path(data_dir) / META_FILE).is_file():
            raise UserError(f"unigram_entropy: data_dir {str(data_dir)!r} "
                            f"{data_folder_problem(data_dir, DATA_DIR_FIX)}")
        return None
    from ...data.companions import load_train_freq

    freq = load_train_freq(data_dir).astype(np.float64)
    p = freq[freq > 0] / freq.sum()
    return float(-(p * np.log(p)).sum())
