"""The trainers researchers use: ``transformers.Trainer`` on ``LeviathanForCausalLM`` and on an adopted Qwen2
(falling loss; a run stopped after its checkpoint and resumed with ``resume_from_checkpoint=True`` ends with the
uninterrupted run's weights and losses), and a plain PyTorch loop with ``LeviathanGenerator`` as the embedding.

Tiny models (V=300, D=32, 1 layer, 2-mode generator), 12 steps of 8 rows from 4 repeated random sequences,
made here; CPU, no network.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")  # transformers.Trainer needs it

from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt, is_adopted, load_adopted  # noqa: E402
from leviathan.model.generator import LeviathanGenerator  # noqa: E402

V, D = 300, 32
STEPS, SAVE = 12, 6


class Rows(torch.utils.data.Dataset):
    """32 rows: 4 random sequences of 16 tokens, repeated (learnable in a few steps)."""

    def __init__(self):
        self.ids = torch.randint(0, V, (4, 16), generator=torch.Generator().manual_seed(0)).repeat(8, 1)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def make(kind: str):
    torch.manual_seed(0)
    if kind == "leviathan":
        return LeviathanForCausalLM(LeviathanConfig(
            vocab_size=V, hidden_size=D, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=64,
            generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4))
    return adopt(transformers.Qwen2Config(vocab_size=V, hidden_size=D, intermediate_size=64, num_hidden_layers=1,
                                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64),
                 seed_dim=8, modes=2, knots=8, rank=4)


class StopAt(transformers.TrainerCallback):
    """Stops training after ``step`` (the checkpoint of that step is written first): an interrupted run."""

    def __init__(self, step: int):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            control.should_training_stop = True


def trainer(model, out_dir, callbacks=()):
    args = transformers.TrainingArguments(
        output_dir=str(out_dir), max_steps=STEPS, per_device_train_batch_size=8, learning_rate=3e-2,
        logging_steps=1, save_steps=SAVE, report_to="none", use_cpu=True, seed=0, disable_tqdm=True,
        dataloader_num_workers=0)
    return transformers.Trainer(model=model, args=args, train_dataset=Rows(), callbacks=list(callbacks))


def losses(t) -> list[float]:
    return [row["loss"] for row in t.state.log_history if "loss" in row]


@pytest.mark.parametrize("kind", ["leviathan", "adopted-qwen2"])
def test_trainer_trains_and_resumes_from_its_own_checkpoint(kind, tmp_path):
    whole = trainer(make(kind), tmp_path / "whole")
    whole.train()
    curve = losses(whole)
    assert len(curve) == STEPS and curve[-1] < curve[0] - 1.0, curve

    stopped = trainer(make(kind), tmp_path / "resumed", callbacks=[StopAt(SAVE)])
    stopped.train()
    assert stopped.state.global_step == SAVE
    assert sorted(p.name for p in (tmp_path / "resumed").iterdir()) == [f"checkpoint-{SAVE}"]

    torch.manual_seed(123)  # the fresh model's init must not matter: the checkpoint replaces it
    resumed = trainer(make(kind), tmp_path / "resumed")
    resumed.train(resume_from_checkpoint=True)
    assert resumed.state.global_step == STEPS
    assert losses(resumed)[SAVE:] == pytest.approx(curve[SAVE:], abs=1e-6)
    for (name, a), (_, b) in zip(whole.model.state_dict().items(), resumed.model.state_dict().items()):
        assert torch.allclose(a, b, atol=1e-6), name
    if kind == "adopted-qwen2":  # a Trainer checkpoint of an adopted model is an adopted directory
        again = load_adopted(tmp_path / "resumed" / f"checkpoint-{STEPS}")
        assert is_adopted(again) and isinstance(again.get_input_embeddings(), LeviathanGenerator)
        for (name, a), (_, b) in zip(resumed.model.state_dict().items(), again.state_dict().items()):
            assert torch.equal(a, b), name


def test_plain_pytorch_loop_with_the_generator_as_embedding():
    torch.manual_seed(0)
    generator = LeviathanGenerator(V, D, seed_dim=8, modes=2, knots=8, rank=4)
    model = nn.Sequential(generator, nn.Linear(D, V))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-2)
    ids = torch.randint(0, V, (4, 17), generator=torch.Generator().manual_seed(0))
    curve = []
    for _ in range(30):
        logits = model(ids[:, :-1])  # (4, 16, V)
        loss = nn.functional.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append(loss.item())
    assert curve[-1] < curve[0] - 1.0, curve
    assert all(p.grad is not None for p in generator.parameters())
    table = nn.Embedding.from_pretrained(generator.bake())
    with torch.no_grad():
        assert torch.allclose(table(ids), generator(ids), atol=1e-5)
