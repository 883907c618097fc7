"""Intervals from too few bootstrap draws are not called 95% intervals (issue 30 round 28: T60, "silent").

``analyze fit --bootstrap 1`` printed "E = 1.75 [1.75, 1.75] ... (95% bootstrap intervals)" from one draw, and
``--bootstrap 2`` judged alpha "not identified" from its "95% interval" of two draws; report's --bootstrap is the same
option. ``value_rules.bootstrap_floor`` states the floor (100 draws, more for a wider --ci: 2 draws beyond each end),
``few_draws`` the words under it, used by ``format_fit``, ``PowerLawFit.unidentified`` and the report's scaling
section; ``commands.values.add_bootstrap_option`` is the one definition of --bootstrap for analyze and report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402

FIT = ["analyze", "fit", "--sizes", "1e3,1e4,1e5,1e6,1e7", "--losses", "3,2.6,2.1,2.0,1.7"]


@pytest.mark.parametrize("draws, extra, says", [
    ("1", [], "intervals from only 1 bootstrap draw, not 95% intervals: at least 100 draws put 2 beyond each end; "
              "give --bootstrap 100 or more (default 1000)"),
    ("2", [], "intervals from only 2 bootstrap draws, not 95% intervals"),
    ("100", ["--ci", "0.99"], "intervals from only 100 bootstrap draws, not 99% intervals: at least 400 draws"),
], ids=["one", "two", "ci99"])
def test_a_fit_from_too_few_draws_says_so(draws, extra, says):
    done = cli([*FIT, "--bootstrap", draws, *extra])
    assert done.returncode == 0, done.stderr
    assert says in done.stdout and "% bootstrap intervals" not in done.stdout, done.stdout
    assert "% interval [" not in done.stdout, done.stdout  # "not identified: alpha's interval (2 draws) [...]"
    assert draws == "1" or f"alpha's interval ({draws} draws) [" in done.stdout, done.stdout


def test_enough_draws_keep_the_coverage():
    done = cli([*FIT, "--bootstrap", "100"])
    assert done.returncode == 0 and "(rmse 0.0596; 95% bootstrap intervals)" in done.stdout, done.stdout


def test_the_reports_scaling_section_says_too_few_draws():
    import numpy as np

    from leviathan.experiments.method.scaling import fit_power_law
    from leviathan.experiments.report.markdown import _scaling_section

    N, L = np.array([1e3, 1e4, 1e5, 1e6, 1e7]), np.array([3, 2.6, 2.1, 2.0, 1.7])
    sc = SimpleNamespace(fit=fit_power_law(N, L, num_bootstrap=5, seed=0), variant="dense_untied", equivalents=[])
    text = "\n".join(_scaling_section(SimpleNamespace(scaling=sc), SimpleNamespace(frontier=None)))
    assert "Intervals: bootstrap over runs (5 draws); intervals from only 5 bootstrap draws, not 95% intervals" in text
    sc.fit = fit_power_law(N, L, num_bootstrap=100, seed=0)
    text = "\n".join(_scaling_section(SimpleNamespace(scaling=sc), SimpleNamespace(frontier=None)))
    assert "Intervals: 95% bootstrap over runs (100 draws)." in text, text


def test_analyze_and_report_share_the_option():
    for argv in (["analyze", "fit", "--help"], ["analyze", "scaling", "--help"], ["report", "--help"]):
        done = cli(argv)
        assert done.returncode == 0 and "0: no intervals; under 100" in " ".join(done.stdout.split()), done.stdout
