"""An output marker holds what its writer writes, read and written by one rule (issue 30 round 28, U531, U535,
U540, U629).

- U531, U629: a marker's verb is one of the verbs that write markers (``ownership.MARKER_VERBS``): ``read_marker``
  took 'export ' (a trailing space) and ``write_marker`` wrote 'train\\0', which no verb's ownership check matches.
- U535: ``created`` is a time as ``write_marker`` writes it (ISO 8601 with its UTC offset); 'yesterday' was read.
- U540: ``write_marker`` over another verb's marker replaced it without a word (a data folder became export's output,
  which ``export --overwrite`` may then delete); it is refused unless the caller passes ``replace=True``. ``mark``
  still replaces a copied marker that proves nothing about its new folder (module docstring of ``ownership``).
"""

from __future__ import annotations

import json
import shutil

import pytest

from leviathan import ownership
from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]

WRITTEN = {"format": 1, "verb": "export", "files": None, "created": "2026-01-01T00:00:00+00:00", "leviathan": "0.1.0"}


@pytest.mark.parametrize(("field", "value", "said"), [
    ("verb", "export ", r"field 'verb' is 'export ', expected the name of a leviathan verb that writes markers "
                        r"\(train, sweep, .*\)"),
    ("verb", "train\0", r"field 'verb' is 'train\\x00', expected the name of a leviathan verb"),
    ("created", "yesterday", r"field 'created' is 'yesterday', expected a time stamp as write_marker writes it "
                             r"\(ISO 8601 with its UTC offset"),
    ("created", "2026-01-01T00:00:00", r"field 'created' is '2026-01-01T00:00:00', expected a time stamp"),
])
def test_read_marker_refuses_a_field_no_writer_writes(tmp_path, field, value, said):
    (tmp_path / ownership.MARKER).write_text(json.dumps({**WRITTEN, field: value}))
    with pytest.raises(UserError, match=said + r".*; if it is a file of yours, move it out of the folder"):
        ownership.read_marker(tmp_path)


def test_what_write_marker_writes_reads_back(tmp_path):
    for verb in ownership.MARKER_VERBS:
        folder = tmp_path / verb.replace(" ", "_")
        folder.mkdir()
        ownership.write_marker(folder, verb)
        assert ownership.read_marker(folder).verb == verb
    (tmp_path / "c" / ownership.MARKER).parent.mkdir()
    (tmp_path / "c" / ownership.MARKER).write_text(json.dumps(WRITTEN))
    assert ownership.read_marker(tmp_path / "c").created == WRITTEN["created"]


@pytest.mark.parametrize("verb", ["train\0", "export ", "collect"])
def test_write_marker_refuses_a_verb_that_writes_no_marker(tmp_path, verb):
    with pytest.raises(UserError, match=r"^write_marker: verb: expected the name of a leviathan verb that writes "
                                        r"markers, got .*; pass one of train, sweep, prepare, export"):
        ownership.write_marker(tmp_path, verb)
    assert not (tmp_path / ownership.MARKER).exists()


def test_write_marker_over_another_verbs_marker_needs_replace(tmp_path):
    ownership.write_marker(tmp_path, "prepare")
    with pytest.raises(UserError, match=rf"^write_marker: folder: '{tmp_path}' is the output of `leviathan prepare` "
                                        rf"\(its leviathan_output\.json says so\), which a 'export' marker would "
                                        rf"replace; mark a folder of its own, or pass replace=True"):
        ownership.write_marker(tmp_path, "export")
    assert ownership.read_marker(tmp_path).verb == "prepare"
    ownership.write_marker(tmp_path, "prepare", ["a.txt"])  # the same verb rewrites its own
    ownership.write_marker(tmp_path, "export", replace=True)
    assert ownership.read_marker(tmp_path).verb == "export"


def test_mark_replaces_a_copied_marker_of_another_verb(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    ownership.write_marker(sweep, "sweep")
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(sweep / ownership.MARKER, copy / ownership.MARKER)  # proves nothing about its new folder
    ownership.mark(copy, "train", ["config.yaml"])
    assert ownership.read_marker(copy).verb == "train"
