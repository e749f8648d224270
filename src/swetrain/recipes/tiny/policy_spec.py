"""The named checkpoints of this recipe, as :mod:`swetrain.policy.spec` resolves them by import string
(``NAMED``: ``"swetrain.recipes.tiny.policy_spec:named_checkpoint"``):

* ``tiny-sft``: the tiny model warm-started by SFT on the shipped scripted repair demonstrations
  of the built-in train split (``swetrain/recipes/tiny/data/demos.jsonl``). The package ships that model
  (``swetrain/recipes/tiny/data/tiny-sft``, trained once offline with ``swetrain warmstart --ship``);
  without it the SFT runs on first use and is cached (see :mod:`swetrain.recipes.tiny.warmstart`);
* ``tiny-sft-build``: always the locally built (cached) warm start, never the shipped one;
* ``small-sft``: the same recipe on the wider ``small`` tiny preset (``data/small-sft`` when shipped,
  else built on first use and cached);
* ``smollm2-sft``: the SFT warm start of SmolLM2-135M-Instruct (converted by the policy layer);
* ``smollm2-easy-sft``: SmolLM2-135M-Instruct after one short pass over the crash-tier
  demonstrations plus 40 standard ones (issue 31's rung: docs/agent.md). It ships as a low-rank
  adapter (``data/smollm2-easy-sft.adapter``, :mod:`swetrain.recipes.tiny.shipped_adapter`) merged
  into the converted base on first use; without it the SFT runs on first use and is cached;
* ``smollm2-easy-sft-build``: always the full fine-tune built locally (cached), never the adapter.

Any other spec (a folder, ``tiny``, ``smollm2``, ``hf:PATH``) resolves without this recipe:
:func:`swetrain.policy.spec.resolve_policy_path`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swetrain.policy.spec import NAMED

#: the names the policy layer resolves through this module (its ``NAMED`` table is the one list)
NAMES = tuple(name for name, target in NAMED.items() if target.partition(":")[0] == __name__)


def named_checkpoint(name: str, *, progress: Any = False) -> Path:
    """``tiny-sft`` / ``small-sft`` (the shipped warm start, else built), ``tiny-sft-build`` (always
    the locally built one) or ``smollm2-sft``: the SFT warm starts of :mod:`swetrain.recipes.tiny.warmstart`."""
    from swetrain.recipes.tiny.shipped_adapter import adapter_warm_start
    from swetrain.recipes.tiny.warmstart import SHIPPED, ensure_warm_start, shipped_warm_start

    base = name.removesuffix("-sft")
    merged = adapter_warm_start(base)  # a pretrained base's warm start shipped as an adapter
    if merged is not None:
        return merged
    if base in SHIPPED:
        shipped = shipped_warm_start(SHIPPED[base])
        if shipped is not None:
            return shipped
    if name not in NAMES:
        raise ValueError(f"policy {name!r}: not a named warm start ({', '.join(NAMES)})")
    return ensure_warm_start(name.removesuffix("-build").removesuffix("-sft"), progress=progress)
