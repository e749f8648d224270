"""Resolve a policy spec of a recipe (``policy: ...``) to a local transformers model folder.

* a folder with ``config.json``: used as is;
* ``tiny``: the tiny default model, randomly initialised (``swetrain.policy.tiny.ensure_tiny``);
* ``tiny-sft``: the tiny model warm-started by SFT on the shipped scripted repair demonstrations
  of the built-in train split (``swetrain/train/data/demos.jsonl``). The package ships that model
  (``swetrain/train/data/tiny-sft``, trained once offline with ``swetrain train warmstart --ship``);
  without it the SFT runs on first use and is cached (see :mod:`swetrain.train.warmstart`);
* ``tiny-sft-build``: always the locally built (cached) warm start, never the shipped one;
* ``smollm2`` / ``smollm2-sft``: SmolLM2-135M-Instruct converted by the policy layer, and its SFT
  warm start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def resolve_policy_path(spec: str, *, progress: Any = False) -> Path:
    """The local model folder of ``spec`` (any :mod:`swetrain.policy.spec` spec that has weights:
    a folder, ``hf:PATH``, ``tiny``, ``tiny-sft``, ``smollm2``, ...). Raises
    :class:`~swetrain.policy.spec.PolicySpecError` (a ``ValueError``) naming the spec otherwise."""
    from swetrain.policy.spec import parse_policy_spec

    return parse_policy_spec(spec).model_path(progress=progress)


def named_checkpoint(name: str, *, progress: Any = False) -> Path:
    """``tiny-sft`` (the shipped warm start, else built), ``tiny-sft-build`` (always the locally
    built one) or ``smollm2-sft``: the SFT warm starts of :mod:`swetrain.train.warmstart`."""
    from swetrain.train.warmstart import ensure_warm_start, shipped_warm_start

    if name == "tiny-sft":
        shipped = shipped_warm_start()
        if shipped is not None:
            return shipped
    if name not in ("tiny-sft", "tiny-sft-build", "smollm2-sft"):
        raise ValueError(f"policy {name!r}: not a named warm start (tiny-sft, tiny-sft-build, smollm2-sft)")
    return ensure_warm_start(name.removesuffix("-build").removesuffix("-sft"), progress=progress)

