"""``RolloutEngine``: tasks x G chains x up to R attempts over workers, into a TrajectoryStore.

Unit of work: one *chain job* (task, chain c) = create a fresh workspace, run a
:class:`~swetrain.agent.chains.RecoveryChain` (attempts 1..R, reset between), close the workspace.
At most ``workers`` chain jobs run at once, so at most ``workers`` workspaces exist at once.

Backends (same chain code, same records for a fixed seed), each a
:class:`~swetrain.rollout.pools.ChainPool` fed by the one scheduling loop
:func:`~swetrain.rollout.pools.run_jobs`:

* ``local`` (:class:`~swetrain.rollout.pools.LocalChainPool`): a thread pool in this process.
  Threads suffice because the heavy parts either release the GIL (tool commands and the verifier
  are subprocesses; torch kernels release it) or must be shared (one policy model in memory, not
  one per worker). The shared policy is made safe for the threads by
  :func:`swetrain.policy.wrappers.wrap_for_workers` unless it says ``thread_safe = True``: calls
  go one at a time (``LockedPolicy``), so a transformers model is never entered by two threads at
  once, or, with ``batch_generation``, share the model: an ``HFPolicy`` runs them as one
  continuously batched decode, rows joining and leaving at every step
  (``ContinuousBatchingPolicy``); other backends get the calls that arrive together as one batched
  ``generate`` (``BatchingPolicy``). Each chain keeps its own seeds, so the records do not change
  for a backend whose rows do not depend on the batch.
* ``ray`` (:class:`~swetrain.rollout.ray_backend.RayChainPool`): ``workers`` Ray actors
  (``ray.init(num_cpus=..., include_dashboard=False)`` on this machine by default, or an
  ``address``). Each actor builds its own policy from a *spec* (a ``swetrain.policy.load_policy``
  string, ``scripted:...``, or a picklable zero-argument factory) and runs the very same
  :func:`~swetrain.rollout.chain_job.run_chain_job`; results come back as rows, and only the
  driver writes the store.

Generation seeds derive from (seed, instance_id, chain, attempt, turn) with a stable hash, so the
schedule (which worker, in which order) does not change any record.

Infra failures (:class:`~swetrain.agent.loop.InfraError`: sandbox/workspace errors, tool-runner
crashes, verifier crashes or ``infra_failure`` verdicts) retry the whole chain up to
``max_infra_retries`` times and are never scored. A chain that still fails is reported and its
task is skipped (its remaining chains are not started). On the Ray backend an actor that dies
while it runs a chain (killed, OOM) counts as one such failure: the actor is replaced and the chain
runs again. A chain is stored only once it has finished, as one part, so a retried chain never
leaves rows of its lost try behind.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from swetrain.env.interface import COMMAND_TIMEOUT_S, TEST_TIMEOUT_S
from swetrain.agent.loop import EpisodeLimits, PatchVerifier, WorkspaceFactory
from swetrain.agent.trajectory import Trajectory
from swetrain.policy.base import Policy
from swetrain.policy.wrappers import wrap_for_workers
from swetrain.rollout.chain_job import (  # noqa: F401  (the chain job's names, re-exported for callers)
    BACKENDS,
    INFRA_GIVE_UP,
    ChainResult,
    PolicySpec,
    ChainJobConfig,
    RolloutReport,
    build_policy,
    build_verifier,
    check_infra_fraction,
    infra_fraction,
    run_chain_job,
)
from swetrain.rollout.pools import ChainPool, LocalChainPool, run_jobs
from swetrain.rollout.store import TrajectoryStore

log = logging.getLogger(__name__)


class RolloutEngine:
    """Schedules chain jobs over a backend and appends their trajectories to a store."""

    def __init__(
        self,
        policy: Policy | None = None,
        verifier: PatchVerifier | None = None,
        *,
        policy_factory: PolicySpec | None = None,
        backend: str = "local",
        workers: int = 1,
        config: ChainJobConfig | None = None,
        workspace_factory: WorkspaceFactory | None = None,
        ray_address: str | None = None,
        ray_num_cpus: int = 2,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if policy is None and policy_factory is None:
            raise ValueError("RolloutEngine needs a policy or a policy_factory (spec)")
        if backend == "ray" and policy_factory is None:
            raise ValueError("the ray backend builds the policy inside each actor: pass policy_factory (a spec)")
        self.backend = backend
        self.workers = workers
        self.config = config or ChainJobConfig()
        self.policy_factory = policy_factory
        self._policy = policy
        self._verifier = verifier
        self.workspace_factory = workspace_factory
        self.ray_address = ray_address
        self.ray_num_cpus = ray_num_cpus

    # ------------------------------------------------------------------ public
    def jobs(self, tasks: Sequence[Any]) -> list[tuple[Any, int]]:
        """(task, chain) pairs in schedule order: chain-major so early results span all tasks."""
        counts = Counter(t.instance_id for t in tasks)
        dupes = {i for i, n in counts.items() if n > 1}
        if dupes:
            raise ValueError(f"duplicate instance_id(s) in tasks: {sorted(dupes)}")
        return [(t, c) for c in range(self.config.group) for t in tasks]

    def run(
        self,
        tasks: Sequence[Any],
        store: TrajectoryStore | str | Path,
        *,
        resume: bool = True,
        on_result: Callable[[ChainResult], None] | None = None,
    ) -> RolloutReport:
        """Run every (task, chain) job; append each finished chain to ``store`` as it completes.

        With ``resume`` the chains already in the store are skipped (a killed run continues);
        unreadable (truncated, corrupt) parts are first moved aside, so their chains run again.
        """
        if not isinstance(store, TrajectoryStore):
            store = TrajectoryStore(store)
        store.check_run_dir()
        _announce_isolation_once(store.run_dir, self.config.sandbox)
        started = time.monotonic()
        report = RolloutReport()
        fresh: list[Trajectory] = []
        jobs = self.jobs(tasks)
        if resume:
            for part, problem in store.drop_unreadable():
                log.warning("dropped %s: %s", part, problem)
                report.dropped_parts.append(str(part))
            done = store.done_chains()
            report.chains_resumed = sum(1 for t, c in jobs if (t.instance_id, c) in done)
            jobs = [(t, c) for t, c in jobs if (t.instance_id, c) not in done]

        def collect(result: ChainResult) -> None:
            report.infra_retries += len(result.infra_errors) - (0 if result.ok else 1)
            report.infra_failures += result.infra_failures
            if result.ok:
                store.append(result.trajectories)
                fresh.extend(result.trajectories)
                report.chains_done += 1
                report.trajectories += len(result.trajectories)
            else:
                report.chains_skipped += 1
                report.skipped_tasks.setdefault(result.instance_id, result.error or "unknown error")
            if on_result is not None:
                on_result(result)

        self._run_jobs(jobs, collect, report)
        report.seconds = time.monotonic() - started
        # this run's trajectories only: a trainer's step must not re-read every earlier step's rows
        report.metrics = summarize(fresh, self.config.attempts)
        check_infra_fraction(report, self.config.max_infra_fraction)
        return report

    # ------------------------------------------------------------------ pools
    def _local_policy(self) -> Policy:
        """The policy the local pool's threads share (built from the spec on first use)."""
        if self._policy is None:
            self._policy = build_policy(self.policy_factory)
        return wrap_for_workers(self._policy, self.workers, batch_generation=self.config.batch_generation,
                                batch_wait_s=self.config.batch_wait_ms / 1000)

    def _open_pool(self) -> ChainPool:
        """The backend's chain pool (the local one builds its policy and verifier here)."""
        if self.backend == "ray":
            from swetrain.rollout.ray_backend import RayChainPool

            return RayChainPool(self.policy_factory, self.config, workers=self.workers, address=self.ray_address,
                                num_cpus=self.ray_num_cpus, workspace_factory=self.workspace_factory)
        verifier = self._verifier or build_verifier(self.config.verify_timeout_s, self.config.sandbox, self.config.test_timeout_s)
        return LocalChainPool(self._local_policy(), verifier, self.config, workers=self.workers,
                              workspace_factory=self.workspace_factory)

    def _run_jobs(self, jobs: list[tuple[Any, int]], collect: Callable[[ChainResult], None],
                  report: RolloutReport) -> None:
        t0 = time.monotonic()
        pool = self._open_pool()
        with pool:
            report.backend_start_s = time.monotonic() - t0  # building policies / starting Ray and its actors
            try:
                run_jobs(pool, jobs, collect, report)
            finally:
                report.generation_batches = pool.batch_stats()


# ---------------------------------------------------------------------- metrics
_ANNOUNCED: set[str] = set()
_ANNOUNCED_LOCK = threading.Lock()


def _announce_isolation_once(run_dir: Path, sandbox: str | None = None) -> None:
    """Say how agent commands are isolated (one stderr line) and record it in ``run_dir/isolation.json``,
    once per run directory and process (a trainer runs the engine every step)."""
    from swetrain.env.backend import announce_isolation

    key = str(Path(run_dir).resolve())
    with _ANNOUNCED_LOCK:
        if key in _ANNOUNCED:
            return
        _ANNOUNCED.add(key)
    announce_isolation(run_dir, sandbox or "local")


def run_local(
    policy: Policy,
    tasks: Sequence[Any],
    out_dir: str | Path,
    *,
    chains: int,
    attempts: int,
    context_variant: str = "patch+verifier",
    seed: int = 0,
    max_turns: int = 8,
    max_new_tokens: int = 128,
    max_context_tokens: int = 4096,
    temperature: float = 1.0,
    top_p: float = 1.0,
    top_k: int = 0,
    context_budget_tokens: int = 2048,
    workers: int = 1,
    verifier: PatchVerifier | None = None,
    on_result: Callable[[ChainResult], None] | None = None,
    batch_generation: bool = True,
    edit_match: str = "exact",
    command_timeout_s: float = COMMAND_TIMEOUT_S,
    test_timeout_s: float = TEST_TIMEOUT_S,
) -> tuple[RolloutReport, list[Trajectory]]:
    """Roll ``tasks`` out with one in-process policy into ``out_dir``'s store (appending, no
    resume) and return the report with the trajectories this call added (evaluation, mastery).
    With ``workers > 1`` the chains' generate calls share the model (``batch_generation``: the
    records are the same as one call at a time)."""
    engine = RolloutEngine(
        policy,
        verifier,
        backend="local",
        workers=workers,
        config=ChainJobConfig(
            group=chains,
            attempts=attempts,
            context_variant=context_variant,
            context_budget_tokens=context_budget_tokens,
            limits=EpisodeLimits(max_turns=max_turns, max_context_tokens=max_context_tokens,
                                 max_tokens_per_call=max_new_tokens),
            seed=seed,
            temperature=temperature,
            top_p=top_p,
            top_k=top_k,
            batch_generation=batch_generation,
            edit_match=edit_match,
            command_timeout_s=command_timeout_s,
            test_timeout_s=test_timeout_s,
        ),
    )
    store = TrajectoryStore(out_dir)
    offset = store.count()
    report = engine.run(tasks, store, resume=False, on_result=on_result)
    return report, store.read_all(offset)


def summarize(trajectories: Sequence[Trajectory], attempts: int | None = None) -> dict[str, Any]:
    """Resolved@k for k = 1..R, conditional recovery and token/turn counts of a set of trajectories.

    Metrics come from ``swetrain.eval.metrics`` over its ``outcome_matrix`` (chains averaged like
    seeds; a chain without rows, e.g. skipped for infra reasons, counts as unresolved).
    """
    import math

    from swetrain.eval import metrics as M

    if not trajectories:
        return {"tasks": 0, "chains": 0, "trajectories": 0}
    y, tasks = M.outcome_matrix(trajectories, attempts=attempts)
    out: dict[str, Any] = {
        "tasks": len(tasks),
        "chains": len({(t.instance_id, t.chain) for t in trajectories}),
        "trajectories": len(trajectories),
    }
    for k in range(1, y.shape[2] + 1):
        out[f"resolved@{k}"] = M.resolved_at(y, k)
    if y.shape[2] >= 2:
        rec = M.conditional_recovery(y)
        out["conditional_recovery"] = None if math.isnan(rec) else rec
    turns = sum(len(t.invalid) for t in trajectories)
    out["invalid_turn_rate"] = sum(sum(t.invalid) for t in trajectories) / turns if turns else 0.0
    out["mean_turns"] = sum(t.num_turns for t in trajectories) / len(trajectories)
    out["input_tokens"] = sum(t.input_tokens for t in trajectories)
    out["output_tokens"] = sum(t.output_tokens for t in trajectories)
    out["stop_reasons"] = {r: sum(t.stop_reason == r for t in trajectories) for r in sorted({t.stop_reason for t in trajectories})}
    return out
