"""The benchmark's sections, one module each: ``measure`` functions on given models and batches, and a
``run(opts, data, log)`` that applies a section to the selected configurations (``leviathan.bench.runner``).

- ``train``: leviathan vs dense_tied training step, and the generator's own share;
- ``modes``: plain logits / chunked head / torch.compile per variant, and peak memory per process;
- ``generator``: the generator's fast path vs the literal formula, per distinct id;
- ``memory``: bytes autograd keeps for backward per distinct id;
- ``decode``: greedy decoding tokens/s, baked leviathan vs dense_tied;
- ``hf``: our dense_tied training step vs transformers' Llama;
- ``width``: every arm's training step at each width of a width round side by side, and where its cost goes.
"""
