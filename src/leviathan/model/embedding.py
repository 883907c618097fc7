"""Input-embedding variants behind one interface (docs/DESIGN.md §4).

Every input side is an ``nn.Module`` mapping ids (...) -> (..., D) with
- ``num_embeddings``: the vocabulary it was built for;
- ``bake()``: the (V, D) table it computes, for export and zero-overhead serving.

``build_input_embedding(cfg)`` picks the variant from ``cfg.embedding``; the decoder stores it as
``model.embed_tokens`` so dense checkpoints keep Hugging Face's key ``model.embed_tokens.weight``.
The head is never part of the input side: for ``dense_tied`` the decoder points ``lm_head.weight``
at ``embed_tokens.weight`` (one tensor, counted once).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .labels import check_input_ids
from .config import ModelConfig
from .digits import as_lookup_ids, check_ids, codebook_sum
from .generator import LeviathanGenerator
from .output_norm import OutputNorm


class TableEmbedding(nn.Embedding):
    """The usual V x D lookup table (dense_tied, dense_untied), optionally RMS-normalised (``out_norm``).

    ``out_norm`` (``ModelConfig.embedding_norm``, issue 29): the same ``OutputNorm`` the generator can take, so a
    comparison of a normalised generator has a normalised table beside it. None for a plain table (then the
    module is exactly ``nn.Embedding``; its state dict holds ``weight`` only).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, norm: bool = False, init_gain: float = 0.02,
                 norm_eps: float = 1e-6):
        super().__init__(num_embeddings, embedding_dim)
        self.out_norm = OutputNorm(embedding_dim, init_gain, norm_eps) if norm else None

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        check_input_ids(input_ids, self.num_embeddings)
        e = super().forward(input_ids)  # (..., D)
        return e if self.out_norm is None else self.out_norm(e)

    @torch.no_grad()
    def bake(self) -> torch.Tensor:
        table = self.weight.detach().clone()
        return table if self.out_norm is None else self.out_norm(table)


class FactorizedEmbedding(nn.Module):
    """ALBERT-style low-rank table: a V x e lookup followed by an e x D linear map."""

    def __init__(self, vocab_size: int, hidden_size: int, rank: int):
        super().__init__()
        self.num_embeddings, self.embedding_dim = vocab_size, hidden_size
        self.table = nn.Parameter(torch.empty(vocab_size, rank))
        self.proj = nn.Linear(rank, hidden_size, bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.proj(F.embedding(input_ids, self.table))  # (..., e) -> (..., D)

    @torch.no_grad()
    def bake(self) -> torch.Tensor:
        return self.proj(self.table)


class CompositionalEmbedding(nn.Module):
    """Generator steps 1-2 (digits, codebook sum) plus a d_s x D linear map; no splines."""

    def __init__(self, vocab_size: int, hidden_size: int, k: int, seed_dim: int, base: int):
        super().__init__()
        self.vocab_size, self.embedding_dim = vocab_size, hidden_size
        self.k, self.base, self.seed_dim = k, base, seed_dim
        self.codebooks = nn.Parameter(torch.empty(k, base, seed_dim))
        self.proj = nn.Linear(seed_dim, hidden_size, bias=False)

    @property
    def capacity(self) -> int:
        return self.base**self.k

    @property
    def num_embeddings(self) -> int:
        return self.vocab_size

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        input_ids = as_lookup_ids(input_ids)  # uint16 ids (round 25, Y79)
        check_ids(input_ids, self.base, self.k)
        z = codebook_sum(input_ids.reshape(-1), self.codebooks)  # (N, d_s)
        return self.proj(z).view(*input_ids.shape, -1)  # (..., D)

    @torch.no_grad()
    def bake(self) -> torch.Tensor:
        return self(torch.arange(self.num_embeddings, device=self.codebooks.device))


def build_input_embedding(cfg: ModelConfig) -> nn.Module:
    """The input side named by ``cfg.embedding``, freshly initialised (a TypeError, a UserError too, for anything but a
    ``ModelConfig``: a preset's name ended in an AttributeError; round 22)."""
    if not isinstance(cfg, ModelConfig):
        from ..errors import ArgumentTypeError

        raise ArgumentTypeError(f"build_input_embedding takes a ModelConfig, got {type(cfg).__name__} {cfg!r:.60}")
    V, D = cfg.vocab_size, cfg.hidden_size
    if cfg.embedding in ("dense_tied", "dense_untied"):
        module = TableEmbedding(V, D, norm=cfg.embedding_norm, init_gain=cfg.initializer_range,
                                norm_eps=cfg.rms_norm_eps)
    elif cfg.embedding == "factorized":
        module = FactorizedEmbedding(V, D, cfg.embedding_rank)
    elif cfg.embedding == "compositional":
        module = CompositionalEmbedding(V, D, cfg.generator_k, cfg.generator_seed_dim, cfg.base)
    elif cfg.embedding == "leviathan":
        return LeviathanGenerator(V, D, k=cfg.generator_k, seed_dim=cfg.generator_seed_dim,
                                  modes=cfg.generator_modes, knots=cfg.generator_knots, rank=cfg.generator_rank,
                                  degree=cfg.generator_degree, ln_eps=cfg.generator_ln_eps, base=cfg.base,
                                  init=cfg.generator_init, center=cfg.generator_center, norm=cfg.embedding_norm,
                                  form=cfg.generator_form, table_std=cfg.initializer_range, norm_eps=cfg.rms_norm_eps)
    else:  # ModelConfig validation makes this unreachable
        raise ValueError(f"unknown embedding {cfg.embedding!r}")
    init_dense(module, cfg.initializer_range)
    return module


@torch.no_grad()
def init_dense(module: nn.Module, std: float) -> None:
    """Hugging Face Llama's init for dense weights: N(0, std^2); an output norm's gain keeps its own init."""
    for name, p in module.named_parameters():
        if not name.startswith("out_norm."):
            nn.init.normal_(p, std=std)
