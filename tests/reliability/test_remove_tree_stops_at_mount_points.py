"""``removal.remove_tree`` of a folder holding a mount point deletes nothing and names the mount point (issue 30 round
29, W781).

W781: ``remove_tree('t/rmb')``, where ``t/rmb/mnt`` was a bind mount of another folder, deleted that folder's file
through the mount point (``shutil.rmtree`` crosses mounts as ``rm -r`` does) and answered only "device or resource
busy". ``removal._mount_inside`` now asks the kernel's mount table (a bind mount of the same file system has the same
device) and then each folder's device against the root's, before anything is deleted, as ``rm -r
--one-file-system`` would. The real mount is made in a user and mount namespace of its own (``unshare -rm``, no root
needed, gone when the process ends), skipped where the machine does not allow one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from leviathan import mounts, removal

pytestmark = pytest.mark.reliability


def _tree(tmp_path):
    tree, other = tmp_path / "tree", tmp_path / "other"
    (tree / "mnt").mkdir(parents=True)
    (tree / "own.txt").write_text("own")
    other.mkdir()
    (other / "users_file.txt").write_text("keep")
    return tree, other


def _refused(problem, tree, mount):
    assert problem.startswith(f"{str(mount)!r}: a mount point ") and "nothing was deleted" in problem
    assert f"umount {mount}" in problem
    assert (tree / "own.txt").exists()


def test_a_mount_point_in_the_kernels_table_stops_the_removal(tmp_path, monkeypatch):
    tree, _ = _tree(tmp_path)
    monkeypatch.setattr(mounts, "mount_points", lambda: {os.path.realpath(tree / "mnt")})
    _refused(removal.remove_tree(tree), tree, os.path.realpath(tree / "mnt"))


def test_a_folder_of_another_device_stops_the_removal_where_the_table_is_not_read(tmp_path, monkeypatch):
    tree, _ = _tree(tmp_path)
    monkeypatch.setattr(mounts, "mount_points", set)
    real_lstat = os.lstat

    def lstat(path, *args, **kwargs):
        st = real_lstat(path, *args, **kwargs)
        if os.fspath(path) == str(tree / "mnt"):
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev + 1, *tuple(st)[3:]))
        return st

    monkeypatch.setattr(removal.os, "lstat", lstat)
    _refused(removal.remove_tree(tree), tree, tree / "mnt")


def test_a_folder_without_mount_points_is_deleted(tmp_path):
    tree, _ = _tree(tmp_path)
    assert removal.remove_tree(tree) is None and not tree.exists()


@pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare(1) here")
def test_a_real_bind_mount_keeps_the_mounted_folders_files(tmp_path):
    """W781 as found: a real bind mount, in a namespace of this test's own."""
    tree, other = _tree(tmp_path)
    code = f"from leviathan import removal; print(removal.remove_tree({str(tree)!r}))"
    script = f"mount --bind {other} {tree / 'mnt'} || exit 99; exec {sys.executable} -c \"$0\""
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, code], capture_output=True, text=True, timeout=60)
    if done.returncode == 99 or (done.returncode and done.stderr.startswith("unshare:")):
        pytest.skip(f"no mount namespace here: {done.stderr.strip()[:120]}")
    assert done.returncode == 0, done.stderr
    assert f"'{tree / 'mnt'}': a mount point " in done.stdout
    assert (other / "users_file.txt").read_text() == "keep" and (tree / "own.txt").exists()
