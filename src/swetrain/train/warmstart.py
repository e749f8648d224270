"""The SFT warm start of a CPU base policy: scripted repair demonstrations -> SFT -> cached model.

``ensure_warm_start("tiny")`` (or ``"smollm2"``) builds once and caches under
``swetrain.paths.cache_dir("policies")``:

1. demonstrations: :func:`swetrain.agent.scripted_repair.demonstrate` on tasks of the built-in
   TRAIN split (the scripted agent searches a fix by running the tests; it never reads the gold
   patch), replayed through the real agent loop; kept only when the verifier resolves them;
2. :class:`~swetrain.train.sft.SFTTrainer` on those trajectories (loss on assistant tokens only);
3. the fine-tuned model, saved in the transformers format next to ``demos/`` (Parquet) and
   ``warmstart.json`` (what was done, with timings and the final loss).

A file lock makes concurrent builders wait for one build.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

WARMSTART_VERSION = 1


@dataclass
class WarmStartConfig:
    max_demos: int = 64  # tasks of the train split tried (in a fixed, seeded order)
    workers: int = 2
    max_candidates: int = 40
    epochs: int = 40
    lr: float = 2e-3
    batch_tokens: int = 4096  # ~2 demonstrations per optimizer step
    micro_batch_tokens: int = 8192
    seed: int = 0
    tasks_file: str | None = None  # a built-in-format tasks.jsonl instead of the shipped suite


PRESET_CONFIGS = {
    "tiny": WarmStartConfig(),
    "smollm2": WarmStartConfig(max_demos=32, epochs=2, lr=5e-5, batch_tokens=8192, micro_batch_tokens=4096),
}


def warm_start_path(base: str, config: WarmStartConfig | None = None) -> Path:
    from swetrain.paths import cache_dir

    cfg = config or PRESET_CONFIGS[base]
    tag = f"{base}-sft-v{WARMSTART_VERSION}-d{cfg.max_demos}-e{cfg.epochs}-s{cfg.seed}"
    if cfg.tasks_file:
        import hashlib

        tag += "-" + hashlib.sha1(str(Path(cfg.tasks_file).resolve()).encode()).hexdigest()[:8]
    return cache_dir("policies") / tag


def _base_path(base: str) -> Path:
    from swetrain.train.policy_spec import resolve_policy_path

    if base not in PRESET_CONFIGS:
        raise ValueError(f"warm start base {base!r}: choose one of {', '.join(PRESET_CONFIGS)}")
    return resolve_policy_path(base)


def collect_demonstrations(
    tasks: list[Any], tokenizer: Any, config: WarmStartConfig, progress: Any = None, verifier: Any = None
) -> tuple[list[Any], dict[str, str]]:
    """Resolved demonstration trajectories of ``tasks`` (and why the others were dropped)."""
    from swetrain.agent.scripted_repair import demonstrate

    if verifier is None:
        try:
            from swetrain.env.verifier import Verifier

            verifier = Verifier()
        except ImportError:  # the env layer has no verifier yet: demonstrate() checks with pytest
            verifier = None
    dropped: dict[str, str] = {}
    demos: list[Any] = []
    task_bar = progress.add_task("scripted repair demos", total=len(tasks)) if progress else None

    def one(task: Any):
        try:
            return demonstrate(task, tokenizer, verifier=verifier, max_candidates=config.max_candidates)
        except Exception as exc:  # noqa: BLE001 - one broken task never stops the warm start
            from swetrain.agent.scripted_repair import Demonstration

            return Demonstration(task.instance_id, None, None, f"error: {exc}")

    with ThreadPoolExecutor(max_workers=config.workers) as pool:
        for demo in pool.map(one, tasks):
            if demo.trajectory is not None and demo.reason == "ok":
                demos.append(demo.trajectory)
            else:
                dropped[demo.instance_id] = demo.reason
            if progress:
                progress.advance(task_bar)
    return demos, dropped


def ensure_warm_start(
    base: str = "tiny", *, config: WarmStartConfig | None = None, progress: bool | Any = False, force: bool = False
) -> Path:
    """The cached SFT warm start of ``base`` ("tiny" or "smollm2"), built on first use."""
    import fcntl
    import random

    cfg = config or PRESET_CONFIGS[base]
    out = warm_start_path(base, cfg)
    if (out / "warmstart.json").is_file() and not force:
        return out
    lock = out.with_name(out.name + ".lock")
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if (out / "warmstart.json").is_file() and not force:
            return out
        bar = _progress(progress)
        with bar if bar is not None else nullcontext():
            _build(base, cfg, out, bar)
    return out


def _progress(progress: bool | Any):
    if progress is True:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return progress or None


def _build(base: str, cfg: WarmStartConfig, out: Path, progress: Any) -> None:
    import random

    from swetrain.policy.threads import configure_torch_threads
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.tasks.builtin import load_builtin
    from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft

    configure_torch_threads()
    started = time.monotonic()
    base_path = _base_path(base)
    tasks = list(load_builtin(split="train", **({"path": cfg.tasks_file} if cfg.tasks_file else {})))
    random.Random(cfg.seed).shuffle(tasks)
    tasks = tasks[: cfg.max_demos]
    trainer = SFTTrainer.from_pretrained(
        base_path,
        SFTConfig(epochs=cfg.epochs, lr=cfg.lr, batch_tokens=cfg.batch_tokens, micro_batch_tokens=cfg.micro_batch_tokens, seed=cfg.seed),
    )
    tmp = out.with_name(f".{out.name}.{os.getpid()}.building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    t0 = time.monotonic()
    demos, dropped = collect_demonstrations(tasks, trainer.tokenizer, cfg, progress)
    demo_s = time.monotonic() - t0
    if not demos:
        raise RuntimeError(f"warm start {base}: the scripted agent resolved none of {len(tasks)} train tasks: {dropped}")
    TrajectoryStore(tmp / "demos").append(demos)
    samples = [sample_for_sft(t) for t in demos]
    before = trainer.evaluate(samples)
    bar = progress.add_task(f"SFT {base} on {len(demos)} demos", total=None) if progress else None

    def on_step(step: int, total: int, metrics: dict[str, float]) -> None:
        if progress:
            progress.update(bar, total=total, completed=step, description=f"SFT {base} loss {metrics['loss']:.3f}")

    t1 = time.monotonic()
    last = trainer.train(samples, on_step)
    sft_s = time.monotonic() - t1
    after = trainer.evaluate(samples)
    trainer.save(tmp / "model_tmp")
    for item in (tmp / "model_tmp").iterdir():
        shutil.move(str(item), tmp / item.name)
    (tmp / "model_tmp").rmdir()
    info = {
        "kind": "swetrain-warmstart",
        "version": WARMSTART_VERSION,
        "base": base,
        "base_path": str(base_path),
        "config": asdict(cfg),
        "tasks_tried": len(tasks),
        "demonstrations": len(demos),
        "dropped": dropped,
        "demo_tokens": sum(len(t.token_ids) for t in demos),
        "assistant_tokens": sum(sum(t.assistant_mask) for t in demos),
        "nll_before": before,
        "nll_after": after,
        "final_train_metrics": last,
        "demo_seconds": round(demo_s, 1),
        "sft_seconds": round(sft_s, 1),
        "total_seconds": round(time.monotonic() - started, 1),
    }
    (tmp / "warmstart.json").write_text(json.dumps(info, indent=2) + "\n")
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    log.info("warm start %s: %d demos, NLL %.3f -> %.3f, %.0fs", base, len(demos), before, after, info["total_seconds"])
