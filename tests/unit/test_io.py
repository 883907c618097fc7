"""``leviathan.io`` (cache root rule, machine description, atomic writes' old home) and ``leviathan.tables``."""

from __future__ import annotations

import os

import pytest

from leviathan import config, io
from leviathan.tables import markdown_table, text_table


def test_cache_root_rule(monkeypatch, tmp_path):
    monkeypatch.delenv("LEVIATHAN_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert io.cache_root() == tmp_path / "home" / ".cache" / "leviathan"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert io.cache_root() == tmp_path / "xdg" / "leviathan"
    monkeypatch.setenv("LEVIATHAN_CACHE", "~/mine")  # the explicit setting wins, ~ expanded
    assert io.cache_root() == tmp_path / "home" / "mine"
    assert not (tmp_path / "home").exists()  # nothing is created


def test_every_cache_user_follows_the_rule(monkeypatch, tmp_path):
    from leviathan.bench import default_cache_dir
    from leviathan.commands.demo import default_data_dir

    monkeypatch.setenv("LEVIATHAN_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "bench"
    assert default_data_dir("stdlib", 512) == tmp_path / "data" / "stdlib-bpe512"


def test_hardware_info_and_one_home_for_the_io_helpers():
    info = io.hardware_info()
    assert {"device", "cpu", "cores", "torch_threads", "gpu", "torch", "host"} <= set(info)
    assert info["torch_threads"] >= 1 and info["cpu"]
    import torch

    # the model name alone did not tell two hosts' numerics apart: the identity and the kernels' vector set do
    assert info["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    if os.path.isfile("/proc/cpuinfo"):
        assert "family" in info["cpu_id"] and "model" in info["cpu_id"]
    load = io.load_average()
    assert load is None or len(load) == 3
    # the io helpers have one home (issue 20 retired config.py's re-exports of them)
    assert not hasattr(config, "atomic_write_json") and callable(io.atomic_write_json)


def test_text_table_aligns_and_markdown_table_marks_alignment():
    text = text_table(["model", "ms"], [["dense_tied", 12.5], ["lev", "130.0"]])
    assert text.splitlines() == ["model          ms",
                                 "----------  -----",
                                 "dense_tied   12.5",
                                 "lev         130.0"]
    assert text_table(["a", "b"], []).splitlines() == ["a  b", "-  -"]
    md = markdown_table(["x", "y"], [[1, 2]], align="lr")
    assert md.splitlines() == ["| x | y |", "|---|---:|", "| 1 | 2 |"]
    assert markdown_table(["x"], []).splitlines()[1] == "|---|"
    with pytest.raises(ValueError, match="one of"):
        markdown_table(["x", "y"], [], align="l")
