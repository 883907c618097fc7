"""Shared set-up of the reliability tests of ``transformers.Trainer`` on an adopted model: a tiny Qwen2 config
(V=300, D=32, 1 layer), a small generator's settings and 8 random rows of 16 ids, made here, no network. The two
resume tests (weights held to the save, resumes across adoptions) each carried a copy of these 15 lines.
"""

from __future__ import annotations

import torch

V, D = 300, 32
QWEN = dict(vocab_size=V, hidden_size=D, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, bos_token_id=1, eos_token_id=2)
SMALL = dict(seed_dim=8, modes=2, knots=8, rank=4)  # a generator of rank 4: fast to adopt and to train


class Rows(torch.utils.data.Dataset):
    """8 rows of 16 random ids below V (seed 0), each its own labels."""

    def __init__(self):
        self.ids = torch.randint(0, V, (8, 16), generator=torch.Generator().manual_seed(0))  # (8, 16)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}
