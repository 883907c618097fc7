"""Side-by-side speed and memory benchmark: the numbers behind ``leviathan bench`` (docs/benchmarks.md).

    from leviathan.bench import BenchOptions, format_report, run_benchmark
    print(format_report(run_benchmark(BenchOptions(configs=("cpu",), quick=True, threads=1))))

Every comparison builds its models in one process, warms each up, then *alternates* them step by step
for several repeats and reports medians and the ratio of medians. On a shared machine absolute times
drift by 2x within minutes; alternation exposes both models to the same drift, so the ratio is the
number to read.

Layout: ``configs`` (the sections, ``CONFIGS``, ``BenchOptions``), ``data`` (corpus, cached BPE, batches),
``harness`` (``alternate``, the timing protocol; medians; ``TrainStep``), ``sections/`` (one module per section,
``--only``: ``train``, ``modes``, ``generator``, ``memory``, ``decode``, ``hf``, ``width``; each says what it
times), ``runner`` (``run_benchmark``), ``report`` (the targets, PASS/MISS, and ``format_report``).
``python -m leviathan.bench --rss`` is the fresh process the ``modes`` section measures peak memory in.

Footguns: timings include whatever else runs on the machine (the report prints the load average).
With several threads on a machine whose cores are busy, OpenMP's default spinning waits stall every
parallel region, which penalises many small ops (the generator) far more than a few large ones (the
head); docs/benchmarks.md has the measurement. Use ``--threads 1``, or ``OMP_WAIT_POLICY=PASSIVE`` in
the environment before Python starts.
"""

from __future__ import annotations

from ..errors import UserError
from .configs import CONFIGS, DEFAULT_SECTIONS, EXPERIMENT_CONFIGS, SECTIONS, WIDTH_CONFIGS, BenchConfig, BenchOptions
from .data import (TokenData, bench_tokenizer, corpus_files, default_cache_dir, make_batches, read_texts, books_root,
                   token_stream)
from .harness import TrainStep, alternate, build_model, build_optimizer, median, stats
from .report import TARGETS, evaluate_targets, format_report
from .runner import environment, load_data, run_benchmark
from .sections.decode import bench_decode, greedy_decode
from .sections.generator import bench_generator, paper_generator
from .sections.hf import bench_hf, hf_llama_like
from .sections.memory import bench_memory, saved_bytes
from .sections.modes import bench_modes, peak_rss_mb
from .sections.train import GeneratorStep, bench_training
from .sections.width import HeadStep, bench_widths

__all__ = [
    "BenchConfig", "BenchOptions", "CONFIGS", "DEFAULT_SECTIONS", "EXPERIMENT_CONFIGS", "GeneratorStep", "HeadStep",
    "SECTIONS", "TARGETS", "TokenData", "TrainStep", "UserError", "WIDTH_CONFIGS", "alternate", "bench_decode",
    "bench_generator", "bench_hf", "bench_memory", "bench_modes", "bench_tokenizer", "bench_training", "bench_widths",
    "books_root", "build_model", "build_optimizer", "corpus_files", "default_cache_dir", "environment",
    "evaluate_targets", "format_report", "greedy_decode", "hf_llama_like", "load_data", "make_batches", "median",
    "paper_generator", "peak_rss_mb", "read_texts", "run_benchmark", "saved_bytes", "stats", "token_stream",
]
