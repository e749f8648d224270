"""The multi-GPU path: torch FSDP on the same training code, never touched by CPU runs.

``torchrun --nproc_per_node N -m swetrain train ...`` sets ``WORLD_SIZE``/``RANK``; then
:func:`setup` initialises NCCL, :func:`wrap` shards the policy with FSDP (full-precision master
weights, bf16 compute via autocast), each rank rolls out its share of the step's tasks, and
:func:`all_reduce_sum` makes the loss normalisation global so micro-batch weights stay exact.
A single-process run (the CPU default) returns ``world_size == 1`` and none of this runs.
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
    if not torch.cuda.is_available():
        raise RuntimeError("train.fsdp: FSDP training needs CUDA devices; use train.fsdp=off on CPU")
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        dist.init_process_group("nccl")
    return DistInfo(world_size=dist.get_world_size(), rank=dist.get_rank(), local_rank=local_rank, fsdp=True)


def wrap(model: torch.nn.Module, info: DistInfo) -> torch.nn.Module:
    """Shard ``model`` with FSDP (one unit per decoder layer when the layer class is found)."""
    if not info.fsdp:
        return model
    import functools

    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

    layer_classes = {type(m) for m in model.modules() if type(m).__name__.endswith("DecoderLayer")}
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls=layer_classes) if layer_classes else None
    return FSDP(model, auto_wrap_policy=policy, device_id=torch.cuda.current_device(), use_orig_params=True)


def full_state_dict(model: torch.nn.Module, info: DistInfo) -> dict[str, torch.Tensor]:
    """The unsharded state dict (gathered to every rank under FSDP) for weight sync / saving."""
    if not info.fsdp:
        return {k: v.detach() for k, v in model.state_dict().items()}
    from torch.distributed.fsdp import FullStateDictConfig, StateDictType
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=False)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        return model.state_dict()


def all_reduce_sum(info: DistInfo) -> Any:
    if not info.fsdp:
        return None
    import torch.distributed as dist

    def reduce(t: torch.Tensor) -> torch.Tensor:
        t = t.clone().cuda()
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t

    return reduce


def gather_objects(obj: Any, info: DistInfo) -> list[Any]:
    if not info.fsdp:
        return [obj]
    import torch.distributed as dist

    out: list[Any] = [None] * info.world_size
    dist.all_gather_object(out, obj)
    return out
