"""The paper's experimental method as code (docs/DESIGN.md §4-7).

- ``grid``: experiment grids as data (leviathan/configs/experiments/*.yaml) expanded into runs: iso-body,
  isoparametric (depth solved to equal totals), dense scaling ladder, other input variants; ``grid_file``
  reads the YAML into typed sections.
- ``sweep``: resumable execution of a grid; one JSON row per finished run in results.jsonl, and grid.json
  (read back typed by ``sweep_grid``).
- ``results``: the typed row (``ResultRow``), its one reader and writer, the regime -> baseline map
  and the JSON cleaning every written file goes through.
- ``records``: the base of the analyses' typed results (``Record``): the reports read their attributes,
  analysis.json and ablations.json hold their ``as_dict()``.
- ``scaling``: power-law fit L(N) = E + A N^-alpha with bootstrap intervals; dense-equivalent size.
- ``frequency``: loss by training-frequency bucket and the relative reduction between models.
- ``efficiency``: tokens to reach a reference loss, gains over training, throughput table.
- ``report``: report.md, analysis.json and figures from a sweep's results (``report.analysis``: the
  numbers; ``report.figures``: the PNGs; ``report.markdown``: the text).
- ``ablation``: each leviathan arm against the dense_tied run of its backbone over training.

Every analysis is a pure function of arrays or result rows (no torch import), so it is tested on
synthetic data whose answer is known. CLI: ``leviathan sweep``, ``leviathan analyze``,
``leviathan report``; downstream benchmarks: ``leviathan lm-eval`` (``leviathan.eval.harness``).
"""
