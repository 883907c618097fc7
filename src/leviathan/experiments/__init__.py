"""The paper's experimental method as code (docs/DESIGN.md §4-7), in four floors (§10 maps them).

- ``method/``: the analyses, pure functions over typed rows and arrays; the part a reader of the paper looks for.
- ``machinery/``: what produces and keeps the rows: grids, sweeps, shards, reuse, the pre-sweep, the row type with
  its one reader and writer, provenance, identity, drift.
- ``report/`` and ``ablation/``: the documents built from machinery's rows by method's functions; ``plots``:
  matplotlib set up once for both.

method/ takes from machinery/ only the types it reads (``results``, ``provenance``, ``sweep_grid``;
tests/unit/test_import_cycles.py holds it to that). Every analysis is tested on synthetic data whose answer is
known. CLI: ``leviathan sweep``, ``leviathan analyze``, ``leviathan report``.
"""
