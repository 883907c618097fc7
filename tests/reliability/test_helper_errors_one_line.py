"""The low-level helpers a user can import end in the product's one line, never a raw Python error (issue 30 round 25).

``io.atomic_write_text``/``_json``/``_together``, ``io.read_jsonl``, ``io.data_root``, ``jsonl.read_json_lines``,
``json_text.read_file``, ``locking.folder_lock``, ``ownership.read_marker`` and ``run_identity.read_identity`` ended
in the raw IsADirectoryError, "[Errno 36] File name too long", FileNotFoundError, "[Errno 30] Read-only file system",
UnicodeEncodeError or pathlib's TypeError (Y306-Y310, Y316, Y318, Y320, Y325, Y339, Y340, Y356, Y361, Y364, Y370);
``atomic_write_json`` wrote NaN (not JSON) and refused numpy integers, tensors and objects with json's raw TypeError
(Y311-Y314); ``read_jsonl`` read a file none of whose lines is JSON as an empty one (Y317). Each is now a UserError
(``errors.StorageError`` for storage: still the OSError it was) naming the path or argument and the fix, nothing
written.
"""

from __future__ import annotations

import errno
import json
import math

import numpy as np
import pytest
import torch

from leviathan import io, json_text, jsonl
from leviathan.errors import ArgumentTypeError, ArgumentValueError, StorageError, UserError
from leviathan.locking import folder_lock
from leviathan.ownership import read_marker, write_marker
from leviathan.run_identity import read_identity


def _one_line(e: BaseException) -> str:
    text = str(e)
    assert "\n" not in text and "; " in text, text
    return text


def test_a_failed_write_is_the_verbs_line_and_leaves_nothing(tmp_path):
    """Y306-Y308, Y316: a folder as the path, a 300-byte name, missing parents; all-or-none holds (x3 not written)."""
    (tmp_path / "d").mkdir()
    cases = [(tmp_path / "d", errno.EISDIR, "a folder is in the way"),
             (tmp_path / ("z" * 300), errno.ENAMETOOLONG, "the file name is too long"),
             (tmp_path / "no" / "such" / "a.txt", errno.ENOENT, "mkdir -p")]
    for path, code, words in cases:
        with pytest.raises(StorageError) as caught:
            io.atomic_write_text(path, "x")
        assert caught.value.errno == code and words in _one_line(caught.value), caught.value
        assert isinstance(caught.value, OSError)  # ``except OSError`` still catches it
    with pytest.raises(StorageError, match=r"the folder .*nodir' does not exist; create it first"):
        io.atomic_write_together({tmp_path / "x3": "a", tmp_path / "nodir" / "x4": "b"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_a_read_only_disk_is_the_verbs_line(tmpfs):
    """Y309: a real read-only mount."""
    ro = tmpfs("size=64k,ro")
    with pytest.raises(StorageError, match="read-only file system; choose a location on a writable disk"):
        io.atomic_write_text(ro / "a.txt", "x")


def test_text_utf8_cannot_hold_is_refused_before_a_file_is_written(tmp_path):
    """Y310: a lone surrogate."""
    with pytest.raises(ArgumentValueError, match="lone surrogate that is not UTF-8; nothing was written"):
        io.atomic_write_together({tmp_path / "a.txt": "fine", tmp_path / "s.txt": "a\ud800"})
    assert list(tmp_path.iterdir()) == []


def test_json_writer_is_strict_and_takes_numpy_numbers(tmp_path):
    """Y311-Y314: NaN and infinity refused where they lie, a tensor or an object refused by type, numpy scalars
    written as the numbers they are."""
    path = tmp_path / "n.json"
    with pytest.raises(ArgumentValueError, match=r"obj\['a'\]\[1\] is nan, which is not JSON; nothing was written"):
        io.atomic_write_json(path, {"a": [1, math.nan]})
    with pytest.raises(ArgumentValueError, match=r"obj\['b'\] is inf"):
        io.atomic_write_json(path, {"b": np.float32("inf")})
    for value, kind in ((object(), "object"), (torch.tensor(1.0), "Tensor")):
        with pytest.raises(ArgumentTypeError, match=f"obj holds {kind} .*, which JSON cannot hold"):
            io.atomic_write_json(path, value)
    assert not path.exists()
    io.atomic_write_json(path, {"count": np.int64(3), "share": np.float32(0.5), "ok": np.bool_(True)})
    assert json.loads(path.read_text()) == {"count": 3, "share": 0.5, "ok": True}


def test_readers_name_what_is_there(tmp_path):
    """Y317, Y318, Y339, Y356: a file none of whose lines is JSON, a folder, nothing there."""
    (tmp_path / "d").mkdir()
    (tmp_path / "u.jsonl").write_text("x\n")
    with pytest.raises(UserError, match="is not a JSON-lines file .*line 1"):
        io.read_jsonl(tmp_path / "u.jsonl")
    for read in (io.read_jsonl, jsonl.read_json_lines, json_text.read_file):
        with pytest.raises(StorageError, match="is a folder, not a file; pass the path of a JSON"):
            read(tmp_path / "d")
        with pytest.raises(StorageError, match="does not exist; pass the path of a JSON"):
            read(tmp_path / "nope.jsonl")
    (tmp_path / "ok.jsonl").write_text('{"a": 1}\n{"a": 2\n')  # a torn last line is still skipped quietly
    assert io.read_jsonl(tmp_path / "ok.jsonl") == [{"a": 1}]


@pytest.mark.parametrize("call", [lambda: io.read_jsonl(5), lambda: jsonl.read_json_lines(None),
                                  lambda: io.data_root(5), lambda: read_marker(5), lambda: read_identity(None),
                                  lambda: json_text.read_file(None), lambda: write_marker(5, "train")])
def test_a_path_that_is_no_path_names_the_argument(call):
    """Y320, Y325, Y340, Y364, Y370 (and ``write_marker``, ``read_marker``'s sibling)."""
    with pytest.raises(UserError, match=r"expected a path \(a str or a pathlib.Path\), got"):
        call()


def test_a_lock_where_no_folder_can_be_made_is_one_line():
    """Y361: /proc takes no new folder."""
    with pytest.raises(StorageError, match="'/proc/self/x' cannot be created: .*choose another location"):
        with folder_lock("/proc/self/x", "test"):
            pass


def test_a_summary_with_a_perplexity_past_exps_range_is_still_written(tmp_path):
    """Y311's kind in the package's own writer: ``final_val_ppl`` is inf for a finite loss >= 700; strict JSON holds
    none, so summary.json writes it as null, which ``TrainSummary.read`` takes."""
    from leviathan.train.summary import TrainSummary

    summary = TrainSummary(run_dir="r", steps=1, tokens=1, wall_time_s=1.0, train_time_s=1.0, tokens_per_s=None,
                           compile_s=None, final_val_loss=800.0, final_val_ppl=math.inf, params=None, metrics="m",
                           checkpoint=None)
    io.atomic_write_json(tmp_path / "summary.json", summary.to_dict())
    assert TrainSummary.read(tmp_path / "summary.json").final_val_ppl is None


def test_read_jsonl_names_a_line_that_is_no_json_before_the_last(tmp_path):
    """Round 35 (AI215): ``io.read_jsonl`` of '{"a": 1}\\nnot json\\n{"a": 2}\\n' returned [{'a': 1}, {'a': 2}], the
    middle line skipped without a word (a prose file returned its dialogue lines as strings). Only a torn last line is
    skipped."""
    from leviathan.errors import UserError
    from leviathan.io import read_jsonl

    path = tmp_path / "a.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    with pytest.raises(UserError, match=r"line 2 is not a whole JSON value \(cut short or damaged\), before the file's"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": ')
    assert read_jsonl(path) == [{"a": 1}, {"a": 2}]
