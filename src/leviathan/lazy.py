"""Lazy package attributes (PEP 562): a package's public names import their module on first use.

    __getattr__, __dir__ = lazy_exports(__name__, {"CausalLM": ".model.llama", ...})

So ``import leviathan`` (and ``leviathan --help``, and the readers of results) does not import torch;
``from leviathan import CausalLM`` still works. Footgun: a name missing from the map raises
AttributeError only when used, so tests import every exported name.
"""

from __future__ import annotations

from importlib import import_module


def lazy_exports(package: str, exports: dict[str, str]):
    """(``__getattr__``, ``__dir__``) for ``package`` that load ``exports`` (name -> relative module) on first use."""
    names = dict(exports)

    def __getattr__(name: str):
        if name in names:
            return getattr(import_module(names[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        import sys

        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
