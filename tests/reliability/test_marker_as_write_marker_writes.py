"""An output marker is held to every field as ``write_marker`` writes it, and a whole-folder marker covers only what
its verb wrote (issue 30 round 29). ``read_marker`` took a marker whose ``leviathan`` (the writer's version) is the
number 5 (W230), whose ``format`` is 1.0 (W232: 1.0 == 1 in Python) and whose ``files`` lists a file twice (W233:
the writer refuses that); each is now refused naming the field. ``write_marker(a folder holding a user's file,
'export')`` marked the whole folder as export's output (W613), which export's reruns may then replace: a whole-folder
marker is refused over anything but the verb's own names (``mark`` passes them) and its own earlier output.
"""

from __future__ import annotations

import json

import pytest

from leviathan import ownership
from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


@pytest.fixture
def marked(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    ownership.write_marker(folder, "export", ["a.txt", "b.txt"])
    return folder


@pytest.mark.parametrize(("change", "said"), [
    ({"leviathan": 5}, r"field 'leviathan' is 5, expected the version of leviathan that wrote it"),  # W230
    ({"leviathan": ""}, r"field 'leviathan' is '', expected the version"),
    ({"format": 1.0}, r"field 'format' is 1\.0, expected 1"),  # W232
    ({"files": ["a.txt", "b.txt", "a.txt"]}, r"field 'files' names one file twice \('a\.txt' and 'a\.txt'\)"),  # W233
    ({"files": ["a.txt", "./a.txt"]}, r"field 'files' names one file twice \('a\.txt' and '\./a\.txt'\)"),
])
def test_a_field_write_marker_never_writes_is_refused(marked, change, said):
    path = marked / ownership.MARKER
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(UserError, match=r"leviathan_output\.json': " + said + r".*if it is leviathan's marker, "
                                        r"restore it, or delete it"):
        ownership.read_marker(marked)


def test_markers_as_written_read(marked):
    assert ownership.read_marker(marked).files == ("a.txt", "b.txt")
    path = marked / ownership.MARKER
    raw = json.loads(path.read_text())
    del raw["leviathan"]  # a marker of before the version field
    path.write_text(json.dumps(raw))
    assert ownership.read_marker(marked).verb == "export"


def test_a_whole_folder_marker_over_a_users_file_is_refused(tmp_path):  # W613
    folder = tmp_path / "o613"
    folder.mkdir()
    (folder / "mine.txt").write_text("the user's")
    with pytest.raises(UserError, match=r"write_marker: folder: '.*o613' holds 'mine\.txt', which a whole-folder "
                                        r"'export' marker \(files=None\) would make `leviathan export`'s output.*; "
                                        r"mark an empty folder, or list the files the verb wrote"):
        ownership.write_marker(folder, "export")
    assert sorted(p.name for p in folder.iterdir()) == ["mine.txt"]
    ownership.write_marker(folder, "export", ["model.safetensors"])  # listed: the user's file is not claimed
    assert ownership.read_marker(folder).files == ("model.safetensors",)


def test_the_verbs_whole_folder_markers_still_written(tmp_path):
    fresh = tmp_path / "demo"
    fresh.mkdir()
    ownership.write_marker(fresh, "demo")  # demo's fresh --run-dir
    (fresh / "demo.json").write_text("{}")
    ownership.write_marker(fresh, "demo")  # its own output, marked whole here: rewritten
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("a: 1\n")  # train's first file, then its mark
    ownership.mark(run, "train", ["config.yaml", "metrics.jsonl"])
    assert ownership.read_marker(run).files is None and ownership.read_marker(run).owns(run)


@pytest.fixture
def digested(tmp_path):
    folder = tmp_path / "digested"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text(name)
    ownership.write_marker(folder, "export", ["a.txt", "b.txt"], digests=True)
    return folder


@pytest.mark.parametrize(("change", "said"), [
    (lambda raw: raw["sha256"].update({"extra.bin": "0" * 64}),
     r"field 'sha256' records 'extra\.bin', a file its field 'files' does not list"),
    (lambda raw: raw.update({"files": None}),
     r"field 'sha256' records digests \('a\.txt', 'b\.txt'\) but field 'files' is null"),
], ids=["Y416-unlisted-digest", "digests-of-a-whole-folder-marker"])
def test_a_digest_of_a_file_the_marker_does_not_list_is_refused(digested, change, said):
    """Y416 (issue 30 round 30): a sha256 entry for extra.bin, which the marker's files do not list, read as a valid
    marker without a word; write_marker records a digest for each listed file and no other."""
    path = digested / ownership.MARKER
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))
    with pytest.raises(UserError, match=r"leviathan_output\.json': " + said + r".*if it is leviathan's marker, "
                                        r"restore it, or delete it"):
        ownership.read_marker(digested)


def test_digests_as_written_read(digested):
    marker = ownership.read_marker(digested)
    assert sorted(marker.sha256) == ["a.txt", "b.txt"] and marker.files == ("a.txt", "b.txt")
    ownership.record_digests(digested, "export", ["*.txt"])
    assert sorted(ownership.read_marker(digested).sha256) == ["a.txt", "b.txt"]
