"""The cache's place follows $XDG_CACHE_HOME only where the XDG rule does, and a failure there names the setting
(issue 30 round 29: V10, V11).

V11 ("silent"): ``XDG_CACHE_HOME=relative leviathan bench`` made 'relative/leviathan' in the current folder and
cached its BPE there; the XDG base directory rule says a relative value is invalid and ignored. ``cache_place.
xdg_cache_home`` ignores it with one warning line (``cache_root`` and the spline kernel's build folder both ask it).
V10: $XDG_CACHE_HOME a dangling link: the line named "--json / --cache-dir" only, not the setting that chose the
place; the dead-link line now asks ``cache_setting`` of the folders above the cache too.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402


def test_a_relative_xdg_cache_home_is_ignored_with_a_warning(monkeypatch, tmp_path):
    from leviathan import cache_place
    from leviathan.model.spline_kernel import _cache_dir

    monkeypatch.delenv("LEVIATHAN_CACHE", raising=False)
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-v11")
    monkeypatch.setattr(cache_place, "_warned", set())
    with pytest.warns(UserWarning, match=r"\$XDG_CACHE_HOME='relative-v11' is a relative path, which the XDG base "
                                         r"directory rule says to ignore"):
        assert cache_place.cache_root() == tmp_path / ".cache" / "leviathan"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning per process, not one per call
        assert cache_place.cache_root() == tmp_path / ".cache" / "leviathan"
        assert _cache_dir() == tmp_path / ".cache" / "torch_extensions" / "leviathan_spline"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "abs"))
    assert cache_place.cache_root() == tmp_path / "abs" / "leviathan"


@pytest.mark.parametrize("setting", ["XDG_CACHE_HOME", "LEVIATHAN_CACHE"])
def test_a_dangling_link_as_the_cache_names_its_setting(tmp_path, monkeypatch, setting):
    os.symlink("nowhere/deep", tmp_path / "dangl")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("LEVIATHAN_CACHE", raising=False)
    monkeypatch.setenv(setting, str(tmp_path / "dangl"))  # cli() hands this process's environment on
    line = cli_error(["bench", "--quick", "--only", "train", "--config", "tiny"], cwd=tmp_path)
    assert f"'{tmp_path / 'dangl'}' is a symbolic link to 'nowhere/deep', which does not exist" in line, line
    assert f"set {setting} to another folder" in line and "(--json / --cache-dir)" not in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangl"]
