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
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    from swetrain.agent.loop import PatchVerifier

log = logging.getLogger(__name__)

WARMSTART_VERSION = 4  # 4: minimal-edit demonstrations and drills


@dataclass
class WarmStartConfig:
    max_demos: int = 64  # shipped demonstrations used, or train tasks searched (fixed, seeded order)
    workers: int = 2
    max_candidates: int = 40
    epochs: int = 40
    lr: float = 2e-3
    batch_tokens: int = 4096  # ~2 demonstrations per optimizer step
    micro_batch_tokens: int = 8192
    seed: int = 0
    tasks_file: str | None = None  # a built-in-format tasks.jsonl instead of the shipped suite
    # shipped demonstrations (package data) used instead of searching when no tasks_file is given
    use_shipped_demos: bool = True
    # skill drills (swetrain.recipes.tiny.drills) mixed into the SFT data: the demonstrations are
    # repeated ``epochs`` times and the drills shuffled in once (one pass over the mixture)
    drills: int = 0
    # a second SFT pass after the first: this many edit/locate drills rendered as in stage 1 plus
    # ``stage2_demos`` demonstrations (so the episode format is kept), with a fresh schedule.
    # For a pretrained base that already copies, the drills teach a verbatim old_str and the
    # inverse edit (measured for smollm2: docs/training.md)
    stage2_drills: int = 0
    stage2_demos: int = 24
    stage2_seed: int = 3
    # copy pretraining (swetrain.recipes.tiny.copy_pretrain) of a randomly initialised base before SFT:
    # this many steps on the whole vocabulary + real code after the easy phase (0 = off), and this
    # many repeated code spans mixed into the stage-1 SFT data so the circuit survives SFT
    copy_steps: int = 0
    copy_mix: int = 0
    copy_easy_steps: int = 4000  # the most easy-phase steps (it ends when the circuit has formed)
    # copy pretraining's learning rate: 3e-3 forms the tiny model's circuit in ~1,850 easy steps but
    # never formed the wider ``small`` model's in 4,000; 1e-3 formed it in ~600 (docs/training.md)
    copy_lr: float = 3e-3
    # add every crash-tier demonstration (``data/demos_easy.jsonl``: NameError / AttributeError /
    # unexpected keyword, fixed by undoing the typo the traceback names) before the seeded subset
    easy_demos: bool = False
    warmup_steps: int = 5
    # SFT autocast: auto (fp32 on CPU) | bf16 | fp32 | bf16-native (bf16 where the machine computes
    # it natively: a bf16 GPU, an AMX / AVX-512 BF16 / Arm BF16 CPU; fp32 elsewhere)
    precision: str = "auto"


PRESET_CONFIGS = {
    # copy pretraining (2 layers until the induction circuit forms, 3,000 steps on the whole
    # vocabulary + code, grown to 4; ~9 min), then all shipped demonstrations x 8 plus 4,000 skill
    # drills and 6,000 repeated code spans in one shuffled pass (~37 min on 2 cores): trained once
    # offline and shipped as package data (``swetrain warmstart --force --ship``), so the
    # quickstart only loads it
    "tiny": WarmStartConfig(max_demos=1000, epochs=8, drills=4000, lr=3e-3, batch_tokens=4096, copy_steps=3000, copy_mix=6000),
    # the wider-model lever of issue 16: the ``small`` tiny preset (6 layers x 256, 8,192 ids; ~2.4x
    # the tiny model's compute per token) on the same recipe with ~60% of its SFT data, so a build
    # should fit ~70 min on 2 cores (estimated; its copy phase is measured in docs/training.md)
    "small": WarmStartConfig(max_demos=1000, epochs=5, drills=2500, lr=2e-3, batch_tokens=4096, copy_steps=2000, copy_mix=4000,
                             copy_lr=1e-3),
    # a pretrained chat model (it already copies from its context): every shipped demonstration, one
    # pass (~30 min on 2 cores at ~170 tokens/s; 32 demonstrations localised the fix less often),
    # then 250 drills + 24 demonstrations (~25 min): the first base to resolve a held-out task
    "smollm2": WarmStartConfig(max_demos=1000, epochs=1, lr=1e-4, batch_tokens=4096, micro_batch_tokens=4096,
                               stage2_drills=250, stage2_demos=24),
    # the crash-tier rung (issue 31): SmolLM2-135M-Instruct, one pass over the 66 crash-tier
    # demonstrations + 40 standard ones (~25 min on 2 cores at ~160 tokens/s)
    "smollm2-easy": WarmStartConfig(max_demos=40, epochs=1, lr=1e-4, batch_tokens=4096, micro_batch_tokens=4096,
                                    easy_demos=True, warmup_steps=4, precision="bf16-native"),
}


# the policy spec each warm-start base starts from (the name itself when absent)
BASE_SPECS = {"small": "tiny:small", "smollm2-easy": "smollm2"}


def build_precision(precision: str) -> str:
    """The SFT precision a build on this machine uses (``bf16-native`` resolved: bf16 where the
    device computes it natively, else fp32), so the cache key names what was built."""
    if precision != "bf16-native":
        return precision
    import torch

    from swetrain.policy.cpu_features import device_computes_bf16

    return "bf16" if device_computes_bf16(torch.device("cuda" if torch.cuda.is_available() else "cpu")) else "fp32"


def warm_start_path(base: str, config: WarmStartConfig | None = None) -> Path:
    from swetrain.paths import cache_dir

    cfg = config or PRESET_CONFIGS[base]
    tag = f"{base}-sft-v{WARMSTART_VERSION}-d{cfg.max_demos}-e{cfg.epochs}-r{cfg.drills}-s{cfg.seed}"
    if cfg.stage2_drills:
        tag += f"-t{cfg.stage2_drills}x{cfg.stage2_demos}s{cfg.stage2_seed}"
    if cfg.copy_steps or cfg.copy_mix:
        tag += f"-c{cfg.copy_steps}m{cfg.copy_mix}" + (f"e{cfg.copy_easy_steps}" if cfg.copy_easy_steps != WarmStartConfig.copy_easy_steps else "")
        tag += f"lr{cfg.copy_lr:g}" if cfg.copy_lr != WarmStartConfig.copy_lr else ""
    precision = build_precision(cfg.precision)
    if cfg.easy_demos or cfg.warmup_steps != WarmStartConfig.warmup_steps or precision != WarmStartConfig.precision:
        tag += f"-w{cfg.warmup_steps}{precision}" + ("-easy" if cfg.easy_demos else "")
    if cfg.use_shipped_demos and not cfg.tasks_file and DEMOS_FILE.is_file():
        import hashlib

        digest = hashlib.sha1(DEMOS_FILE.read_bytes())
        if cfg.easy_demos:
            digest.update(DEMOS_EASY_FILE.read_bytes())
        tag += "-shipped" + digest.hexdigest()[:8]
    if cfg.tasks_file:
        import hashlib

        tag += "-" + hashlib.sha1(str(Path(cfg.tasks_file).resolve()).encode()).hexdigest()[:8]
    return cache_dir("policies") / tag


def base_model_path(base: str) -> Path:
    """The model folder the warm start of ``base`` starts from (converted or built on first use)."""
    from swetrain.policy.spec import resolve_policy_path

    if base not in PRESET_CONFIGS:
        raise ValueError(f"warm start base {base!r}: choose one of {', '.join(PRESET_CONFIGS)}")
    return resolve_policy_path(BASE_SPECS.get(base, base))


def _demonstrate(task: Any, tokenizer: Any, verifier: PatchVerifier, max_candidates: int, check_suite: bool) -> Any:
    """:func:`~swetrain.agent.scripted_repair.demonstrate`, with an error turned into a dropped task
    (one broken task never stops a search)."""
    from swetrain.agent.scripted_repair import Demonstration, demonstrate

    try:
        return demonstrate(task, tokenizer, verifier=verifier, max_candidates=max_candidates, check_suite=check_suite)
    except Exception as exc:  # noqa: BLE001
        return Demonstration(task.instance_id, None, None, f"error: {exc}")


def collect_demonstrations(
    tasks: list[Any], tokenizer: Any, config: WarmStartConfig, progress: Any = None, verifier: PatchVerifier | None = None
) -> tuple[list[Any], dict[str, str]]:
    """Resolved demonstration trajectories of ``tasks`` (and why the others were dropped)."""
    if verifier is None:
        from swetrain.env.verifier import Verifier

        verifier = Verifier()
    dropped: dict[str, str] = {}
    demos: list[Any] = []
    task_bar = progress.add_task("scripted repair demos", total=len(tasks)) if progress else None

    def one(task: Any):
        return _demonstrate(task, tokenizer, verifier, config.max_candidates, True)

    with ThreadPoolExecutor(max_workers=config.workers) as pool:
        for demo in pool.map(one, tasks):
            if demo.trajectory is not None and demo.reason == "ok":
                demos.append(demo.trajectory)
            else:
                dropped[demo.instance_id] = demo.reason
            if progress:
                progress.advance(task_bar)
    return demos, dropped


DEMOS_FILE = Path(__file__).resolve().parent / "data" / "demos.jsonl"
#: The crash-tier demonstrations (``--regenerate --tier easy``), used by ``easy_demos`` presets.
DEMOS_EASY_FILE = DEMOS_FILE.with_name("demos_easy.jsonl")
#: The tiny warm start trained once offline from the shipped demonstrations (``--ship``), float16.
SHIPPED_TINY = Path(__file__).resolve().parent / "data" / "tiny-sft"
#: Where ``swetrain warmstart --base B --ship`` puts each shippable base's warm start.
SHIPPED = {"tiny": SHIPPED_TINY, "small": SHIPPED_TINY.with_name("small-sft")}


def shipped_warm_start(path: Path = SHIPPED_TINY) -> Path | None:
    """The shipped warm start at ``path`` (default: the tiny one) when it is complete, else None."""
    need = ("config.json", "model.safetensors", "tokenizer.json", "warmstart.json")
    return path if all((path / n).is_file() for n in need) else None


def ship_warm_start(src: str | os.PathLike, dest: str | os.PathLike = SHIPPED_TINY) -> Path:
    """Copy a built warm start into ``dest`` with float16 weights (half the bytes; loaded as float32
    again by every backend), atomically."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src, dest = Path(src), Path(dest)
    info = json.loads((src / "warmstart.json").read_text())
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32).to(torch.float16)
    model.save_pretrained(tmp, safe_serialization=True)
    AutoTokenizer.from_pretrained(src).save_pretrained(tmp)
    info["shipped_dtype"] = "float16"
    # no paths of the machine that built it
    info["base_path"] = os.path.basename(str(info.get("base_path", "")))
    info["demos_source"] = os.path.basename(str(info.get("demos_source", "")))
    (tmp / "warmstart.json").write_text(json.dumps(info, indent=2) + "\n")
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def demo_row(demo: Any, task: Any) -> dict[str, Any]:
    """One shipped demonstration: the plan and the conversation (no system prompt, no token ids)."""
    traj = demo.trajectory
    messages = [
        {"role": m["role"], "content": m["content"]}
        for m in traj.messages
        if m["role"] != "system"
    ]
    return {
        "instance_id": task.instance_id,
        "repo": task.repo,
        "kind": ((task.labels or {}).get("synth") or {}).get("kind") if isinstance(task.labels, dict) else None,
        "plan": demo.plan.to_dict(),
        "messages": messages,
    }


def generate_demos(
    out: str | os.PathLike = DEMOS_FILE,
    *,
    workers: int = 2,
    max_candidates: int = 12,
    tasks_file: str | None = None,
    pool_file: str | None = None,
    verify: bool = True,
    deadline_s: float | None = None,
    check_suite: bool = True,
    resume: bool = False,
    tier: str | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Search and check scripted repair demonstrations for the TRAIN split (plus the tasks of
    ``pool_file``, see :mod:`swetrain.recipes.tiny.demo_pool`); write ``out``.

    Each kept row was replayed through the real agent loop and resolved: by the verifier with
    ``verify``, otherwise by the whole test suite passing after the replay. Tasks are searched in a
    fixed shuffled order; with ``deadline_s`` the search stops starting new tasks after that many
    seconds and keeps what it has. With ``tier`` only train tasks of that tier
    (:func:`swetrain.tasks.record.task_tier`: ``easy`` | ``standard``) are searched. Rows are written sorted by instance id, and the reasons tasks
    were dropped to ``<out>.dropped.json``; with ``resume`` the rows and drops of an earlier run
    into ``out`` are kept and those tasks are not searched again.
    Returns counts and the reasons tasks were dropped.
    """
    import random
    import threading

    from swetrain.agent.scripted_repair import Demonstration
    from swetrain.policy.tiny import ensure_tiny
    from swetrain.tasks.builtin import load_builtin
    from transformers import AutoTokenizer

    tasks = list(load_builtin(split="train", **({"path": tasks_file} if tasks_file else {})))
    if tier is not None:
        from swetrain.tasks.record import task_tier

        tasks = [t for t in tasks if task_tier(t) == tier]
    if pool_file:
        from swetrain.recipes.tiny.demo_pool import load_pool

        tasks += load_pool(pool_file)
    tasks.sort(key=lambda t: t.instance_id)
    random.Random(0).shuffle(tasks)
    tokenizer = AutoTokenizer.from_pretrained(ensure_tiny())
    verifier = None
    if verify:
        from swetrain.env.verifier import Verifier

        verifier = Verifier()
    started = time.monotonic()
    stop = threading.Event()
    bar = progress.add_task("scripted repair demos", total=len(tasks)) if progress else None

    def one(task: Any) -> tuple[Any, Demonstration]:
        if stop.is_set() or (deadline_s is not None and time.monotonic() - started > deadline_s):
            stop.set()
            return task, Demonstration(task.instance_id, None, None, "not searched (deadline)")
        return task, _demonstrate(task, tokenizer, verifier, max_candidates, check_suite)

    out = Path(out)
    dropped_file = out.with_name(out.name + ".dropped.json")
    rows: list[dict[str, Any]] = []
    dropped: dict[str, str] = {}
    if resume and out.is_file():
        rows = load_demos(out)
        if dropped_file.is_file():
            dropped = {k: v for k, v in json.loads(dropped_file.read_text()).items() if v != "not searched (deadline)"}
        done = {r["instance_id"] for r in rows} | set(dropped)
        tasks = [t for t in tasks if t.instance_id not in done]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for task, demo in pool.map(one, tasks):
            if demo.trajectory is not None and demo.reason == "ok":
                rows.append(demo_row(demo, task))
            else:
                dropped[task.instance_id] = demo.reason
            if progress:
                progress.update(bar, advance=1, description=f"scripted repair demos ({len(rows)} kept)")
    rows.sort(key=lambda r: r["instance_id"])
    out.parent.mkdir(parents=True, exist_ok=True)
    for path, text in ((out, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)),
                       (dropped_file, json.dumps(dropped, indent=1, sort_keys=True) + "\n")):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    searched = sum(1 for r in dropped.values() if r != "not searched (deadline)") + len(rows)
    return {"tasks": len(tasks), "searched": searched, "demos": len(rows), "dropped": dropped,
            "seconds": round(time.monotonic() - started, 1)}


def load_demos(path: str | os.PathLike = DEMOS_FILE) -> list[dict[str, Any]]:
    """Rows of a demonstrations file written by :func:`generate_demos` (clear error when broken)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: demonstrations file missing; regenerate with `python -m swetrain.recipes.tiny.warmstart --regenerate`")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc})") from None
        msgs = row.get("messages") if isinstance(row, dict) else None
        if not isinstance(msgs, list) or not msgs or msgs[0].get("role") != "user" or not any(m.get("role") == "assistant" for m in msgs):
            raise ValueError(f"{path}:{n}: a row needs 'messages' starting with the user turn and holding assistant turns")
        rows.append(row)
    return rows


def demo_sample(row: dict[str, Any], chat_format: Any) -> Any:
    """Token ids of a demonstration rendered through the real chat format, exactly as the agent loop
    builds them: prompt, then per assistant turn its ids + end-of-turn (loss mask 1) and the
    template delta of its tool observations (mask 0); nothing after the final turn."""
    from swetrain.train.batch import TrainSample

    msgs = row["messages"]
    fmt = chat_format
    ids = fmt.prompt_ids(fmt.initial_messages(msgs[0]["content"]))
    mask = [0] * len(ids)
    segs = [0] * len(ids)
    i, turn = 1, 0
    while i < len(msgs):
        m = msgs[i]
        if m["role"] != "assistant":
            raise ValueError(f"demonstration {row.get('instance_id')}: message {i} should be an assistant turn, got {m['role']!r}")
        turn += 1
        gen = fmt.encode(m["content"]) + [fmt.eot_id]
        ids += gen
        mask += [1] * len(gen)
        segs += [turn] * len(gen)
        i += 1
        obs = []
        while i < len(msgs) and msgs[i]["role"] != "assistant":
            obs.append({"role": msgs[i]["role"], "content": msgs[i]["content"]})
            i += 1
        if obs and i < len(msgs):
            o = fmt.observation_ids(obs, ended_with_eot=True)
            ids += o
            mask += [0] * len(o)
            segs += [0] * len(o)
    n = len(ids)
    return TrainSample(token_ids=ids, loss_mask=mask, segment_ids=segs, behavior_logprobs=[0.0] * n,
                       invalid=[0] * n, advantage=1.0, group=str(row.get("instance_id", "")))


def ensure_warm_start(
    base: str = "tiny", *, config: WarmStartConfig | None = None, progress: bool | Any = False, force: bool = False
) -> Path:
    """The cached SFT warm start of ``base`` ("tiny" or "smollm2"), built on first use."""
    import fcntl

    cfg = config or PRESET_CONFIGS[base]
    out = warm_start_path(base, cfg)
    if (out / "warmstart.json").is_file() and not force:
        return out
    lock = out.with_name(out.name + ".lock")
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if (out / "warmstart.json").is_file() and not force:
            return out
        _remove_stale_builds(out)
        bar = _progress(progress)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.building")
        try:
            with bar if bar is not None else nullcontext():
                _build(base, cfg, out, bar)
        finally:  # a build stopped half-way (Ctrl-C, an error) leaves nothing in the cache
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _remove_stale_builds(out: Path) -> None:
    """Remove ``.NAME.PID.building`` folders of builds whose process is gone (killed with SIGKILL)."""
    for folder in out.parent.glob(f".{out.name}.*.building"):
        pid = folder.name[len(out.name) + 2 : -len(".building")]
        alive = pid.isdigit() and Path(f"/proc/{pid}").exists() and int(pid) != os.getpid()
        if not alive:
            shutil.rmtree(folder, ignore_errors=True)


def _progress(progress: bool | Any):
    if progress is True:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return progress or None


def _drill_samples(tokenizer: Any, n: int, seed: int) -> list[Any]:
    """``n`` skill drills (:mod:`swetrain.recipes.tiny.drills`) as SFT samples."""
    from swetrain.agent.format import ChatFormat
    from swetrain.recipes.tiny.drills import drill_sample, make_drills

    fmt = ChatFormat(tokenizer)
    return [drill_sample(d, fmt) for d in make_drills(n, seed=seed)] if n else []


def _copy_pretrain(trainer: Any, cfg: WarmStartConfig, progress: Any) -> tuple[dict[str, Any] | None, list[Any]]:
    """Copy-pretrain ``trainer.model`` in place (``cfg.copy_steps``; figures, or None when 0) and
    build the ``cfg.copy_mix`` repeated-code SFT samples."""
    from swetrain.recipes.tiny.copy_pretrain import (
        CopyPretrainConfig,
        code_corpus,
        copy_pretrained,
        copy_samples,
        induction_accuracy,
    )

    ccfg = CopyPretrainConfig(steps=max(cfg.copy_steps, 1), easy_steps=max(cfg.copy_easy_steps, 1), seed=cfg.seed,
                              lr=cfg.copy_lr)
    code = code_corpus(trainer.tokenizer)
    stats: dict[str, Any] | None = None
    if cfg.copy_steps:
        bar = progress.add_task("copy pretraining", total=None) if progress else None

        def on_step(step: int, phase: str, metrics: dict[str, float]) -> None:
            if progress:
                progress.update(bar, completed=step, description=f"copy pretraining ({phase}) acc {metrics['accuracy']:.2f}")

        _, stats = copy_pretrained(trainer.model, ccfg, code, on_step)
        stats["induction_accuracy"] = induction_accuracy(trainer.model)
        log.info("copy pretraining: %s", stats)
    return stats, copy_samples(code, cfg.copy_mix, ccfg, seed=cfg.seed)


def _build(base: str, cfg: WarmStartConfig, out: Path, progress: Any) -> None:
    import random

    from swetrain.policy.threads import configure_torch_threads, update_threads
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.tasks.builtin import load_builtin
    from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft

    # nothing else runs during a build: every usable core (SWETRAIN_UPDATE_THREADS), not the
    # rollout phase's 1 thread per process
    configure_torch_threads(update_threads())
    started = time.monotonic()
    base_path = base_model_path(base)
    trainer = SFTTrainer.from_pretrained(
        base_path,
        SFTConfig(epochs=cfg.epochs, lr=cfg.lr, batch_tokens=cfg.batch_tokens, micro_batch_tokens=cfg.micro_batch_tokens,
                  seed=cfg.seed, warmup_steps=cfg.warmup_steps, precision=cfg.precision),
    )
    tmp = out.with_name(f".{out.name}.{os.getpid()}.building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    t0 = time.monotonic()
    dropped: dict[str, str] = {}
    if cfg.use_shipped_demos and not cfg.tasks_file and DEMOS_FILE.is_file():
        from swetrain.agent.format import ChatFormat

        all_rows = load_demos(DEMOS_FILE)
        rows = random.Random(cfg.seed).sample(all_rows, min(cfg.max_demos, len(all_rows)))  # a seeded subset
        if cfg.easy_demos:
            rows = load_demos(DEMOS_EASY_FILE) + rows
            shutil.copy(DEMOS_EASY_FILE, tmp / DEMOS_EASY_FILE.name)
        fmt = ChatFormat(trainer.tokenizer)
        samples = [demo_sample(r, fmt) for r in rows]
        stage2_pool = [demo_sample(r, fmt) for r in all_rows] if cfg.stage2_drills else []
        shutil.copy(DEMOS_FILE, tmp / "demos.jsonl")
        tasks_tried, n_demos = len(rows), len(rows)
        source = str(DEMOS_FILE)
    else:
        tasks = list(load_builtin(split="train", **({"path": cfg.tasks_file} if cfg.tasks_file else {})))
        random.Random(cfg.seed).shuffle(tasks)
        tasks = tasks[: cfg.max_demos]
        demos, dropped = collect_demonstrations(tasks, trainer.tokenizer, cfg, progress)
        if not demos:
            raise RuntimeError(f"warm start {base}: the scripted agent resolved none of {len(tasks)} train tasks: {dropped}")
        TrajectoryStore(tmp / "demos").append(demos)
        samples = [sample_for_sft(t) for t in demos]
        stage2_pool = list(samples)
        tasks_tried, n_demos = len(tasks), len(demos)
        source = "searched"
    demo_s = time.monotonic() - t0
    probe = samples[:16]  # NLL is reported on 16 demos: a full pass costs ~20 s per evaluation
    copy_stats, copies = _copy_pretrain(trainer, cfg, progress) if cfg.copy_steps or cfg.copy_mix else (None, [])
    drills = _drill_samples(trainer.tokenizer, cfg.drills, cfg.seed)
    n_drills = len(drills)
    if drills or copies:  # one shuffled pass over demonstrations x epochs + drills + copy spans
        samples = [*samples * cfg.epochs, *drills, *copies]
        trainer.config.epochs = 1
    before = trainer.evaluate(probe)
    bar = progress.add_task(f"SFT {base} on {n_demos} demos", total=None) if progress else None

    def on_step(step: int, total: int, metrics: dict[str, float]) -> None:
        if progress:
            progress.update(bar, total=total, completed=step, description=f"SFT {base} loss {metrics['loss']:.3f}")

    t1 = time.monotonic()
    last = trainer.train(samples, on_step)
    n_stage2 = 0
    if cfg.stage2_drills:
        stage2 = _drill_samples(trainer.tokenizer, cfg.stage2_drills, cfg.stage2_seed)
        stage2 += random.Random(cfg.stage2_seed).sample(stage2_pool, min(cfg.stage2_demos, len(stage2_pool)))
        n_stage2 = len(stage2)
        trainer.config.epochs, trainer.config.seed = 1, cfg.stage2_seed
        last = trainer.train(stage2, on_step)
    sft_s = time.monotonic() - t1
    after = trainer.evaluate(probe)
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
        "demos_source": source,
        "tasks_tried": tasks_tried,
        "demonstrations": n_demos,
        "drills": n_drills,
        "stage2_samples": n_stage2,
        "copy_pretrain": copy_stats,
        "dropped": dropped,
        "demo_tokens": sum(len(s.token_ids) for s in samples),
        "assistant_tokens": sum(s.n_trainable for s in samples),
        "nll_probe_demos": len(probe),
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
    log.info("warm start %s: %d demos, NLL %.3f -> %.3f, %.0fs", base, n_demos, before, after, info["total_seconds"])


def main(argv: list[str] | None = None) -> int:
    """``python -m swetrain.recipes.tiny.warmstart --regenerate [--out FILE] [--workers 2]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m swetrain.recipes.tiny.warmstart")
    parser.add_argument("--regenerate", action="store_true", help="search + verify demonstrations for the train split")
    parser.add_argument("--out", default=str(DEMOS_FILE))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-candidates", type=int, default=12)
    parser.add_argument("--pool", default=None, help="extra train-only tasks (python -m swetrain.recipes.tiny.demo_pool)")
    parser.add_argument("--no-verify", action="store_true", help="check replays with the whole suite, not the verifier")
    parser.add_argument("--deadline", type=float, default=None, help="stop starting new searches after this many seconds")
    parser.add_argument("--fast-search", action="store_true", help="candidates re-run only the failing tests (the replay is still judged on the whole suite)")
    parser.add_argument("--resume", action="store_true", help="keep the rows/drops already in --out and search only the other tasks")
    parser.add_argument("--tier", choices=("easy", "standard"), default=None, help="only train tasks of this tier (easy: data/demos_easy.jsonl)")
    args = parser.parse_args(argv)
    if not args.regenerate:
        parser.print_help()
        return 2
    from swetrain.policy.threads import configure_torch_threads

    configure_torch_threads()
    bar = _progress(True)
    with bar:
        info = generate_demos(args.out, workers=args.workers, max_candidates=args.max_candidates, pool_file=args.pool,
                              verify=not args.no_verify, deadline_s=args.deadline, check_suite=not args.fast_search,
                              resume=args.resume, tier=args.tier, progress=bar)
    print(json.dumps({k: v for k, v in info.items() if k != "dropped"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
