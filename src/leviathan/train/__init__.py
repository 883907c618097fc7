"""Training: typed run config, AdamW + schedule, the loop, atomic checkpoints, DDP/FSDP2, metrics.

    from leviathan.train import load_run_config, train
    cfg = load_run_config("tiny", ["optim.lr=1e-3", "max_steps=200"])   # a packaged config, or a path
    summary = train(cfg, "runs/tiny", resume="auto")

Modules: ``config`` (RunConfig), ``optim`` (parameter groups, AdamW), ``schedule`` (warmup + cosine),
``loop`` (train: the run from top to bottom), ``step`` (train_step: one optimizer step), ``state``
(TrainState; saving and restoring a training state, FSDP included), ``checkpoint`` (the step-folder
format, load_model), ``distributed`` (torchrun, DDP, FSDP2), ``metrics`` (metrics.jsonl, TensorBoard,
versions.json).
"""

from .checkpoint import load_model
from .config import RunConfig, load_run_config
from .loop import NonFiniteLossError, train

__all__ = ["RunConfig", "load_run_config", "train", "load_model", "NonFiniteLossError"]
