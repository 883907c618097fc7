"""The public functions of src/leviathan as the source sweeps read them (test_switches_checked,
test_callbacks_checked): module-level and class-level functions whose names, and whose file's path parts, do not
start with '_'; the CLI's ``commands`` package aside (its options are checked by argparse)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "src" / "leviathan"


def public_functions(root: Path = ROOT):
    """(path relative to ``root``, function node) of each public function under ``root``."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "commands" or any(p.startswith("_") and p != "__init__.py" for p in rel.parts):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                yield rel.as_posix(), node
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_"):
                        yield rel.as_posix(), item
