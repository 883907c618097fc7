"""Training: typed run config, AdamW + schedule, the loop, atomic checkpoints, DDP/FSDP2, metrics.

    from leviathan.train import load_run_config, train
    cfg = load_run_config("tiny", ["optim.lr=1e-3", "max_steps=200"])   # a packaged config, or a path
    summary = train(cfg, "runs/tiny", resume="auto")

Modules: ``config`` (RunConfig), ``optim`` (parameter groups, AdamW), ``schedule`` (warmup + cosine),
``loop`` (train: the run from top to bottom), ``step`` (train_step: one optimizer step), ``state``
(TrainState; saving and restoring a training state, FSDP included), ``checkpoint`` (the step-folder
format, load_model), ``distributed`` (torchrun, DDP, FSDP2), ``metrics`` (metrics.jsonl, TensorBoard,
versions.json).

Attributes load on first use (PEP 562), so ``leviathan.train.metrics`` and ``leviathan.train.config``
import without torch: reading a sweep's results or metrics does not pay for the training stack.
"""

from ..lazy import lazy_exports

_EXPORTS = {"RunConfig": "..run_config", "load_run_config": "..run_config", "train": ".loop",
            "NonFiniteLossError": ".loop", "TrainSummary": ".summary"}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
