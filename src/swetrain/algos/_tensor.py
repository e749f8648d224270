"""Input coercion and validation shared by the algos modules (no math here).

Every public function in :mod:`swetrain.algos` accepts torch tensors, numpy arrays or nested
Python sequences. These helpers turn them into tensors on the caller's device, with an error that
names the offending argument when the input is malformed.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import torch

Tensorish = Any  # torch.Tensor | numpy.ndarray | nested sequence of numbers


def as_float(x: Tensorish, name: str, *, like: torch.Tensor | None = None) -> torch.Tensor:
    """Return ``x`` as a floating tensor (float64 stays float64, integers/bools become float32).

    ``like`` gives the device (and floating dtype, when ``x`` is not already floating) to use.
    """
    try:
        t = torch.as_tensor(x, device=None if like is None else like.device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"{name}: cannot be converted to a tensor ({exc})") from None
    if not torch.is_floating_point(t):
        if t.dtype == torch.complex64 or t.dtype == torch.complex128:
            raise ValueError(f"{name}: complex values are not supported")
        dtype = like.dtype if like is not None and torch.is_floating_point(like) else torch.float32
        t = t.to(dtype)
    return t


def as_bool(x: Tensorish, name: str, *, like: torch.Tensor | None = None) -> torch.Tensor:
    """Return ``x`` as a bool tensor; numeric inputs must contain only 0 and 1."""
    try:
        t = torch.as_tensor(x, device=None if like is None else like.device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"{name}: cannot be converted to a tensor ({exc})") from None
    if t.dtype == torch.bool:
        return t
    if torch.is_floating_point(t) and torch.isnan(t).any():
        raise ValueError(f"{name}: a mask must not contain NaN")
    if t.numel() and not ((t == 0) | (t == 1)).all():
        raise ValueError(f"{name}: a mask must contain only 0/1 or True/False values")
    return t.bool()


def check_ndim(t: torch.Tensor, ndim: int, name: str, shape_doc: str) -> None:
    if t.dim() != ndim:
        raise ValueError(f"{name}: expected shape {shape_doc} ({ndim}-D), got {tuple(t.shape)}")


def check_same_shape(ref: torch.Tensor, ref_name: str, **others: torch.Tensor) -> None:
    for name, t in others.items():
        if t.shape != ref.shape:
            raise ValueError(
                f"{name}: shape {tuple(t.shape)} does not match {ref_name} shape {tuple(ref.shape)}"
            )


def group_index(group_ids: Tensorish | Sequence[Hashable], n: int, device: torch.device) -> tuple[torch.Tensor, int]:
    """Map ``group_ids`` (hashables or an integer tensor, length ``n``) to dense ids 0..n_groups-1.

    Returns ``(index[N] long tensor on device, n_groups)``.
    """
    numeric_np = type(group_ids).__module__ == "numpy" and getattr(group_ids, "dtype", None) is not None and (
        group_ids.dtype.kind in "iub"
    )
    if isinstance(group_ids, torch.Tensor) or numeric_np:
        t = torch.as_tensor(group_ids)
        if t.dim() != 1 or t.shape[0] != n:
            raise ValueError(f"group_ids: expected shape [{n}], got {tuple(t.shape)}")
        if torch.is_floating_point(t) or t.dtype == torch.bool:
            if t.dtype != torch.bool and not torch.equal(t, t.round()):
                raise ValueError("group_ids: a tensor of group ids must hold integers")
        if n == 0:
            return torch.zeros(0, dtype=torch.long, device=device), 0
        uniq, inverse = torch.unique(t.to(device), return_inverse=True)
        return inverse.long(), int(uniq.numel())
    try:
        ids = list(group_ids)
    except TypeError:
        raise ValueError("group_ids: expected a sequence of hashables or an integer tensor") from None
    if len(ids) != n:
        raise ValueError(f"group_ids: expected {n} entries (one per reward), got {len(ids)}")
    dense: dict[Hashable, int] = {}
    out = []
    for g in ids:
        try:
            out.append(dense.setdefault(g, len(dense)))
        except TypeError:
            raise ValueError(f"group_ids: entry {g!r} is not hashable") from None
    return torch.tensor(out, dtype=torch.long, device=device), len(dense)
