"""The paper's analyses (docs/DESIGN.md §7): pure functions over typed result rows and arrays.

- ``paired``: a model against its baseline across seeds, with a 95% interval, at the end and over training.
- ``scaling``: the power-law fit L(N) = E + A N^-alpha with bootstrap intervals; dense-equivalent size.
- ``efficiency``: tokens to reach a reference loss, gains over training, throughput.
- ``frequency``: loss by training-frequency bucket and the relative reduction between models.
- ``plateau``: the unigram entropy a dense baseline sits on early in training.
- ``lr_sweep``: each arm's final loss per peak lr and the lr the committed rule picks.
- ``fair_shot``, ``width``: the rules of two committed rounds (results/o200k-fair, results/o200k-width).
- ``embeddings``: the input side's geometry and how far two arms agree on neighbours.
- ``records``: ``Record``, the base of every typed number here (and of the row): fields in order, one codec.

Nothing here writes a file or runs a model; a module reads at most a run's companion file it is handed
(metrics, training frequencies). The rows come from ``experiments.machinery.results``.
"""
