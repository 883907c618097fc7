"""matplotlib for the reports: the Agg backend (no display needed) and 120-dpi PNGs, shared by ``report``
(sweep figures) and ``ablation`` (gap figures)."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path) -> None:
    """Lay out, write as a 120-dpi PNG and free one figure (every figure of the reports)."""
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
