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
    """Lay out, write as a 120-dpi PNG and free one figure (every figure of the reports). The PNG is drawn in memory
    and written atomically (``io.atomic_write_bytes``): a full disk left a truncated figure under its own name, and
    an error that named no file (issue 30 round 5)."""
    import io as _io

    from ..io import atomic_write_bytes

    fig.tight_layout()
    buffer = _io.BytesIO()
    try:
        fig.savefig(buffer, dpi=120, format="png")
    finally:
        pyplot().close(fig)
    atomic_write_bytes(path, buffer.getvalue())
