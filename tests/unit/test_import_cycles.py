"""No import circle between the modules of src/leviathan (issue 32, item 3).

Every ``import`` / ``from ... import`` in a module, at any depth (a function-level import closes a circle at
run time as surely as a top-level one), is resolved to the leviathan module it names; a strongly connected
component of two or more modules is a circle. ``from . import x`` names the submodule ``x`` when one exists.
A package's ``__init__`` counts as the package's own module: a package that re-exports its rooms is not a
circle with them (the rooms never import their package's face, which the check below also refuses).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = SRC / "leviathan"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _resolve(base: str, level: int, is_package: bool) -> str:
    parts = base.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    return ".".join(parts[:keep])


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node.level, is_package) if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p)
            submodules = {f"{target}.{a.name}" for a in node.names} & known
            found.update(submodules)
            if len(submodules) < len(node.names):  # names defined in ``target`` itself
                found.add(target)
    out = set()
    for target in found:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _without_package_faces(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Drop the edge from a package's face (``__init__``) to its own submodules: a face re-exporting its rooms."""
    return {v: {w for w in ws if not w.startswith(v + ".")} for v, ws in graph.items()}


def test_no_import_circle():
    found = cycles(_without_package_faces(import_graph()))
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_rooms_never_import_their_own_package_face():
    graph = import_graph()
    packages = {_module_name(p) for p in ROOT.rglob("__init__.py")}
    bad = [(v, w) for v, ws in graph.items() for w in ws
           if w in packages and v.startswith(w + ".") and w != "leviathan"]
    assert not bad, f"a module imports its own package's face: {bad}"


def test_the_checker_sees_a_circle():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_the_method_reads_only_the_machinerys_types():
    """experiments/method/ is the paper's analyses: of experiments/machinery/ it imports only the typed inputs
    (the row, its provenance, grid.json), never a grid, a sweep or a file writer (issue 32, item 4)."""
    allowed = {f"leviathan.experiments.machinery.{m}" for m in ("results", "provenance", "sweep_grid")}
    graph = import_graph()
    bad = sorted((v, w) for v, ws in graph.items() if v.startswith("leviathan.experiments.method")
                 for w in ws if w.startswith("leviathan.experiments.machinery") and w not in allowed)
    assert not bad, f"the method imports machinery beyond its input types: {bad}"
