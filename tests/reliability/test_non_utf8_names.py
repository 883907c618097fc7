"""Names that are not UTF-8 (issue 30 round 18, G418-G424, G427, G428): the rule is one, in ``locking``.

A folder the locked verbs write (prepare, train, export, sweep) under a name that is not UTF-8 is refused before
anything is written (safetensors, TensorBoard and transformers open only UTF-8 names, so it could not be read back);
an input under such a name (a corpus file, a data folder) is read, and a command line holding one no longer breaks
the lock's holder line (a UnicodeEncodeError traceback from ``locking._write_holder``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, one_run_grid, run_overrides, write_corpus  # noqa: E402

BAD = os.fsdecode(b"\xff")  # '\udcff': the byte 0xff of a name, as Python gives it


def test_an_output_folder_whose_name_is_not_utf8_is_refused_before_anything_is_written(data, finished_run,
                                                                                        tmp_path):
    """G419, G427 (prepare), G420 (train), G421 (export): a traceback from the lock, or a data folder its own
    readers refused; G423 (sweep) through run_sweep."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import SweepOptions, run_sweep

    corpus = write_corpus(tmp_path / "corpus", seed=2)
    for verb, argv in (("prepare", ["prepare", corpus, "--out", tmp_path / f"d{BAD}", "--tokenizer", "bpe:300"]),
                       ("train", ["train", "--run-dir", tmp_path / f"r{BAD}", *run_overrides(data, max_steps=2)]),
                       ("export", ["export", finished_run, tmp_path / f"e{BAD}"])):
        line = cli_error(argv)
        assert f"cannot {verb} into" in line and "is not UTF-8 text (byte 0xff" in line, line
    grid = load_grid(str(one_run_grid(data, tmp_path)))
    with pytest.raises(UserError, match="cannot sweep into .* is not UTF-8 text"):
        run_sweep(grid, tmp_path / f"s{BAD}", SweepOptions(), log=lambda s: None)
    assert not [p.name for p in tmp_path.iterdir() if BAD in p.name]  # no folder, no lock file


def test_inputs_whose_names_are_not_utf8_are_read(data, tmp_path):
    """G418: a corpus file named b'x\\xfe.txt' given to prepare; G424: train with such a data.path (both ended in a
    UnicodeEncodeError traceback); G428: load_tokenizer of a good data folder under such a name blamed the file."""
    from leviathan.data.tokenizer import load_tokenizer

    source = tmp_path / ("x" + os.fsdecode(b"\xfe") + ".txt")
    shutil.copy(next(Path(write_corpus(tmp_path / "corpus", seed=2)).glob("*.txt")), source)
    proc = cli(["prepare", source, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--val-fraction", "0",
                "--no-progress"])
    assert proc.returncode == 0, proc.stderr
    renamed = tmp_path / f"dd{BAD}"
    shutil.copytree(data, renamed)
    assert load_tokenizer(renamed).vocab_size == load_tokenizer(data).vocab_size
    proc = cli(["train", "--run-dir", tmp_path / "r", "--quiet", *run_overrides(renamed, max_steps=2)])
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r" / "checkpoints" / "step-00000002").is_dir()


def test_the_apis_folder_writers_refuse_a_name_that_is_not_utf8_as_the_verbs_do(data, finished_run, tmp_path):
    """G425 (``to_hf``), G426 (``Tokenizer.save``), and ``save_pretrained`` with them: the verbs refuse such an output
    folder since round 18's fix18f, the API's writers wrote it (transformers and tokenizers open only UTF-8 names).
    The verbs' check (``locking.check_utf8_name``), before anything is written."""
    from leviathan.checkpoint.read import load_model
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.errors import UserError
    from leviathan.hf.export import from_native, to_hf

    model = load_model(finished_run)[0]
    writers = ((f"e{BAD}", "export", lambda out: to_hf(model, out)),
               (f"t{BAD}", r"save \(Tokenizer.save\)", lambda out: load_tokenizer(data).save(out)),
               (f"h{BAD}", r"save \(save_pretrained\)", lambda out: from_native(model).save_pretrained(out)))
    for name, verb, write in writers:
        with pytest.raises(UserError, match=f"cannot {verb} into .* its name is not UTF-8 text .byte 0xff"):
            write(tmp_path / name)
    assert not [p.name for p in tmp_path.iterdir() if BAD in p.name]  # nothing written, no temporary folder
    assert (to_hf(model, tmp_path / "e") / "config.json").is_file()
    assert (load_tokenizer(data).save(tmp_path / "t") / "tokenizer.json").is_file()
