"""The multi-process path: torch FSDP on the same training code.

``torchrun --nproc_per_node N -m swetrain.cli train ...`` sets ``WORLD_SIZE``/``RANK``. Then:

* :func:`setup` initialises the process group: NCCL on GPUs, gloo on CPU. The CPU path is what
  the test suite runs on loopback.
* :func:`wrap` shards the policy with FSDP: full-precision master weights, bf16 compute via
  autocast on CUDA.
* Each rank rolls out its share of the step's tasks into its own trajectory store.
* :func:`all_reduce_sum` makes the loss normalisation global, so micro-batch weights stay exact.
  :func:`all_reduce_max` lets ranks agree on how many forward passes to run: every FSDP forward
  all-gathers parameters, so all ranks must run the same number of them.
* :func:`full_state_dict` / :func:`full_optim_state_dict` gather unsharded weights and optimizer
  state for checkpoints and weight sync. :func:`load_full_state` scatters them back on resume.

A single-process run (the default) returns ``world_size == 1`` and none of this runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class DistInfo:
    world_size: int = 1
    rank: int = 0
    local_rank: int = 0
    fsdp: bool = False
    device: str = "cpu"

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def setup(mode: str = "auto") -> DistInfo:
    """Initialise torch.distributed when launched by torchrun with > 1 ranks (``mode`` != off)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if mode == "off" or (mode == "auto" and world <= 1):
        return DistInfo()
    if world <= 1 and mode == "on":
        raise RuntimeError("train.fsdp=on needs a multi-process launch (torchrun --nproc_per_node N ...)")
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        backend, device = "nccl", f"cuda:{local_rank}"
    else:
        backend, device = "gloo", "cpu"
    if not dist.is_initialized():
        dist.init_process_group(backend)
    return DistInfo(world_size=dist.get_world_size(), rank=dist.get_rank(), local_rank=local_rank, fsdp=True,
                    device=device)


def wrap(model: torch.nn.Module, info: DistInfo) -> torch.nn.Module:
    """Shard ``model`` with FSDP (one unit per decoder layer when the layer class is found)."""
    if not info.fsdp:
        return model
    import functools

    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

    layer_classes = {type(m) for m in model.modules() if type(m).__name__.endswith("DecoderLayer")}
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls=layer_classes) if layer_classes else None
    return FSDP(model, auto_wrap_policy=policy, device_id=torch.device(info.device), use_orig_params=True)


def _full_state_config(info: DistInfo):
    from torch.distributed.fsdp import FullOptimStateDictConfig, FullStateDictConfig

    offload = info.device != "cpu"  # CPU ranks already hold CPU tensors (offloading them crashes)
    return (FullStateDictConfig(offload_to_cpu=offload, rank0_only=False),
            FullOptimStateDictConfig(offload_to_cpu=offload, rank0_only=False))


def full_state_dict(model: torch.nn.Module, info: DistInfo) -> dict[str, torch.Tensor]:
    """The unsharded state dict (gathered to every rank under FSDP) for weight sync / saving."""
    if not info.fsdp:
        return {k: v.detach() for k, v in model.state_dict().items()}
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import StateDictType

    model_cfg, optim_cfg = _full_state_config(info)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, model_cfg, optim_cfg):
        return model.state_dict()


def full_optim_state_dict(model: torch.nn.Module, optimizer: torch.optim.Optimizer, info: DistInfo) -> dict[str, Any]:
    """The optimizer state keyed by parameter name and unsharded (a collective under FSDP)."""
    if not info.fsdp:
        return optimizer.state_dict()
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import StateDictType

    model_cfg, optim_cfg = _full_state_config(info)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, model_cfg, optim_cfg):
        return FSDP.optim_state_dict(model, optimizer)


def load_full_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer | None, weights: dict[str, torch.Tensor],
                    optim_state: dict[str, Any] | None, info: DistInfo) -> tuple[list[str], list[str]]:
    """Load full (unsharded) weights and optimizer state; returns (missing, unexpected) keys."""
    if not info.fsdp:
        result = model.load_state_dict(weights, strict=False)
        if optimizer is not None and optim_state is not None:
            optimizer.load_state_dict(optim_state)
        return list(result.missing_keys), list(result.unexpected_keys)
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import StateDictType

    model_cfg, optim_cfg = _full_state_config(info)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, model_cfg, optim_cfg):
        result = model.load_state_dict(weights, strict=False)
        if optimizer is not None and optim_state is not None:
            optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, optim_state))
    return list(result.missing_keys), list(result.unexpected_keys)


def _reducer(info: DistInfo, op_name: str) -> Any:
    if not info.fsdp:
        return None
    import torch.distributed as dist

    op = getattr(dist.ReduceOp, op_name)

    def reduce(t: torch.Tensor) -> torch.Tensor:
        t = t.detach().clone().to(info.device)
        dist.all_reduce(t, op=op)
        return t

    return reduce


def all_reduce_sum(info: DistInfo) -> Any:
    """``tensor -> sum over ranks`` (None in a single process)."""
    return _reducer(info, "SUM")


def all_reduce_max(info: DistInfo) -> Any:
    """``tensor -> max over ranks`` (None in a single process)."""
    return _reducer(info, "MAX")


def gather_objects(obj: Any, info: DistInfo) -> list[Any]:
    if not info.fsdp:
        return [obj]
    import torch.distributed as dist

    out: list[Any] = [None] * info.world_size
    dist.all_gather_object(out, obj)
    return out
