"""Round 35's unclear and silent lines that named another cause than the real one, or none (issue 30): a row's speed
edited x1000 reported by ``analyze throughput`` as 76005% faster (AH171); one results file named twice blamed on a
missing grid.json (AI170, AI484); a report's out_dir that is the results file blamed on a report marker (AI482); a
negative size to ``fit_power_law`` without the value or a fix (AI192); ``resume='AUTO'`` read as a path without a
word about the switch (AI220). A real two-run sweep (module scope) serves the first four."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from leviathan.errors import UserError
from reliability_support import cli, one_error  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _speed_edited(swept: Path, folder: Path, key: str, factor: float) -> Path:
    sweep = Path(shutil.copytree(swept, folder))
    rows = [json.loads(line) for line in (sweep / "results.jsonl").read_text().splitlines()]
    rows[1][key] *= factor
    (sweep / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return sweep


@pytest.mark.parametrize("key", ["tokens_per_s", "wall_time_s"])
@pytest.mark.parametrize("argv", [["analyze", "throughput", "SW"], ["report", "SW", "--out", "REP", "--bootstrap", "5"]],
                         ids=["throughput", "report"])
def test_a_rows_speed_edited_apart_from_its_run_is_refused(swept, tmp_path, argv, key):
    """AH171: the row's tokens_per_s (or wall_time_s) x1000, its run folder's sweep_train.json as trained."""
    sweep = _speed_edited(swept, tmp_path / "sw", key, 1000.0)
    done = cli([{"SW": sweep, "REP": tmp_path / "rep"}.get(a, a) for a in argv])
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert f"{key} " in line and "is not the run's own training summary's" in line and "sweep_train.json" in line, line
    assert "delete the row's line and run the sweep's command again" in line, line
    assert not (tmp_path / "rep").exists()


def test_the_speeds_as_the_sweep_wrote_them_still_pass(swept, tmp_path):
    done = cli(["analyze", "throughput", Path(shutil.copytree(swept, tmp_path / "sw"))])
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("twice", [lambda s: [s / "results.jsonl", s / "results.jsonl"],
                                   lambda s: [s, s / "results.jsonl"]], ids=["AI170-same-file", "AI484-two-spellings"])
def test_one_results_named_twice_is_said_before_its_grid_json(swept, tmp_path, twice):
    """A folder without grid.json, named twice: the repeat is the cause the line names."""
    from leviathan.experiments.report import write_report

    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    (sweep / "grid.json").unlink()
    with pytest.raises(UserError, match=r"is the sweep folder .* again .*merged with themselves; give each shard's "
                                        r"sweep folder once"):
        write_report(twice(sweep), tmp_path / "rep", num_bootstrap=5)


def test_a_report_into_its_own_results_file_names_the_file(swept, tmp_path):
    """AI482: out_dir = the results file given."""
    from leviathan.experiments.report import write_report

    results = Path(shutil.copytree(swept, tmp_path / "sw")) / "results.jsonl"
    before = results.read_bytes()
    with pytest.raises(UserError, match=r"write_report: out_dir: .*results\.jsonl' is a file, not a folder \(it is "
                                        r"the results file given\); pass the folder to write the report into"):
        write_report(results, results, num_bootstrap=5)
    assert results.read_bytes() == before


@pytest.mark.parametrize("sizes, losses, said", [([-1, 2, 3], [3, 2, 1], "size -1 at position 1"),
                                                 ([1, 2, 3], [3, 0, 1], "loss 0 at position 2")])
def test_a_power_law_fit_names_the_value_that_is_not_positive(sizes, losses, said):
    """AI192."""
    from leviathan.experiments.method.scaling import fit_power_law

    with pytest.raises(UserError, match=rf"sizes and losses must be positive, got {said}; pass parameter counts and "
                                        rf"losses above 0, or drop that run"):
        fit_power_law(sizes, losses, num_bootstrap=10)


def test_resume_auto_in_capitals_names_the_switch(tmp_path, monkeypatch):
    """AI220: 'AUTO' is no folder here; the line says the switch is spelt 'auto'."""
    from leviathan.checkpoint.find import find_checkpoint

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=r"checkpoint 'AUTO' does not exist; .*spell the switch resume='auto'"):
        find_checkpoint("AUTO")
