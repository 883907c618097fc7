"""No function in src/leviathan takes more than 7 parameters without saying why (issue 32, item 2).

Values that always travel together belong in one object (a dataclass); a function that still takes more than
``LIMIT`` parameters states the reason in its docstring, in a sentence that starts with ``Parameters:`` (for
example: "Parameters: the verb's options, one each, as argparse gives them"). ``self`` and ``cls`` do not count;
``*args`` and ``**kwargs`` count one each.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "src" / "leviathan"
LIMIT = 7
REASON = "Parameters:"


def _count(args: ast.arguments) -> int:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names = [n for n in names if n not in ("self", "cls")]
    return len(names) + (args.vararg is not None) + (args.kwarg is not None)


def long_parameter_lists(root: Path = ROOT) -> list[str]:
    """``path:line name (n parameters)`` of every function over the limit whose docstring gives no reason."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            n = _count(node.args)
            if n > LIMIT and REASON not in (ast.get_docstring(node) or ""):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({n} parameters)")
    return found


def test_no_long_parameter_list_without_a_reason():
    found = long_parameter_lists()
    assert not found, "functions over 7 parameters without a 'Parameters:' reason:\n" + "\n".join(found)


def test_the_check_counts_what_it_says(tmp_path):
    (tmp_path / "m.py").write_text("def f(self, a, b, c, d, e, g, *args, **kw):\n    pass\n"
                                   "def g(a, b, c, d, e, f, g, h):\n    '''Parameters: the options, one each.'''\n")
    assert long_parameter_lists(tmp_path) == ["tmp_path/m.py:1 f (8 parameters)".replace("tmp_path", tmp_path.name)]
