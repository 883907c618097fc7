"""Every public function's switch goes through the one switch rule (issue 30 round 30, Y621-Y713).

A switch is a parameter whose default is True or False (or annotated ``bool``). Python reads any non-empty text and
any non-zero number as true, so ``folder_lock(again='yes')``, ``to_digits(check=0)``, ``window(with_derivative='no')``,
``default_mode(directory='yes')``, ``open_source(strict=1)``, ``check_typed_rows(one_per_arm='yes')`` and
``device_problem(auto='no')`` were taken without a word (Y621, Y622, Y627-Y629, Y631, Y635, Y711, Y713), while
``prepare`` and two dozen others refuse them through ``value_rules.check_switches``. This sweep reads the source of
src/leviathan: a public function (its name, its class's and its module's without a leading underscore; the CLI's
``commands`` package aside, whose switches argparse gives as bools) must name each of its switches in a
``check_switches(...)`` (or ``switch_problem(...)``) call in its own body, or be listed in ``CHECKED_ELSEWHERE`` / ``NOT_A_SWITCH`` with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

from source_sweep import ROOT, public_functions


# checked, before any work, by the helper named
CHECKED_ELSEWHERE = {
    "checkpoint/state.py:verify_companions": "_check_arguments (check_switches('verify_companions', optional=...))",
    "hf/export.py:to_hf": "_atomic_dir (check_switches(verb, overwrite=...)), before anything is written",
    "hf/export.py:to_plain_llama": "_atomic_dir, as to_hf",
    "hf/adoption.py:bake_adopted": "_atomic_dir, as to_hf",
    "eval/lm_export.py:export_for_harness": "to_plain_llama's _atomic_dir (verb 'lm-eval')",
    "ownership.py:write_marker": "_check_marker_request (check_switches('write_marker', digests=...))",
    "hf/model_card.py:native_card": "_check_card_arguments (api_check(..., switch_problem(tokenizer), ...))",
    "train/loop.py:train": "train.arguments.check_train_arguments (check_switches('train', quiet=...))",
    "hf/config_save.py:save_config": "both callers (LeviathanConfig.save_pretrained, _held_save) ask "
                                     "check_switches('save_pretrained', push_to_hub=...) first",
}

# parameters typed bool that are not a caller's switch
NOT_A_SWITCH = {
    "config.py:require": "condition is the rule's test, computed by the config's own checks",
    "config.py:require_range": "condition, as require's",
    "train/distributed.py:any_rank": "flag is this rank's computed answer, gathered across ranks",
    "train/distributed.py:no_grad_sync": "skip is the step loop's computed test (not the last micro-batch)",
    "strict_yaml.py:construct_mapping": "PyYAML's constructor hook, called by PyYAML with its own deep",
    "cache_place.py:cache_setting": "called only by leviathan.errors' storage lines, with literals; errors sits "
                                    "below value_rules (importing it here closes an import circle)",
    "data/val_overlap.py:add": "prepare's own record of each document: is_val is the split it computed",
    "data/sources.py:decode_utf8": "called per chunk by the readers open_source built, with the strict it checked",
    "hf/digest_record.py:read_record": "nested is the calling record's own format (a literal in save_record and "
                                       "checkpoint_record), not a caller's switch",
    "hf/generate_callables.py:checked_callables": "cleaned is generate's remove_invalid_values as "
                                                  "check_generate_arguments computed it (is True), after that "
                                                  "setting's own switch rule (round 34, AG400)",
}


def _switches(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    pos = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    pairs = list(zip(pos, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
    return [p.arg for p, d in pairs
            if (isinstance(d, ast.Constant) and isinstance(d.value, bool))
            or (p.annotation is not None and ast.unparse(p.annotation) in ("bool", "bool | None"))]


def _checked(fn: ast.FunctionDef) -> set[str]:
    names = set()
    for node in ast.walk(fn):
        name = getattr(node.func, "id", getattr(node.func, "attr", "")) if isinstance(node, ast.Call) else ""
        if name == "check_switches":
            names.update(k.arg for k in node.keywords if k.arg)
        elif name == "switch_problem":  # the rule itself, asked by the function's own line (api_check)
            names.update(a.id for a in node.args if isinstance(a, ast.Name))
    return names




def unchecked_switches(root: Path = ROOT) -> list[str]:
    """``path:line name (switches)`` of each public function with a switch no check_switches call names."""
    found = []
    for rel, fn in public_functions(root):
        key = f"{rel}:{fn.name}"
        if key in CHECKED_ELSEWHERE or key in NOT_A_SWITCH:
            continue
        missing = [s for s in _switches(fn) if s not in _checked(fn)]
        if missing:
            found.append(f"{rel}:{fn.lineno} {fn.name} ({', '.join(missing)})")
    return found


def test_every_public_switch_goes_through_check_switches():
    found = unchecked_switches()
    assert not found, ("public functions reading a switch by truthiness (route it through value_rules.check_switches, "
                       "or list the function here with the reason):\n" + "\n".join(found))


def test_the_listed_exceptions_still_exist():
    keys = {f"{rel}:{fn.name}" for rel, fn in public_functions(ROOT)}
    stale = sorted((set(CHECKED_ELSEWHERE) | set(NOT_A_SWITCH)) - keys)
    assert not stale, stale


def test_the_sweep_finds_what_it_says(tmp_path):
    (tmp_path / "m.py").write_text(
        "def f(a, check: bool = True):\n    return a if check else None\n"
        "def g(a, *, strict=False):\n    check_switches('g', strict=strict)\n"
        "def _h(a, x=True):\n    pass\n"
        "class C:\n    def m(self, deep=False):\n        pass\n")
    assert unchecked_switches(tmp_path) == ["m.py:1 f (check)", "m.py:8 m (deep)"]
