"""Inputs the verbs took without a word (issue 30 round 27: R36, R77, R78, R87, "silent").

``bench --only generator --config widths`` loaded the data of four width configurations, then measured the paper
defaults as without --config, exit 0: a configuration list given to sections that measure none (R36); ``params
--isoparametric model.embedding=dense_tied`` showed an "iso" row matched to dense_untied's count, a row the table
left out, beside a dense_tied half its size (R87); ``demo`` with $LEVIATHAN_DATA naming a folder without the
Gutenberg books (R77), or one that does not exist (R78), trained on the standard library's sources without a word:
now a note says so, and a missing folder is refused as lm-eval refuses it. Each is now refused in one line naming what would use it, or said in the output.
"""

from __future__ import annotations

import json
import os
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


# ---- R77, R78: a $LEVIATHAN_DATA without the books, or not there -----------------------------------------
@pytest.mark.parametrize("argv", [["demo", "--steps", "1", "--run-dir", "dmd4", "--quiet"],
                                  ["bench", "--quick", "--only", "train", "--config", "tiny", "--cache-dir", "bc"]],
                         ids=["demo", "bench"])
def test_a_data_folder_the_setting_names_that_is_not_there_is_refused(tmp_path, monkeypatch, argv):
    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path / "nonexistent"))
    monkeypatch.setenv("LEVIATHAN_CACHE", str(tmp_path / "cache"))
    line = cli_error(argv, cwd=tmp_path)
    assert line == (f"error: the data folder {str(tmp_path / 'nonexistent')!r} (named by $LEVIATHAN_DATA) does not "
                    f"exist; set LEVIATHAN_DATA to the folder holding gutenberg/train and gutenberg/valid, or unset it "
                    f"to use the Python standard library's sources"), line
    assert not os.listdir(tmp_path)


def test_a_data_folder_without_the_books_is_said_before_the_stdlib_is_used(tmp_path, monkeypatch, capsys):
    """R77: the demo's corpus source is chosen in ``_prepare_data``; its note is printed (under --quiet too) before
    the (minutes of) preparing, which is cut short here."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "b1.txt").write_text("a book of mine\n")
    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path / "corpus"))
    assert _demo_prepares_from(tmp_path, monkeypatch) == ["stdlib"]
    assert (f"note: the data folder {str(tmp_path / 'corpus')!r} (named by $LEVIATHAN_DATA) holds no Gutenberg books "
            f"(gutenberg/train and gutenberg/valid); the Python standard library's sources are used instead"
            in capsys.readouterr().err)


def test_the_default_data_folder_without_books_is_the_quiet_fallback(tmp_path, monkeypatch):
    from leviathan.io import books_note, books_root

    monkeypatch.delenv("LEVIATHAN_DATA", raising=False)
    monkeypatch.delenv("LEVIATHAN_SHARED", raising=False)
    monkeypatch.chdir(tmp_path)  # no ../shared/data here
    assert books_root() is None and books_note() is None


def test_empty_book_folders_are_no_books(capsys, tmp_path, monkeypatch):
    """Round 35 (AH129, AH132): $LEVIATHAN_DATA whose gutenberg/train and gutenberg/valid were both there and empty was
    taken as holding the books (``io.books_root`` looked only for the folders): bench fell back to the standard
    library's sources without the note, and demo prepared the empty folder and was refused with prepare's "point at
    the right folder or use a glob", $LEVIATHAN_DATA never named. A split now holds books when it holds a .txt file;
    otherwise the fallback and its note, as for a folder without them."""
    from leviathan.io import books_note, books_root

    for split in ("train", "valid"):
        (tmp_path / "gd1" / "gutenberg" / split).mkdir(parents=True)
    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path / "gd1"))
    assert books_root() is None
    assert "(named by $LEVIATHAN_DATA) holds no Gutenberg books" in books_note()
    assert _demo_prepares_from(tmp_path, monkeypatch) == ["stdlib"]
    assert "holds no Gutenberg books" in capsys.readouterr().err


def _demo_prepares_from(tmp_path, monkeypatch) -> list:
    """The sources the demo's ``_prepare_data`` hands to prepare, which is cut short at its first call."""
    import importlib

    from leviathan.commands import demo

    prepare_module = importlib.import_module("leviathan.data.prepare")  # the package's `prepare` is the function

    sources = []

    def prepare(source, out, **kwargs):
        sources.append(source)
        raise KeyboardInterrupt

    monkeypatch.setattr(prepare_module, "prepare", prepare)
    with pytest.raises(KeyboardInterrupt):
        demo._prepare_data(tmp_path / "dd", explicit=True, vocab=300, quiet=True)
    return sources
    for split in ("train", "valid"):
        (tmp_path / "gd1" / "gutenberg" / split / "b.txt").write_text("a book\n")
    assert books_root() == (tmp_path / "gd1").resolve() and books_note() is None
