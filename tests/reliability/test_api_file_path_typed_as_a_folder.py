"""A file's path typed as a folder's ('run1/config.yaml/') given to a Python API reader is refused in one line naming
the '/', as the CLI's path options refuse it (issue 30 round 28, U777, U778, U779).

``Path('tok.json/')`` is ``Path('tok.json')``: ``load_tokenizer('data/tokenizer.json/')`` and
``config.load_yaml('run1/config.yaml/')`` read the file without a word, and ``prepare('corpus/b1.txt/', ...)`` trained
a BPE on it and was then refused for being "a single document". Round 27's fix27c
(``empty_paths.refuse_file_typed_as_folder``) guarded only the CLI's options; the API's shared reader check
(``value_rules.check_read_path``), ``load_tokenizer`` and ``open_source`` (prepare's sources) now apply it too.
"""

from __future__ import annotations

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _refused(call, shown: str, base: str) -> None:
    with pytest.raises(UserError, match=rf"^{shown} ends in '/', which names a folder, but '{base}' is a file; drop "
                                        rf"the '/' and give '{base}'$"):
        call()


def test_the_readers_refuse_a_file_typed_as_a_folder(tmp_path, monkeypatch):
    from leviathan import config
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.experiments.machinery.results import read_results

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "config.yaml").write_text("a: 1\n")
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "results.jsonl").write_text("")
    _refused(lambda: config.load_yaml("run1/config.yaml/"), "load_yaml: path 'run1/config.yaml/'",
             "run1/config.yaml")
    _refused(lambda: load_tokenizer("tokenizer.json/"), "load_tokenizer: spec 'tokenizer.json/'", "tokenizer.json")
    _refused(lambda: read_results("results.jsonl/"), "read_results: path 'results.jsonl/'", "results.jsonl")
    assert config.load_yaml("run1/config.yaml") == {"a": 1}  # the file named without the slash is read


def test_prepare_refuses_a_source_file_typed_as_a_folder_before_any_work(tmp_path, monkeypatch):
    from leviathan.data.prepare import prepare

    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "b1.txt").write_text("one document. " * 50)
    lines = []
    _refused(lambda: prepare("corpus/b1.txt/", "d777", "bpe:300", progress=False, log=lines.append),
             "source 'corpus/b1.txt/'", "corpus/b1.txt")
    assert lines == [] and not (tmp_path / "d777").exists()
