"""The paper's analyses (docs/DESIGN.md §7): pure functions over typed result rows and arrays, each module one
analysis (paired differences, scaling, efficiency, frequency buckets, plateau, the lr rule, the fair-shot and width
rounds, embeddings), their numbers ``records.Record``s. Nothing here writes a file or trains; the rows come from
``experiments.machinery.results``.
"""
