"""``io.publish`` of a path that is not there is one line naming it (issue 30 round 28, U464).

It was os.chmod's raw FileNotFoundError, no fix. Now a StorageError: a UserError, and still the OSError (ENOENT)
the writers that call publish may catch.
"""

from __future__ import annotations

import errno
import os

import pytest

from leviathan import io as lio
from leviathan.errors import StorageError


def test_publish_of_a_missing_file_names_it(tmp_path):
    with pytest.raises(StorageError, match=r"publish: path '.*w464' does not exist; pass the file or folder") as e:
        lio.publish(tmp_path / "w464")
    assert isinstance(e.value, OSError) and e.value.errno == errno.ENOENT
    assert "\n" not in str(e.value)


def test_publish_under_a_missing_folder_names_it(tmp_path):
    with pytest.raises(StorageError, match="does not exist"):
        lio.publish(tmp_path / "gone" / "f")
    assert os.listdir(tmp_path) == []


def test_publish_still_gives_a_file_its_mode(tmp_path):
    path = tmp_path / "f"
    path.write_text("x")
    path.chmod(0o600)
    lio.publish(path)
    assert path.stat().st_mode & 0o777 == lio.default_mode(directory=False)
