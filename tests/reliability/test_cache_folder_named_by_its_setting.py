"""A cache folder that came from $XDG_CACHE_HOME is named by that variable when a file is in its way (issue 30
round 28: T68, T69, "unclear").

With XDG_CACHE_HOME naming a user's file, bench's line named "--json / --cache-dir" and demo's "--run-dir", options
not given or free, while round 27 (R76) already named $LEVIATHAN_CACHE: the setting was looked up from the file in the
way, the cache folder's parent, which lies outside the cache folder. It is now looked up from the path the failed
call named (``errors.storage_message`` -> ``cache_place.cache_setting``), which names $XDG_CACHE_HOME.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error  # noqa: E402


@pytest.mark.parametrize("argv, also", [
    (["bench", "--quick", "--only", "train", "--config", "cpu"], ", or give --cache-dir)"),
    (["demo", "--steps", "1", "--quiet", "--run-dir", "dmxdg"], "a folder for leviathan's cache)"),
], ids=["bench", "demo"])
def test_a_file_as_xdg_cache_home_is_named_by_the_variable(tmp_path, monkeypatch, argv, also):
    (tmp_path / "ufile").write_text("mine\n")
    monkeypatch.delenv("LEVIATHAN_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "ufile"))
    proc = cli(argv, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = one_error(proc.stderr)
    assert "a file is in the way" in line and f"$XDG_CACHE_HOME={str(tmp_path / 'ufile')!r}: set XDG_CACHE_HOME to " \
                                              f"another folder" in line, line
    assert line.endswith(also) and "--json" not in line and "--run-dir" not in line, line
    assert "rebuilding" not in proc.stderr, proc.stderr[-2000:]  # no cache was there to be out of date (fix28f)
    assert (tmp_path / "ufile").read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == ["ufile"]


def test_the_setting_is_named_for_a_path_inside_the_xdg_cache(tmp_path, monkeypatch):
    from leviathan.cache_place import cache_setting

    monkeypatch.delenv("LEVIATHAN_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert "$XDG_CACHE_HOME=" in cache_setting(tmp_path / "x" / "leviathan" / "bench")
    assert cache_setting(tmp_path / "x") is None  # the variable's folder itself is not leviathan's cache
