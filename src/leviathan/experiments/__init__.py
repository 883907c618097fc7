"""The paper's experimental method as code (docs/DESIGN.md §4-7), in four floors.

- ``method/``: the analyses, pure functions over typed rows and arrays (paired differences, scaling,
  efficiency, frequency buckets, plateau, the lr rule, the fair-shot and width rounds, embeddings); the
  part a reader of the paper looks for.
- ``machinery/``: what produces and keeps the rows: grids, sweeps, shards, reuse, the pre-sweep, the row
  type with its one reader and writer, provenance, identity, drift.
- ``report/`` and ``ablation/``: the documents (report.md, analysis.json, ablations.json, figures) built
  from machinery's rows by method's functions; ``plots``: matplotlib set up once for both.

method/ takes from machinery/ only the types it reads (``results``, ``provenance``, ``sweep_grid``: the row,
its provenance, grid.json; tests/unit/test_import_cycles.py holds it to that); machinery/ uses the method
only where a stage needs a rule (the pre-sweep's lr pick, the embeddings a run folder is analysed into). Every analysis is tested on
synthetic data whose answer is known. CLI: ``leviathan sweep``, ``leviathan analyze``, ``leviathan report``.
"""
