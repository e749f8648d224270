"""Ray backend of the rollout engine: chain jobs run in Ray actors with their own policy.

Each actor builds its policy from a spec (``build_policy``) and a verifier, then runs
:func:`~swetrain.rollout.chain_job.run_chain_job` -- the exact code of the local backend -- and
returns the chain's trajectories as rows. Only the driver writes the trajectory store.

By default Ray is started on this machine (``ray.init(num_cpus=2, include_dashboard=False)``) and
shut down afterwards; pass ``address`` to use a running cluster (it is then left running).

An actor that dies while it runs a chain (``ray.kill``, SIGKILL, OOM, a crashed node) is replaced
by a fresh one and the chain is queued again, up to ``max_infra_retries`` times like any infra
failure; then it is reported as given up. Its lost try stored nothing (only the driver writes, once
a chain has finished), so the retry adds no duplicate rows.
"""

from __future__ import annotations

import os
from typing import Any

from swetrain.agent.loop import WorkspaceFactory
from swetrain.rollout.chain_job import (
    INFRA_GIVE_UP,
    ChainResult,
    PolicySpec,
    ChainJobConfig,
    build_policy,
    build_verifier,
    run_chain_job,
)
from swetrain.rollout.pools import Finished


def _actor_died(exc: BaseException) -> bool:
    """True for errors meaning the actor's process is gone (not an exception raised by the job)."""
    from ray import exceptions as rex

    return isinstance(exc, (rex.RayActorError, rex.WorkerCrashedError, rex.NodeDiedError, rex.LocalRayletDiedError))


class ChainActor:
    """The body of one Ray actor (wrapped with ``ray.remote`` at pool start)."""

    def __init__(self, policy_spec: PolicySpec, config: ChainJobConfig,
                 workspace_factory: WorkspaceFactory | None = None) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            from swetrain.policy.threads import configure_torch_threads

            configure_torch_threads()
        except ImportError:  # torch absent: a scripted policy does not need it
            pass
        self.config = config
        self.policy = build_policy(policy_spec)
        self.verifier = build_verifier(config.verify_timeout_s, config.sandbox, config.test_timeout_s)
        self.workspace_factory = workspace_factory

    def run(self, task_row: dict[str, Any], base_dir: str | None, chain: int) -> dict[str, Any]:
        from swetrain.tasks.record import Task

        task = Task.model_validate(task_row).with_base_dir(base_dir)
        result = run_chain_job(
            task, chain, self.policy, self.verifier, self.config, workspace_factory=self.workspace_factory
        )
        return result.to_wire()

    def ping(self) -> int:
        return os.getpid()


class RayChainPool:
    """``workers`` ChainActors, one chain job in flight per actor: a
    :class:`~swetrain.rollout.pools.ChainPool` for :func:`~swetrain.rollout.pools.run_jobs`."""

    def __init__(
        self,
        policy_spec: PolicySpec,
        config: ChainJobConfig,
        *,
        workers: int = 2,
        address: str | None = None,
        num_cpus: int = 2,
        workspace_factory: WorkspaceFactory | None = None,
    ) -> None:
        self.policy_spec = policy_spec
        self.config = config
        self.workers = workers
        self.address = address
        self.num_cpus = num_cpus
        self.workspace_factory = workspace_factory
        self._started_ray = False
        self._actors: list[Any] = []
        self._idle: list[Any] = []  # actors without a job
        self._running: dict[Any, tuple[Any, Any, int]] = {}  # object ref -> (actor, task, chain)
        self._deaths: dict[tuple[str, int], list[str]] = {}  # actor deaths per chain (infra failures)

    def __enter__(self) -> RayChainPool:
        import ray

        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "configure_logging": False}
            if self.address:
                ray.init(address=self.address, **kwargs)
            else:
                ray.init(num_cpus=self.num_cpus, **kwargs)
            self._started_ray = True
        total = float(ray.cluster_resources().get("CPU", self.num_cpus))
        per_actor = min(1.0, total / self.workers)
        self._remote_cls = ray.remote(num_cpus=per_actor, max_restarts=0)(ChainActor)
        self._actors = [self._new_actor() for _ in range(self.workers)]
        ray.get([a.ping.remote() for a in self._actors])  # fail fast if an actor cannot start
        self._idle, self._running, self._deaths = list(self._actors), {}, {}
        return self

    def _new_actor(self) -> Any:
        return self._remote_cls.remote(self.policy_spec, self.config, self.workspace_factory)

    def __exit__(self, *exc: Any) -> None:
        import ray

        for actor in self._actors:
            try:
                ray.kill(actor)
            except Exception:  # noqa: BLE001 - already dead
                pass
        self._actors, self._idle, self._running = [], [], {}
        if self._started_ray:
            ray.shutdown()

    # ------------------------------------------------------------------ ChainPool
    def has_room(self) -> bool:
        return bool(self._idle)

    def busy(self) -> bool:
        return bool(self._running)

    def submit(self, task: Any, chain: int) -> None:
        actor = self._idle.pop()
        ref = actor.run.remote(_portable_row(task), None, chain)
        self._running[ref] = (actor, task, chain)

    def finished(self) -> list[Finished]:
        import ray

        ready, _ = ray.wait(list(self._running), num_returns=1)
        out = []
        for ref in ready:
            actor, task, chain = self._running.pop(ref)
            out.append(Finished(task, chain, self._outcome(ref, actor, task, chain)))
        return out

    def batch_stats(self) -> dict[str, float]:
        return {}  # each actor generates alone

    def _outcome(self, ref: Any, actor: Any, task: Any, chain: int) -> ChainResult | None:
        """The chain's result; None when its actor died and the chain may run again."""
        import ray

        died = self._deaths.setdefault((task.instance_id, chain), [])
        try:
            result = ChainResult.from_wire(ray.get(ref))
        except Exception as exc:  # noqa: BLE001 - the actor failed: replace it
            self._replace(actor)
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            if not _actor_died(exc):  # the job itself raised: a bug, not retried
                return ChainResult(task.instance_id, chain, infra_errors=died[:] + [first],
                                   error=f"ray actor failed: {type(exc).__name__}: {first}")
            died.append(f"ray actor died running {task.instance_id} chain {chain}: {type(exc).__name__}: {first}")
            if len(died) <= self.config.max_infra_retries:
                return None  # run it again on a live actor
            return ChainResult(task.instance_id, chain, infra_errors=died[:],
                               error=f"{INFRA_GIVE_UP} {len(died)} tries: {died[-1]}")
        result.infra_errors = died + result.infra_errors
        self._idle.append(actor)
        return result

    def _replace(self, actor: Any) -> None:
        """Kill a failed actor and put a fresh one among the idle ones."""
        import ray

        self._actors.remove(actor)
        try:
            ray.kill(actor)
        except Exception:  # noqa: BLE001 - already dead
            pass
        fresh = self._new_actor()
        self._actors.append(fresh)
        self._idle.append(fresh)


def _portable_row(task: Any) -> dict[str, Any]:
    """The task as a row whose relative paths are resolved (the actor has no tasks-file folder)."""
    row = task.to_row()
    if task.source:
        row["source"] = str(task.source_path())
    if task.environment:
        row["environment"] = str(task.environment_path())
    return row
