"""Training: AdamW + schedule, the loop, the validator, atomic checkpoints, DDP/FSDP2, metrics.

    from leviathan.train import load_run_config, train
    cfg = load_run_config("tiny", ["optim.lr=1e-3", "max_steps=200"])   # a packaged config, or a path
    summary = train(cfg, "runs/tiny", resume="auto")                     # a TrainSummary

Modules: ``optim`` (parameter groups, AdamW), ``schedule`` (warmup + cosine), ``loop`` (train: the run
from top to bottom), ``summary`` (TrainSummary), ``step`` (train_step: one optimizer step), ``validate``
(Validator: when and how a run scores its validation stream), ``state`` (TrainState; saving and restoring a
training state, FSDP included), ``checkpoint`` (writing step folders; reading them and ``load_model`` live
in ``leviathan.checkpoint``), ``distributed`` (torchrun, DDP, FSDP2), ``metrics`` (metrics.jsonl,
TensorBoard, versions.json). The run config itself is ``leviathan.run_config`` (``RunConfig`` and
``load_run_config`` are exported here too).

Attributes load on first use (PEP 562), so ``leviathan.train.metrics`` imports without torch.
"""

from ..lazy import lazy_exports

_EXPORTS = {"RunConfig": "..run_config", "load_run_config": "..run_config", "train": ".loop",
            "NonFiniteLossError": ".loop", "TrainSummary": ".summary"}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
