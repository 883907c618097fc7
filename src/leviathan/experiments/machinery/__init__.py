"""What produces and keeps the rows the method reads: grids, sweeps, shards, files and their checks.

- ``grid_file`` (a grid YAML read into typed sections), ``grid`` (expanded into runs), ``sweep_grid``
  (grid.json read back typed).
- ``sweep`` (resumable, --jobs, --shard), ``shards`` (a grid split across machines, merged), ``reuse``
  (rows of another round that are exactly a run of this grid), ``presweep`` (an lr pre-sweep, then the grid
  at its picks).
- ``results``: the typed row (``ResultRow``), its one reader and writer, the regime -> baseline map.
- ``provenance`` (config, code and data of a row; portable paths), ``identity`` (what a row measured),
  ``drift`` (kept rows against the grid's configs now), ``data_match`` (a row's data against a data folder).
- ``embedding_files``: run folders in, embedding records out and back.
"""
