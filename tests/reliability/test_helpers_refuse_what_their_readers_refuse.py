"""The low-level helpers a user can import refuse a request that contradicts itself, and never write what their own
reader refuses (issue 30 round 26).

``io.atomic_write_together`` wrote one file given under two spellings, the first content lost (Q361), and both wrote
and removed one file (Q363); ``io.read_metrics`` returned a list and a text as metrics rows (Q366);
``tables.markdown_table([], [])`` returned a table of no columns (Q377); ``locking.folder_lock`` of a 300-byte name
was the raw OSError ENAMETOOLONG (Q384); ``ownership.write_marker`` wrote a marker listing '../user.txt', which
``read_marker`` then refused as damaged (Q388, Q413), and ``run_identity.write_identity`` a run id its reader refuses
(Q388's kind); ``config.dump_yaml`` wrote '.nan', which every settings reader refuses (Q642, Q578). Each is now one
line naming the argument and the fix, nothing written.
"""

from __future__ import annotations

import errno
import math

import pytest

from leviathan import io, tables
from leviathan.config import dump_yaml, load_yaml
from leviathan.errors import ArgumentValueError, StorageError, UserError
from leviathan.locking import folder_lock
from leviathan.ownership import MARKER, read_marker, write_marker
from leviathan.run_identity import RunIdentity, new_run_id, read_identity, write_identity


def _one_line(e: BaseException) -> str:
    text = str(e)
    assert "\n" not in text and "; " in text, text
    return text


def test_one_file_twice_in_an_all_or_none_write_is_refused(tmp_path, monkeypatch):
    """Q361 (two spellings, a str and a Path: two keys of one dict), Q363 (written and removed), a file removed
    twice; nothing is written or removed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b8").mkdir()
    (tmp_path / "b8" / "kept").write_text("mine")
    cases = [({"b8/t1": "a", "./b8/t1": "b"}, ()), ({"b8/t1": "a", tmp_path / "b8" / "x" / ".." / "t1": "b"}, ()),
             ({"b8/t2": "a"}, ["b8/t2"]), ({"b8/t3": "a"}, ["b8/kept", "b8/../b8/kept"])]
    for files, remove in cases:
        with pytest.raises(ArgumentValueError, match="one file twice") as caught:
            io.atomic_write_together(files, remove=remove)
        assert "name each file once" in _one_line(caught.value)
    assert "'b8/t1' and './b8/t1'" in str(pytest.raises(ArgumentValueError, io.atomic_write_together,
                                                       {"b8/t1": "a", "./b8/t1": "b"}).value)
    assert sorted(p.name for p in (tmp_path / "b8").iterdir()) == ["kept"]
    assert (tmp_path / "b8" / "kept").read_text() == "mine"
    io.atomic_write_together({"b8/t1": "a", "b8/t2": "b"}, remove=["b8/kept"])  # distinct files: written
    assert sorted(p.name for p in (tmp_path / "b8").iterdir()) == ["t1", "t2"]


def test_metrics_rows_that_are_not_objects_are_named(tmp_path):
    """Q366: a list and a text among the rows; a torn last line is still skipped quietly."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"step": 1, "train_loss": 2.5}\n[1, 2]\n"s"\n')
    with pytest.raises(UserError, match=r"metrics.jsonl' line 2 is an array \(\[1, 2\]\), not a metrics row") as e:
        io.read_metrics(run)
    _one_line(e.value)
    (run / "metrics.jsonl").write_text('{"step": 1, "train_loss": 2.5}\n{"step": 2, "train_lo')
    assert io.read_metrics(run) == [{"step": 1, "train_loss": 2.5}]


def test_a_table_of_no_columns_is_refused():
    """Q377: both table writers share the check (``tables._cells``)."""
    for table in (tables.markdown_table, tables.text_table):
        with pytest.raises(ArgumentValueError, match="header is empty, a table of no columns") as e:
            table([], [])
        _one_line(e.value)
    assert tables.markdown_table(["a"], [[1]]) == "| a |\n|---|\n| 1 |"


def test_a_lock_of_a_name_too_long_is_the_storage_line(tmp_path):
    """Q384: ``missing_folders``' exists() raised ENAMETOOLONG outside the storage line; nothing is made."""
    (tmp_path / "b8").mkdir()
    for folder in (tmp_path / "b8" / ("x" * 300), tmp_path / "b8" / ("x" * 300) / "y"):
        with pytest.raises(StorageError, match="the file name is too long") as caught:
            with folder_lock(folder, "test"):
                pass
        assert caught.value.errno == errno.ENAMETOOLONG and isinstance(caught.value, OSError)
        _one_line(caught.value)
    assert list((tmp_path / "b8").iterdir()) == []


def test_a_marker_its_reader_refuses_is_not_written(tmp_path):
    """Q388: a file outside the folder, an absolute or empty name, one name twice, a text as ``files``, an empty
    verb, a digest of a file that is not there; a marker read_marker takes is still written."""
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "a.txt").write_text("x")
    cases = [dict(files=["../user.txt"]), dict(files=[str(tmp_path / "user.txt")]), dict(files=[""]),
             dict(files=["a.txt", "./a.txt"]), dict(files="a.txt"), dict(files=[5]), dict(verb=""),
             dict(files=["b.txt"], digests=True)]
    for case in cases:
        kwargs = {"verb": "export", **case}
        with pytest.raises(UserError, match="^write_marker: ") as e:
            write_marker(folder, **kwargs)
        _one_line(e.value)
    assert not (folder / MARKER).exists()
    write_marker(folder, "export", ["a.txt"], digests=True)
    assert read_marker(folder).files == ("a.txt",)


def test_a_run_identity_its_reader_refuses_is_not_written(tmp_path):
    """Q388's kind in run_identity: a run id that is not one, a fork naming no run or step."""
    for identity in ("x", RunIdentity("abc"), RunIdentity(new_run_id(), "zz", "step", True),
                     RunIdentity(new_run_id(), None, 5, True)):
        with pytest.raises(UserError, match="^write_identity: identity: ") as e:
            write_identity(tmp_path, identity)
        _one_line(e.value)
    assert not (tmp_path / "run.json").exists()
    identity = RunIdentity(new_run_id(), None, "step-00000002", True)
    write_identity(tmp_path, identity)
    assert read_identity(tmp_path) == identity


def test_yaml_settings_hold_no_nan_or_infinity(tmp_path):
    """Q642: named by where they lie, nothing written; a finite value is written and read back."""
    for obj, where in (({"a": float("nan")}, "obj['a'] is nan"), ({"x": {"y": [1, -math.inf]}}, "obj['x']['y'][1]")):
        with pytest.raises(ArgumentValueError, match=r"^dump_yaml: " + where.replace("[", r"\[")) as e:
            dump_yaml(obj, tmp_path / "c.yaml")
        assert "nothing was written" in _one_line(e.value)
    assert not (tmp_path / "c.yaml").exists()
    dump_yaml({"a": 1.5}, tmp_path / "c.yaml")
    assert load_yaml(tmp_path / "c.yaml") == {"a": 1.5}
