"""An interval is named by the level it was computed at, as given (issue 30 round 29, V15, "silent").

``analyze fit --ci 0.999`` printed "99% bootstrap intervals" and ``--ci 0.975`` "not 97% intervals", and ``report
--ci 0.999`` wrote "the 99% Student t interval": ``int(100 * ci)`` cut the level to a whole percent. Every place that
names a level (analyze fit, ``PowerLawFit.unidentified``, the report's sections and figures, the demo's committed
intervals, ``few_draws``) now prints ``value_rules.level_percent``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402

FIT = ["analyze", "fit", "--sizes", "1e3,1e4,1e5,1e6", "--losses", "3,2.6,2.3,2.1"]


@pytest.mark.parametrize("ci, draws, says", [
    ("0.999", "5000", "99.9% bootstrap intervals"),
    ("0.975", "100", "not 97.5% intervals"),
    ("0.95", "100", "95% bootstrap intervals"),
])
def test_analyze_fit_names_the_level_given(ci, draws, says):
    done = cli([*FIT, "--ci", ci, "--bootstrap", draws])
    assert done.returncode == 0, done.stderr
    assert says in done.stdout, done.stdout


def test_the_reports_scaling_section_names_the_level_given():
    import numpy as np

    from leviathan.experiments.method.scaling import fit_power_law
    from leviathan.experiments.report.markdown import _scaling_section

    N, L = np.array([1e3, 1e4, 1e5, 1e6, 1e7]), np.array([3, 2.6, 2.1, 2.0, 1.7])
    fit = fit_power_law(N, L, num_bootstrap=200, seed=0, ci=0.975)
    sc = SimpleNamespace(fit=fit, variant="dense_untied", equivalents=[])
    text = "\n".join(_scaling_section(SimpleNamespace(scaling=sc), SimpleNamespace(frontier=None)))
    assert "Intervals: 97.5% bootstrap over runs (200 draws)." in text, text


def test_level_percent_keeps_the_digits_given():
    from leviathan.value_rules import level_percent

    assert [level_percent(c) for c in (0.95, 0.999, 0.975, 0.5, 0.99)] == ["95", "99.9", "97.5", "50", "99"]
