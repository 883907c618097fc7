"""``leviathan.once_options``: one rule for an option given twice (issue 30 round 24, V130). argparse kept the last
of ``--out ra --out rb`` without a word; every single-valued option now refuses a second use, under any spelling,
while the options made to repeat (append, count) keep working."""

from __future__ import annotations

import argparse

import pytest

from leviathan.once_options import once_options


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="x", exit_on_error=False)
    p.add_argument("-o", "--out")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction)
    p.add_argument("--run", action="append")
    p.add_argument("--size", nargs=2, type=int)
    p.add_argument("-v", action="count", default=0)
    p.add_argument("paths", nargs="*")
    return once_options(p)


@pytest.mark.parametrize("argv, option", [
    (["--out", "ra", "--out", "rb"], "--out"),
    (["-o", "ra", "--out=rb"], "--out"),
    (["--quick", "--quick"], "--quick"),
    (["--compile", "--no-compile"], "--no-compile"),
    (["--ou", "ra", "--out", "ra"], "--out"),  # an abbreviation is the same option; the same value twice too
    (["--size", "1", "2", "--size", "3", "4"], "--size"),
])
def test_a_single_valued_option_given_twice_is_refused(argv, option):
    with pytest.raises(argparse.ArgumentError) as caught:
        _parser().parse_args(argv)
    assert "given twice" in str(caught.value) and f"give {option} once" in str(caught.value), caught.value


def test_options_made_to_repeat_and_one_use_each_keep_working():
    args = _parser().parse_intermixed_args(["a", "--run", "r1", "-o", "ra", "b", "--run", "r2", "-vv", "--quick"])
    assert (args.run, args.v, args.out, args.paths, args.quick) == (["r1", "r2"], 2, "ra", ["a", "b"], True)


def test_a_parser_parsed_again_starts_afresh():
    parser = _parser()
    assert parser.parse_args(["--out", "ra"]).out == "ra"
    assert parser.parse_args(["--out", "rb"]).out == "rb"


def test_sub_commands_options_are_covered():
    p = argparse.ArgumentParser(prog="x", exit_on_error=False)
    sub = p.add_subparsers(dest="cmd")
    sub.add_parser("env").add_argument("--json")
    once_options(p)
    with pytest.raises(SystemExit):  # a sub-command's parser exits on its own error
        p.parse_args(["env", "--json", "a", "--json", "b"])
    assert p.parse_args(["env", "--json", "a"]).json == "a"
