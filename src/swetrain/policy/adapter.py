"""Low-rank weight deltas: a fine-tune stored as a small adapter over the base it was tuned from.

A fine-tune of a 135M model is 270 MB in bfloat16, too big to ship as package data; the difference
it makes to each weight matrix is close to low rank. :func:`extract_adapter` factors each changed
matrix's difference ``W_tuned - W_base`` by a truncated SVD, ``U_r diag(S_r) V_r^T = B A`` with
``B = U_r diag(sqrt S_r)`` (out x r) and ``A = diag(sqrt S_r) V_r^T`` (r x in) (the LoRA form of
Hu et al. 2021, eq. 3, ``W = W_0 + B A``, here obtained after training rather than trained), and keeps
every other changed tensor (norm weights, biases) whole. :func:`merge_adapter` adds ``B A`` back.
Files are safetensors with the metadata (rank, base name, figures) in their header.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ADAPTER_FILE = "adapter.safetensors"
_A, _B, _FULL = ".lora_A", ".lora_B", ".delta"


class AdapterError(ValueError):
    """An adapter that does not fit the model it is merged into, or an unreadable adapter file."""


def extract_adapter(base: Mapping[str, Any], tuned: Mapping[str, Any], rank: int, *, dtype: Any = None,
                    min_change: float = 0.0) -> tuple[dict[str, Any], dict[str, float]]:
    """(adapter tensors, relative error per factored matrix) of ``tuned`` over ``base`` (state dicts
    with the same keys and shapes). 2-D tensors become rank-``rank`` factors, other changed tensors a
    full delta; tensors whose change is at most ``min_change`` times their norm are left out.
    The error of a matrix is ``|D - B A|_F / |D|_F`` for its delta ``D``."""
    import torch

    if rank < 1:
        raise AdapterError(f"rank {rank}: must be at least 1")
    missing = sorted(set(base) ^ set(tuned))
    if missing:
        raise AdapterError(f"base and tuned state dicts differ in keys: {', '.join(missing[:5])}")
    out: dict[str, Any] = {}
    errors: dict[str, float] = {}
    for name in sorted(tuned):
        w0, w1 = base[name], tuned[name]
        if w0.shape != w1.shape:
            raise AdapterError(f"{name}: base shape {tuple(w0.shape)} vs tuned {tuple(w1.shape)}")
        delta = w1.detach().float() - w0.detach().float()
        norm = float(delta.norm())
        if norm == 0.0 or norm <= min_change * float(w0.detach().float().norm()):
            continue
        store = dtype or w1.dtype
        if delta.dim() != 2 or rank >= min(delta.shape):
            out[name + _FULL] = delta.to(store).contiguous()
            continue
        u, s, vh = torch.linalg.svd(delta, full_matrices=False)
        root = s[:rank].sqrt()
        b, a = u[:, :rank] * root, root[:, None] * vh[:rank]
        errors[name] = float((delta - b @ a).norm() / norm)
        out[name + _B] = b.to(store).contiguous()
        out[name + _A] = a.to(store).contiguous()
    return out, errors


def merge_adapter(model: Any, adapter: Mapping[str, Any]) -> int:
    """Add ``adapter`` to ``model``'s parameters in place (float32 arithmetic); returns how many
    tensors changed. Every adapter entry must name a parameter of the model with a fitting shape."""
    import torch

    params = dict(model.named_parameters())
    params.update({k: v for k, v in model.named_buffers() if k not in params})
    names = {k[: -len(suffix)] for k in adapter for suffix in (_A, _B, _FULL) if k.endswith(suffix)}
    unknown = sorted(k for k in adapter if not k.endswith((_A, _B, _FULL)))
    if unknown:
        raise AdapterError(f"adapter entries without .lora_A/.lora_B/.delta: {', '.join(unknown[:5])}")
    with torch.no_grad():
        for name in sorted(names):
            if name not in params:
                raise AdapterError(f"adapter entry {name!r} names no parameter of the model")
            target = params[name]
            if name + _FULL in adapter:
                delta = adapter[name + _FULL].float()
            elif name + _A in adapter and name + _B in adapter:
                delta = adapter[name + _B].float() @ adapter[name + _A].float()
            else:
                raise AdapterError(f"adapter entry {name!r}: needs both .lora_A and .lora_B, or .delta")
            if tuple(delta.shape) != tuple(target.shape):
                raise AdapterError(f"adapter entry {name!r}: shape {tuple(delta.shape)} does not fit the model's {tuple(target.shape)}")
            target.copy_((target.float() + delta.to(target.device)).to(target.dtype))
    return len(names)


def save_adapter(folder: str | Path, tensors: Mapping[str, Any], meta: Mapping[str, Any]) -> Path:
    """Write ``folder/adapter.safetensors`` with ``meta`` (JSON) in its header."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_file(dict(tensors), str(folder / ADAPTER_FILE), metadata={"swetrain_adapter": json.dumps(dict(meta), sort_keys=True)})
    return folder / ADAPTER_FILE


def load_adapter(folder: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(tensors, meta) of an adapter written by :func:`save_adapter`."""
    from safetensors import SafetensorError, safe_open

    path = Path(folder) / ADAPTER_FILE
    if not path.is_file():
        raise AdapterError(f"{path}: no adapter file")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {}).get("swetrain_adapter", "{}"))
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except (OSError, ValueError, SafetensorError) as exc:
        raise AdapterError(f"{path}: not a readable adapter ({exc})") from exc
    return tensors, meta
