"""What produces and keeps the rows the method reads: grids (``grid_file``, ``grid``, ``sweep_grid``), sweeps
(``sweep``, ``shards``, ``reuse``, ``presweep``), the row with its one reader and writer (``results``) and what
checks it (``provenance``, ``identity``, ``drift``, ``data_match``), embedding files (``embedding_files``).
"""
