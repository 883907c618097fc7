"""The ablation report's figures: ``gap_<factor>.png``, the arm-minus-dense validation loss over training."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..plots import pyplot, save_figure
from .analysis import ArmSummary


def fig_gap(summaries: list[ArmSummary], labels: list[str], title: str, path: Path) -> bool:
    """Leviathan - dense validation loss against tokens, one line per arm; the plateau region shaded."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    drawn = False
    for lab in labels:
        s = next((x for x in summaries if x.label == lab), None)
        if s is None or not s.curve.tokens:
            continue
        t = np.array(s.curve.tokens) / 1e6
        ax.plot(t, s.curve.gap, marker=".", label=f"{lab} (V {s.vocab:,})" if s.vocab else lab)
        if s.tokens_past_plateau:
            ax.axvline(s.tokens_past_plateau / 1e6, color=ax.lines[-1].get_color(), ls=":", lw=0.8)
        drawn = True
    if not drawn:
        plt.close(fig)
        return False
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xlabel("training tokens (M)")
    ax.set_ylabel("val loss: arm - dense_tied (nats)")
    ax.set_title(f"{title}: < 0 means the arm (leviathan unless named) is better\n"
                 "(dotted: dense model 0.5 nats below the unigram entropy)",
                 fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, path)
    return True
