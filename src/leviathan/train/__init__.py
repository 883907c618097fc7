"""Training: AdamW + schedule, the loop, the validator, atomic checkpoints, DDP/FSDP2, metrics.

    from leviathan.train import load_run_config, train
    cfg = load_run_config("tiny", ["optim.lr=1e-3", "max_steps=200"])   # a packaged config, or a path
    summary = train(cfg, "runs/tiny", resume="auto")                     # a TrainSummary

Modules: ``optim``, ``schedule``, ``loop`` (the run from top to bottom), ``summary``, ``step`` (one optimizer step),
``validate``, ``state`` (saving and restoring a training state), ``checkpoint`` (writing step folders; reading
them is ``leviathan.checkpoint``), ``distributed`` (torchrun, DDP, FSDP2), ``metrics`` (metrics.jsonl,
TensorBoard, versions.json). ``RunConfig`` and ``load_run_config`` (``leviathan.run_config``) are exported here too.
Attributes load on first use (PEP 562), so ``leviathan.train.metrics`` imports without torch.
"""

from ..lazy import lazy_exports

_EXPORTS = {"RunConfig": "..run_config", "load_run_config": "..run_config", "train": ".loop",
            "NonFiniteLossError": ".loop", "TrainSummary": ".summary"}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
