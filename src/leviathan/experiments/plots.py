"""matplotlib for the reports: the Agg backend (no display needed) and 120-dpi PNGs, shared by ``report``
(sweep figures) and ``ablation`` (gap figures)."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the Agg backend."""
    _usable_config_dir()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _usable_config_dir() -> None:
    """One warning line, and a temporary folder for matplotlib's cache, when ``MPLCONFIGDIR`` names no writable folder:
    matplotlib printed two raw lines of its own ("mkdir -p failed ...", "Matplotlib created a temporary cache
    directory ...") before a right report (issue 30 round 11, R89)."""
    import os
    import sys
    import tempfile

    from ..errors import not_a_folder_there

    given = os.environ.get("MPLCONFIGDIR")
    if not given or "matplotlib" in sys.modules:
        return
    try:
        os.makedirs(given, exist_ok=True)  # matplotlib makes it too
    except OSError as e:
        why = (not_a_folder_there(given) if os.path.lexists(given) else
               f"cannot be made a folder ({(e.strerror or str(e)).lower()})")
    else:
        if os.access(given, os.W_OK | os.X_OK):
            return
        why = "is not writable"
    os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="leviathan-matplotlib-")
    print(f"warning: MPLCONFIGDIR {given!r} {why}; matplotlib's cache went to a temporary folder this time (point "
          f"MPLCONFIGDIR at a writable folder, or unset it)", file=sys.stderr)


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
