"""Inputs the verbs took without a word (issue 30 round 27: R36, R77, R78, R87, "silent").

``bench --only generator --config widths`` loaded the data of four width configurations, then measured the paper
defaults as without --config, exit 0: a configuration list given to sections that measure none (R36); ``params
--isoparametric model.embedding=dense_tied`` showed an "iso" row matched to dense_untied's count, a row the table
left out, beside a dense_tied half its size (R87); the rest are named in their tests. Each is now refused in one line naming what would use it, or said in the output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error  # noqa: E402


# ---- R36: bench's --config (and --decode-tokens) given to sections that do not use it -------------------
@pytest.mark.parametrize("argv, says", [
    (["--only", "generator", "--config", "widths"],
     "--config 'widths' is not used by the section(s) generator, which measure the paper defaults; drop --config, "
     "or add a section that measures configurations (train, modes, decode, hf, width) to --only"),
    (["--only", "generator,memory", "--config", "tiny"], "--config 'tiny' is not used by the section(s) generator, "),
    (["--only", "generator", "--decode-tokens", "3"],
     "--decode-tokens 3 is used by the decode section alone, not by generator; drop --decode-tokens, or add decode"),
], ids=["widths", "tiny", "decode-tokens"])
def test_an_option_no_chosen_section_uses_is_refused(tmp_path, argv, says):
    line = cli_error(["bench", "--quick", *argv, "--cache-dir", tmp_path / "bc", "--json", tmp_path / "b.json"])
    assert says in line, line
    assert not (tmp_path / "bc").exists() and not (tmp_path / "b.json").exists()


def test_sections_that_measure_no_configuration_load_none(monkeypatch):
    """The data of the configurations is loaded only when a chosen section measures them: the generator section
    alone loads the paper's o200k stream it runs on, not --config's (nor the default cpu's BPE, trained for it)."""
    from leviathan.bench import runner
    from leviathan.bench.configs import BenchOptions

    loaded = []

    def load_data(needed, cache_dir, log):
        loaded.append(set(needed))
        raise KeyboardInterrupt  # what was asked for is all this test needs

    monkeypatch.setattr(runner, "load_data", load_data)
    with pytest.raises(KeyboardInterrupt):
        runner.run_benchmark(BenchOptions(configs=("cpu", "tiny"), sections=("generator",), quick=True), log=None)
    assert loaded == [{"paper"}]


# ---- R87: the row the isoparametric depth is matched to is shown --------------------------------------
@pytest.mark.parametrize("embedding", ["dense_tied", "leviathan"])
def test_the_iso_rows_target_is_shown_when_not_listed(embedding):
    proc = cli(["params", "--isoparametric", "--preset", "cpu-tiny", f"model.embedding={embedding}", "--json"])
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    target = rows["dense_untied (iso target)"]
    iso = next(r for name, r in rows.items() if name.startswith("leviathan iso"))
    assert abs(iso["total"] - target["total"]) / target["total"] < 0.01 and embedding in rows


def test_the_default_table_lists_dense_untied_once():
    proc = cli(["params", "--isoparametric", "--preset", "cpu-tiny"])
    assert proc.returncode == 0 and proc.stdout.count("dense_untied") == 1 and "iso target" not in proc.stdout
