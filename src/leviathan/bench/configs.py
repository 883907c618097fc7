"""What a benchmark run measures: the sections, the named model configurations, and the run's options."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import UserError
from ..model.config import ModelConfig
from ..presets import preset
from .data import default_cache_dir

SECTIONS = ("train", "modes", "generator", "memory", "decode", "hf", "width")
DEFAULT_SECTIONS = SECTIONS[:-1]  # ``width`` compares several configurations at once: only when asked (--only width)
# the sections that measure the chosen configurations; generator and memory measure the paper defaults whatever
# --config says: given to them alone, the configurations' data were loaded for nothing (issue 30 round 27, R36)
CONFIG_SECTIONS = ("train", "modes", "decode", "hf", "width")


@dataclass(frozen=True)
class BenchConfig:
    """One named benchmark configuration: the model (any variant via ``model(embedding)``) and its batch."""

    name: str
    preset: str
    overrides: dict
    tokenizer: str  # "o200k_base" or "bpe:VOCAB" (trained on corpus text and cached)
    seq_len: int
    batch_size: int
    description: str
    # the softmax scores this many ids (``data.softmax: corpus``: the o200k rounds score the 58,620 ids that occur
    # in their prepared data); None: the full vocabulary. The cost depends on the count, not on which ids.
    softmax_ids: Optional[int] = None

    def model(self, embedding: str) -> ModelConfig:
        return preset(self.preset, embedding=embedding, **self.overrides)


_LARGER_GENERATOR = dict(generator_seed_dim=64, generator_modes=8, generator_knots=16, generator_rank=32)

CONFIGS: dict[str, BenchConfig] = {
    "cpu": BenchConfig("cpu", "cpu-small", {"vocab_size": 8192}, "bpe:8192", 256, 8,
                       "CPU experiments: cpu-small (width 128, 4 layers), BPE 8192, seq 256 x 8"),
    "paper": BenchConfig("paper", "paper-109m", {}, "o200k_base", 512, 2,
                         "paper-like: paper-109m (o200k, width 512, 6 layers, d_s=128 M=8 kappa=32 r=64), seq 512 x 2"),
    # for smoke tests: seconds, not minutes
    "tiny": BenchConfig("tiny", "cpu-tiny", {"vocab_size": 512, "max_position_embeddings": 64}, "bpe:512", 64, 2,
                        "smoke test: cpu-tiny, BPE 512, seq 64 x 2"),
    # the configurations of the experiments (results/ablations, the CPU grid), micro batch 16 x 128
    "bpe8k-d128": BenchConfig("bpe8k-d128", "cpu-small", {"vocab_size": 8192}, "bpe:8192", 128, 16,
                              "experiments: BPE 8192, width 128, 4 layers, generator d_s=64 M=8 kappa=16 r=32"),
    "bpe32k-d64": BenchConfig("bpe32k-d64", "cpu-tiny", {"vocab_size": 32768, **_LARGER_GENERATOR}, "bpe:32768",
                              128, 16, "experiments: BPE 32768, width 64, 2 layers, generator d_s=64 M=8 kappa=16 r=32"),
    "bpe32k-d128": BenchConfig("bpe32k-d128", "cpu-small", {"vocab_size": 32768}, "bpe:32768", 128, 16,
                               "experiments: BPE 32768, width 128, 4 layers, generator d_s=64 M=8 kappa=16 r=32"),
    "o200k-d64": BenchConfig("o200k-d64", "cpu-tiny", {"vocab_size": 200_019, **_LARGER_GENERATOR}, "o200k_base",
                             128, 16, "experiments: o200k, width 64, 2 layers, generator d_s=64 M=8 kappa=16 r=32"),
}
EXPERIMENT_CONFIGS = ("bpe8k-d128", "bpe32k-d64", "bpe32k-d128", "o200k-d64")

# The bodies of the width round (configs/experiments/o200k-width.yaml, results/o200k-width/PLAN.md): o200k with the
# corpus softmax (58,620 ids), 6 layers, head size 16, SwiGLU 3x the width, the o200k round's generator (d_s 128,
# M 8, kappa 32, r 64), its micro batch 64 x 128. A test checks that these are the grid's sizes.
CORPUS_IDS_O200K = 58_620  # ids of o200k_base that occur in data/gutenberg-o200k (train + val)
_O200K_ROUND = dict(vocab_size=200_019, num_hidden_layers=6, generator_seed_dim=128, generator_modes=8,
                    generator_knots=32, generator_rank=64)


def _width_config(width: int, heads: int) -> BenchConfig:
    name = f"o200k-d{width}L6"
    return BenchConfig(name, "cpu-tiny", {**_O200K_ROUND, "hidden_size": width, "num_attention_heads": heads,
                                          "intermediate_size": 3 * width}, "o200k_base", 128, 64,
                       f"width round: o200k, corpus softmax ({CORPUS_IDS_O200K:,} ids), width {width}, 6 layers, "
                       f"{heads} heads, SwiGLU {3 * width}, generator d_s=128 M=8 kappa=32 r=64, 64 x 128",
                       softmax_ids=CORPUS_IDS_O200K)


CONFIGS.update({c.name: c for c in (_width_config(32, 2), _width_config(64, 4), _width_config(128, 8))})
WIDTH_CONFIGS = ("o200k-d32L6", "o200k-d64L6", "o200k-d128L6")


def check_configs_once(configs: tuple[str, ...]) -> None:
    """UserError naming a configuration listed twice (``--config tiny,tiny``, or one of ``experiments`` or ``widths``
    named beside the group): it was benchmarked twice, two timings printed, and the table kept one of them (issue 30
    round 17, D342)."""
    twice = next((c for i, c in enumerate(configs) if c in configs[:i]), None)
    if twice is not None:
        groups = [g for g, members in (("experiments", EXPERIMENT_CONFIGS), ("widths", WIDTH_CONFIGS)) if twice in members]
        within = f" (the group {groups[0]!r} includes it)" if groups else ""
        raise UserError(f"--config names {twice!r} twice{within}; name each configuration once")


@dataclass
class BenchOptions:
    configs: tuple[str, ...] = ("cpu", "paper")
    sections: tuple[str, ...] = DEFAULT_SECTIONS
    quick: bool = False
    repeats: Optional[int] = None
    warmup: int = 1
    threads: Optional[int] = None
    cache_dir: Path = field(default_factory=default_cache_dir)
    decode_tokens: Optional[int] = None

    def repeats_for(self, full: int, quick: int) -> int:
        """``--repeats`` if given, else the section's default for a full or a ``--quick`` run."""
        return self.repeats if self.repeats is not None else (quick if self.quick else full)
