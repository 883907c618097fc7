"""Data parallelism applied from outside the model: DDP (default) or FSDP2, set up from torchrun's env.

    torchrun --nproc_per_node=2 -m leviathan train --config tiny            # DDP
    torchrun --nproc_per_node=8 -m leviathan train --config paper-109m parallel=fsdp

``init_distributed`` reads ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE`` (set by torchrun) and, when WORLD_SIZE > 1,
initialises the default process group: gloo on CPU, nccl on GPU (``cuda:LOCAL_RANK``). Without them everything
here is a no-op. ``leviathan.model`` never imports this module. The loop relies on: every rank building the model
from the same seed; rank r reading the global sequence stream ``[r::world]`` (BatchLoader), so the averaged loss and
gradient equal the single-process ones up to float reduction order (tests/integration/test_ddp.py); only rank 0
writing files.

FSDP2 (``parallel: fsdp``; GPUs, or CPU processes with gloo, as tests/integration/test_fsdp.py does):
``fully_shard`` is applied to each decoder layer and then to the root. The input side (table or generator) and a
tied head stay in the root group (the tied tensor must live in one group; the generator is small). FSDP2 gathers a
group only before ``forward``; root methods that run the model otherwise (``CausalLM.token_nll``, used by
validation) are registered with ``register_fsdp_forward_method`` (``ROOT_FORWARD_METHODS``). The optimizer is built
*after* sharding; gradient accumulation skips the reduce-scatter on all but the last micro step
(``set_requires_gradient_sync``); checkpoints gather full, CPU-offloaded state dicts on rank 0, the single-process
format. Mixed precision stays torch.autocast; parameters and optimizer state are fp32.

A rank that dies: ``torchrun --max-restarts=1 ... -m leviathan train ... --resume auto`` restarts the whole group,
which resumes from the latest complete checkpoint and ends as an uninterrupted run would
(tests/reliability/test_rank_kill.py); the restarted ranks rendezvous on fresh store keys (``restart_store``).
Without restarts the surviving ranks end in one line naming the rank that died and the command that resumes
(``rank_failure``).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn

from .rank_failure import record_ranks


@dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    backend: str | None = None

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def env_world() -> tuple[int, int, int]:
    """(rank, local_rank, world_size) from torchrun's environment; (0, 0, 1) without it."""
    return (int(os.environ.get("RANK", 0)), int(os.environ.get("LOCAL_RANK", 0)),
            int(os.environ.get("WORLD_SIZE", 1)))


def resolve_device(spec: str, option: str = "device=") -> torch.device:
    """``auto`` -> cuda (``cuda:LOCAL_RANK`` under torchrun) when available, else cpu. ``option``: how the user set
    ``spec``, named in the fix: "device=" (the config's setting: ``train``) or "--device " (``eval``, ``generate``);
    ``generate --device cuda`` was told "use device=cpu or device=auto", an override it takes none of, naming 'cuda:0'
    where 'cuda' was typed (issue 30 round 26, P33)."""
    from ..devices import device_problem, unavailable_line
    from ..errors import UserError

    problem = device_problem(spec)  # torch.device("tpu") raised a RuntimeError traceback (issue 30 round 7)
    if problem is not None:
        raise UserError(f"device {problem}; pass one of those")
    if spec != "auto" and (absent := unavailable_line(spec, option)) is not None:  # as typed: 'cuda', not 'cuda:0'
        raise UserError(absent)
    _, local_rank, world = env_world()
    if spec == "auto":
        spec = "cuda" if torch.cuda.is_available() else "cpu"
    if spec == "cuda":  # an explicit index: torch.cuda.set_device rejects a bare "cuda"
        spec = f"cuda:{local_rank if world > 1 else torch.cuda.current_device() if torch.cuda.is_available() else 0}"
    device = torch.device(spec)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    return device


def init_distributed(device: torch.device) -> DistInfo:
    """Initialise the process group from torchrun's env (gloo on CPU, nccl on CUDA) if WORLD_SIZE > 1."""
    rank, local_rank, world = env_world()
    if world <= 1:
        return DistInfo()
    backend = "nccl" if device.type == "cuda" else "gloo"
    if not dist.is_initialized():
        store = restart_store(world)
        kwargs = {"store": store, "rank": rank, "world_size": world} if store is not None else {}
        dist.init_process_group(backend=backend, device_id=device if device.type == "cuda" else None, **kwargs)
    record_ranks(rank, world)  # so that a rank that dies can be named (rank_failure)
    return DistInfo(rank=rank, local_rank=local_rank, world_size=world, backend=backend)


def restart_store(world: int):
    """The store of a group restarted by torchrun (``--max-restarts``) on one node, or None for torch's default.

    torchrun (2.13, c10d rendezvous) keeps its agent's TCPStore for every restart, so the keys the first group wrote
    are still there when the restarted ranks rendezvous: a rank can read its dead peer's address and fail with "Gloo
    connectFullMesh failed ... Connection refused" (pytorch/pytorch#135712). A prefix with the agent's restart count
    gives every attempt fresh keys, on one node only; across nodes launch torchrun with
    ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` when restarts are allowed.
    """
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    shared = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    one_node = int(os.environ.get("LOCAL_WORLD_SIZE", "0")) == world
    if not (shared and one_node and restart > 0):
        return None
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size=world,
                          is_master=False)
    return dist.PrefixStore(f"leviathan/restart-{restart}", store)


def shutdown(info: DistInfo) -> None:
    if info.enabled and dist.is_initialized():
        dist.destroy_process_group()


# Methods of the root besides ``forward`` that run the model on their own. FSDP2 all-gathers a group's
# parameters only in a pre-forward hook, which fires for ``forward``: the decoder layers are always called
# through their forward, but a root method such as ``CausalLM.token_nll`` (validation) reads the input side
# and the head directly and would see their shards (a generator codebook of 3 rows on 2 ranks: "Cannot
# flatten unevenly sharded tensor"). Registering the method gives it the same unshard / reshard hooks.
ROOT_FORWARD_METHODS = ("token_nll",)


def apply_fsdp(model: nn.Module) -> nn.Module:
    """FSDP2, in place: shard each decoder layer, then the root (input side, final norm, head). A tied head stays tied:
    one parameter in the root group, set sharded on both modules (tests/integration/test_fsdp.py)."""
    from torch.distributed.fsdp import fully_shard, register_fsdp_forward_method

    for layer in model.model.layers:
        fully_shard(layer)
    fully_shard(model)
    if model.config.tie_word_embeddings and model.lm_head.weight is not model.model.embed_tokens.weight:
        raise RuntimeError("fully_shard untied the head from the input table; the tied model would train two copies")
    for name in ROOT_FORWARD_METHODS:
        if hasattr(model, name):
            register_fsdp_forward_method(model, name)
    return model


def wrap_ddp(model: nn.Module, device: torch.device) -> nn.Module:
    from torch.nn.parallel import DistributedDataParallel as DDP

    return DDP(model, device_ids=[device.index] if device.type == "cuda" else None)


@contextlib.contextmanager
def no_grad_sync(train_model: nn.Module, raw_model: nn.Module, parallel: str, skip: bool):
    """Skip the gradient all-reduce / reduce-scatter on a non-final micro step."""
    if not skip:
        yield
    elif parallel == "fsdp":
        raw_model.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            raw_model.set_requires_gradient_sync(True)
    elif hasattr(train_model, "no_sync"):
        with train_model.no_sync():
            yield
    else:
        yield


def all_reduce_mean(t: torch.Tensor, info: DistInfo) -> torch.Tensor:
    if info.enabled:
        t = t.clone()
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        t /= info.world_size
    return t


def all_reduce_sum(t: torch.Tensor, info: DistInfo, device: torch.device) -> torch.Tensor:
    """The elementwise sum of ``t`` over the ranks, on the CPU (through ``device``: nccl reduces CUDA tensors)."""
    if not info.enabled:
        return t
    t = t.to(device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.cpu()


def any_rank(flag: bool, info: DistInfo, device: torch.device) -> bool:
    """True if ``flag`` is true on any rank (used to stop all ranks at the same step)."""
    if not info.enabled:
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)


def barrier(info: DistInfo) -> None:
    if info.enabled:
        dist.barrier()


def grad_norm_value(norm) -> torch.Tensor:
    """clip_grad_norm_ returns a DTensor under FSDP2; the full scalar either way."""
    return norm.full_tensor() if hasattr(norm, "full_tensor") else norm
