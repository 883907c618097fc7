"""The benchmark's sections, one module each (``train``, ``modes``, ``generator``, ``memory``, ``decode``, ``hf``,
``width``; each says what it times): ``measure`` functions on given models and batches, and a ``run(opts, data,
log)`` that applies a section to the selected configurations (``leviathan.bench.runner``).
"""
