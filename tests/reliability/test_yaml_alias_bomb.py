"""A YAML file whose anchors and aliases expand to billions of values is refused at once (issue 30 round 28, T36): nine
anchored lists of ten aliases each (600 bytes) are 10^9 strings; PyYAML shares them by reference, but every later
reader walked them whole (a check, then an error line quoting the value), so `train --config` and `sweep --grid` ran
with no output until killed. ``strict_yaml.parse`` counts the expanded values in time linear in the file and refuses
past ``MAX_VALUES``; a grid's ordinary anchors (``<<: *body``) stay far below it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, cli  # noqa: E402

pytestmark = [pytest.mark.reliability]


def bomb(levels: int, key: str = "seed") -> str:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    names = "abcdefghijklmnop"
    lines += [f"{c}: &{c} [" + ",".join(["*" + p] * 10) + "]" for p, c in zip(names, names[1:levels])]
    return f"{key}:\n" + "\n".join("  " + line for line in lines) + "\nmax_steps: 1\n"


def test_a_file_whose_aliases_expand_past_the_limit_is_one_line():
    from leviathan.errors import ConfigError
    from leviathan.strict_yaml import MAX_VALUES, load_strict

    assert 10 ** 9 > MAX_VALUES
    with pytest.raises(ConfigError, match=r"^bomb\.yaml: its anchors and aliases expand to more than 1,000,000 "
                                          r"values .*write the values out or alias less$"):
        load_strict(bomb(9), "bomb.yaml")
    assert isinstance(load_strict(bomb(3), "small.yaml")["seed"], dict)  # 1,000 strings: read as before


def test_an_override_whose_aliases_expand_past_the_limit_is_one_line():
    from leviathan.config import parse_override
    from leviathan.errors import ConfigError

    value = "{a: &a [x,x,x,x,x,x,x,x,x,x], " + ", ".join(
        f"{c}: &{c} [{','.join(['*' + p] * 10)}]" for p, c in zip("abcdefgh", "bcdefghi")) + "}"
    with pytest.raises(ConfigError, match="expand to more than 1,000,000 values"):
        parse_override(f"seed={value}")


def test_train_refuses_the_bomb_at_once(tmp_path):
    (tmp_path / "bomb.yaml").write_text(bomb(9))
    done = cli(["train", "--config", "bomb.yaml", "--run-dir", "r"], cwd=tmp_path, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "expand to more than 1,000,000 values" in lines[0], done.stderr
    assert not (tmp_path / "r").exists()


def test_the_packaged_grids_anchors_still_read():
    from leviathan.strict_yaml import load_strict

    for name in ("o200k-width", "paper-width-lr"):
        path = REPO / "src" / "leviathan" / "configs" / "experiments" / f"{name}.yaml"
        assert isinstance(load_strict(path.read_text(), path.name), dict)


LOOP = "a list or mapping holds itself through an alias"


@pytest.mark.parametrize("text", ["a: &x [*x]\nmax_steps: 3\n", "a: &x {b: *x}\n", "a: &x [1, [2, *x]]\n"],
                         ids=["list", "mapping", "inner"])
def test_an_alias_inside_its_own_anchor_is_named_a_loop_not_depth(text):
    """Round 30 (X114): ``a: &x [*x]``, a list that holds itself, was "nested too deeply to read (hundreds of
    levels) ... write it flatter" for a file two lines deep: the count of values recursed around the loop."""
    from leviathan.config import parse_override
    from leviathan.errors import ConfigError
    from leviathan.strict_yaml import load_strict

    with pytest.raises(ConfigError, match=rf"^c\.yaml: {LOOP} .*move the alias out of its anchor's value$") as caught:
        load_strict(text, "c.yaml")
    assert "deep" not in str(caught.value)
    with pytest.raises(ConfigError, match=rf"^override .*: {LOOP} .*write the value out$"):
        parse_override("model={" + text.splitlines()[0] + "}")
    assert load_strict("a: &x [1]\nb: [*x, *x]\n", "ok.yaml") == {"a": [1], "b": [[1], [1]]}  # shared, no loop


def test_train_names_the_loop(tmp_path):
    (tmp_path / "c_rec2.yaml").write_text("a: &x [*x]\nmax_steps: 3\n")
    done = cli(["train", "--config", "c_rec2.yaml", "--print-config"], cwd=tmp_path, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: config file 'c_rec2.yaml': {LOOP}") and "deep" not in lines[0], lines[0]
