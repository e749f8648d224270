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


def resolve_policy_path(spec: str, *, progress: bool = False) -> Path:
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"policy {spec!r}: folder has no config.json (not a transformers model)")
        return path.resolve()
    if spec == "tiny":
        from swetrain.policy.tiny import ensure_tiny

        return ensure_tiny()
    if spec == "tiny-sft":
        from swetrain.train.warmstart import shipped_warm_start

        shipped = shipped_warm_start()
        if shipped is not None:
            return shipped
    if spec in ("tiny-sft", "tiny-sft-build", "smollm2-sft"):
        from swetrain.train.warmstart import ensure_warm_start

        return ensure_warm_start(spec.removesuffix("-build").removesuffix("-sft"), progress=progress)
    if spec == "smollm2":
        return smollm2_path()
    raise ValueError(
        f"policy {spec!r}: not a model folder and not one of tiny, tiny-sft, tiny-sft-build, smollm2, smollm2-sft"
    )


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct as a transformers folder, via the policy layer's converter."""
    from swetrain.policy.smollm2 import ensure_smollm2

    return Path(ensure_smollm2())
