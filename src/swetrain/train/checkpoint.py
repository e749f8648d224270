"""Atomic checkpoints of an RL/SFT run and the resume bookkeeping.

Layout: ``RUN_DIR/checkpoints/step-00000N/`` holds ``model/`` (transformers ``save_pretrained``:
safetensors weights, config, tokenizer), ``optimizer.pt``, ``scheduler.pt``, ``rng.pt`` (torch,
CUDA, Python and NumPy RNG states) and ``state.json`` (step, data cursor, trajectory-store offset,
metrics line count, ...). A checkpoint is written into a temporary folder and renamed into place,
then ``RUN_DIR/checkpoints/latest.json`` is replaced atomically: a kill -9 at any moment leaves
either the previous or the new checkpoint, never a partial one.

A write that fails (the disk filling up: :class:`~swetrain.rollout.store.DiskFullError`, naming the
path and saying "disk full"; any other error: :class:`CheckpointError`) removes what it wrote and
leaves ``latest.json`` and the previous checkpoint untouched, so the run resumes from it.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

import torch

_STEP = re.compile(r"^step-(\d{8})$")


class CheckpointError(RuntimeError):
    """A checkpoint could not be written or read; the message names the path."""


def write_json_atomic(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _torch_save(obj: Any, path: Path) -> None:
    """``torch.save`` through a file we close ourselves: after a failed write (disk full) the
    traceback keeps torch's writer alive, and with it, had torch opened the file, the space of the
    deleted half-written file."""
    with open(path, "wb") as fh:
        torch.save(obj, fh)


def _write_failed(exc: BaseException, what: str, path: Path) -> Exception:
    """The named error for a failed checkpoint write: DiskFullError when space ran out."""
    from swetrain.rollout.store import disk_full_error

    full = disk_full_error(exc, what, path)
    if full is not None:
        return full
    return CheckpointError(f"could not write {what} {path}: {type(exc).__name__}: {exc}")


def rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    try:
        import numpy as np

        state["numpy"] = np.random.get_state()
    except ImportError:  # pragma: no cover
        pass
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "numpy" in state:
        import numpy as np

        np.random.set_state(state["numpy"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoint_dir(run_dir: Path, step: int) -> Path:
    return Path(run_dir) / "checkpoints" / f"step-{step:08d}"


def save_checkpoint(
    run_dir: Path,
    step: int,
    *,
    model: Any,
    tokenizer: Any = None,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any = None,
    state: dict[str, Any],
    keep: int = 2,
    model_state_dict: dict[str, torch.Tensor] | None = None,
    optimizer_state: dict[str, Any] | None = None,
) -> Path:
    """Write checkpoint ``step`` atomically, point ``latest.json`` at it, prune old ones."""
    root = Path(run_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    final = checkpoint_dir(run_dir, step)
    tmp = root / f".step-{step:08d}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        kwargs: dict[str, Any] = {"safe_serialization": True}
        if model_state_dict is not None:
            kwargs["state_dict"] = model_state_dict
        model.save_pretrained(tmp / "model", **kwargs)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp / "model")
        if optimizer_state is not None or optimizer is not None:  # FSDP passes the gathered full state
            _torch_save(optimizer_state if optimizer_state is not None else optimizer.state_dict(), tmp / "optimizer.pt")
        if scheduler is not None:
            _torch_save(scheduler.state_dict(), tmp / "scheduler.pt")
        _torch_save(rng_state(), tmp / "rng.pt")
        write_json_atomic(tmp / "state.json", {**state, "step": step})
        for path in tmp.rglob("*"):
            if path.is_file():
                with open(path, "rb") as fh:
                    os.fsync(fh.fileno())
    except Exception as exc:  # nothing of this step is published: the previous checkpoint stays latest
        err = _write_failed(exc, f"checkpoint step {step} to", tmp)  # judged before the space is freed
        shutil.rmtree(tmp, ignore_errors=True)
        raise err from exc
    replaced = final.exists()
    if replaced:  # a re-run of the same step after a resume: replace it
        shutil.rmtree(final)
    os.replace(tmp, final)
    try:
        write_json_atomic(root / "latest.json", {"step": step, "path": final.name})
    except Exception as exc:  # latest.json still names the previous checkpoint: drop the new one
        err = _write_failed(exc, "checkpoint pointer", root / "latest.json")
        if not replaced:
            shutil.rmtree(final, ignore_errors=True)
        raise err from exc
    _prune(root, keep, protect=final)
    return final


def _prune(root: Path, keep: int, protect: Path) -> None:
    steps = sorted((int(m.group(1)), p) for p in root.iterdir() if (m := _STEP.match(p.name)))
    for _, path in steps[:-keep]:
        if path != protect:
            shutil.rmtree(path, ignore_errors=True)
    for stale in root.glob(".step-*.tmp"):
        shutil.rmtree(stale, ignore_errors=True)


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint ``latest.json`` names (None when the run has none)."""
    root = Path(run_dir) / "checkpoints"
    pointer = root / "latest.json"
    if not pointer.is_file():
        return None
    try:
        name = json.loads(pointer.read_text())["path"]
    except (json.JSONDecodeError, KeyError) as exc:
        raise RuntimeError(f"{pointer}: unreadable checkpoint pointer ({exc})") from None
    path = root / name
    if not (path / "state.json").is_file():
        raise RuntimeError(f"{pointer} names {path}, which has no state.json")
    return path


def load_state(ckpt: Path) -> dict[str, Any]:
    return json.loads((Path(ckpt) / "state.json").read_text())


def load_training_state(ckpt: Path, optimizer: Any = None, scheduler: Any = None, restore_rng: bool = True) -> dict[str, Any]:
    """Restore optimizer/scheduler/RNG from ``ckpt`` (weights are loaded by the caller)."""
    ckpt = Path(ckpt)
    if optimizer is not None and (ckpt / "optimizer.pt").is_file():
        optimizer.load_state_dict(torch.load(ckpt / "optimizer.pt", weights_only=False))
    if scheduler is not None and (ckpt / "scheduler.pt").is_file():
        scheduler.load_state_dict(torch.load(ckpt / "scheduler.pt", weights_only=False))
    if restore_rng and (ckpt / "rng.pt").is_file():
        set_rng_state(torch.load(ckpt / "rng.pt", weights_only=False))
    return load_state(ckpt)


def truncate_store(run_dir: Path, offset: int) -> int:
    """Delete trajectory parts holding rows beyond ``offset`` (rows written after the checkpoint).

    Parts are whole steps' outputs, so the offset always falls on a part boundary; a part that
    straddles it is an error (the store was written by something else). Returns rows removed.
    """
    import pyarrow.parquet as pq

    from swetrain.rollout.store import StoreError

    tdir = Path(run_dir) / "trajectories"
    if not tdir.is_dir():
        return 0
    for stale in tdir.glob(".part-*.tmp"):
        stale.unlink(missing_ok=True)
    parts = sorted(tdir.glob("part-*.parquet"))
    seen = removed = 0
    for part in parts:
        try:
            n = pq.ParquetFile(part).metadata.num_rows
        except Exception as exc:  # noqa: BLE001 - truncated / corrupt: its footer cannot be read
            if seen >= offset:  # written after the checkpoint (the step is re-run): drop it
                part.unlink()
                continue
            # parts are never empty, so this part holds row ``seen`` < offset: rows the checkpoint counted
            raise StoreError(
                f"trajectory part {part} is unreadable (corrupt or truncated, {part.stat().st_size} bytes: {exc}) "
                f"and holds rows from {seen} on, before the checkpoint's offset {offset}; cannot resume cleanly"
            ) from exc
        if seen >= offset:
            part.unlink()
            removed += n
        elif seen + n > offset:
            raise RuntimeError(f"trajectory part {part} straddles the checkpoint offset {offset}; cannot resume cleanly")
        seen += n
    if seen < offset:
        raise RuntimeError(f"trajectory store in {tdir} has {seen} rows, fewer than the checkpoint's offset {offset}")
    return removed


def truncate_jsonl(path: Path, keep: int) -> None:
    """Keep the first ``keep`` lines of a JSONL file (atomically)."""
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    complete = [ln for ln in lines if ln.endswith("\n")]
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("".join(complete[:keep]), encoding="utf-8")
    os.replace(tmp, path)
