"""One chain job of a rollout, and what it is configured by and reports: the code the rollout
engine's chain pools share (:mod:`swetrain.rollout.pools` runs it on a thread pool,
:mod:`swetrain.rollout.ray_backend` in Ray actors). Everything here is re-exported by
:mod:`swetrain.rollout.engine`; the Ray backend imports this module, not the engine, so the engine
can start the Ray backend without an import cycle.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from swetrain.env.interface import COMMAND_TIMEOUT_S, TEST_TIMEOUT_S
from swetrain.agent.chains import CONTEXT_VARIANTS, RecoveryChain
from swetrain.agent.loop import EpisodeLimits, InfraError, PatchVerifier, WorkspaceFactory
from swetrain.agent.trajectory import Trajectory
from swetrain.env.edit_match import check_mode as check_edit_match
from swetrain.policy.base import GenerationConfig, Policy
from swetrain.rollout.errors import InfraFailureError

log = logging.getLogger("swetrain.rollout.engine")

BACKENDS = ("local", "ray")


@dataclass
class ChainJobConfig:
    """What the rollout engine samples: G chains per task, up to R attempts each, and how.

    The engine's own settings; users write the training recipe's ``rollout`` section
    (:meth:`swetrain.train.config.RolloutConfig.engine_config` maps it here) or a
    :class:`~swetrain.rollout.sampling.SamplingConfig` (:meth:`from_sampling`)."""

    group: int = 8
    attempts: int = 2
    context_variant: str = "patch+verifier"
    context_budget_tokens: int = 2048
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    seed: int = 0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0: no top-k cut
    max_infra_retries: int = 2
    # a run whose tries are mostly lost to infrastructure failures stops with InfraFailureError
    # (measures the environment, not the policy); 1.0 never stops
    max_infra_fraction: float = 0.5
    verify_timeout_s: float = 300.0
    sandbox: str | None = None  # workspace backend of chains and verifier: local | docker (None: the default)
    # local backend, workers > 1: gather the concurrent chains' generate calls into batched calls
    # (swetrain.policy.wrappers.wrap_for_workers); the oldest waiting call starts a batch after batch_wait_ms
    batch_generation: bool = False
    batch_wait_ms: float = 5.0
    edit_match: str = "exact"  # str_replace matching of the agent's tools: exact | tolerant (env/edit_match.py)
    command_timeout_s: float = COMMAND_TIMEOUT_S  # wall-clock limit of one agent command in the workspace (a hanging test run)
    test_timeout_s: float = TEST_TIMEOUT_S  # the verifier's per-test limit (a test the patch makes hang FAILS after it)

    def __post_init__(self) -> None:
        from swetrain.env.backend import check_sandbox, default_sandbox

        self.sandbox = check_sandbox(self.sandbox or default_sandbox())
        if self.group < 1:
            raise ValueError(f"group must be >= 1, got {self.group}")
        if self.attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {self.attempts}")
        if self.context_variant not in CONTEXT_VARIANTS:
            raise ValueError(f"context_variant {self.context_variant!r} is not one of {', '.join(CONTEXT_VARIANTS)}")
        if self.max_infra_retries < 0:
            raise ValueError(f"max_infra_retries must be >= 0, got {self.max_infra_retries}")
        if not 0.0 < self.max_infra_fraction <= 1.0:
            raise ValueError(f"max_infra_fraction must be in (0, 1], got {self.max_infra_fraction}")
        if self.batch_wait_ms < 0:
            raise ValueError(f"batch_wait_ms must be >= 0, got {self.batch_wait_ms}")
        check_edit_match(self.edit_match)
        for name in ("command_timeout_s", "test_timeout_s", "verify_timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")

    @classmethod
    def from_sampling(cls, sampling: Any, *, extra_limits: dict[str, Any] | None = None,
                      **fields: Any) -> ChainJobConfig:
        """The config of a :class:`~swetrain.rollout.sampling.SamplingConfig` (decoding and the
        attempt's limits), the limits that are not sampling settings (``extra_limits``, e.g.
        ``{"max_wall_s": 60}``) and the engine's other ``fields``."""
        limits = sampling.episode_limits(**(extra_limits or {}))
        return cls(limits=limits, temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k,
                   **fields)

    def chain_runner(self) -> RecoveryChain:
        return RecoveryChain(self.attempts, self.context_variant, self.context_budget_tokens, self.limits,
                             edit_match=self.edit_match)

    def gen_config(self) -> GenerationConfig:
        return GenerationConfig(max_new_tokens=self.limits.max_tokens_per_call, temperature=self.temperature,
                                top_p=self.top_p, top_k=self.top_k)


@dataclass
class ChainResult:
    """Outcome of one chain job: its trajectories, or why it was skipped."""

    instance_id: str
    chain: int
    trajectories: list[Trajectory] = field(default_factory=list)
    infra_errors: list[str] = field(default_factory=list)  # one per failed try
    error: str | None = None  # set when the chain was given up (no trajectories)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def infra_failures(self) -> int:
        """Tries of this chain lost to infra failures (the last entry of a chain given up for a
        bug is its traceback, not an infra failure)."""
        bug = self.error is not None and not self.error.startswith(INFRA_GIVE_UP)
        return len(self.infra_errors) - (1 if bug else 0)

    def to_wire(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "chain": self.chain,
            "rows": [t.to_row() for t in self.trajectories],
            "infra_errors": self.infra_errors,
            "error": self.error,
            "seconds": self.seconds,
        }

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> ChainResult:
        return cls(
            instance_id=d["instance_id"],
            chain=d["chain"],
            trajectories=[Trajectory.from_row(r) for r in d["rows"]],
            infra_errors=list(d["infra_errors"]),
            error=d["error"],
            seconds=d["seconds"],
        )


INFRA_GIVE_UP = "infra failure after"  # how ChainResult.error starts for a chain given up for infra


def run_chain_job(
    task: Any,
    chain: int,
    policy: Policy,
    verifier: PatchVerifier,
    config: ChainJobConfig,
    *,
    workspace_factory: WorkspaceFactory | None = None,
) -> ChainResult:
    """Run chain ``chain`` of ``task`` with infra retries (the same code on every backend)."""
    from swetrain.env.backend import open_workspace
    from swetrain.env.interface import Limits

    limits = Limits(timeout_s=config.command_timeout_s)
    make_ws = workspace_factory or (lambda t: open_workspace(t, sandbox=config.sandbox, limits=limits))
    started = time.monotonic()
    result = ChainResult(task.instance_id, chain)
    runner = config.chain_runner()
    for attempt_no in range(config.max_infra_retries + 1):
        workspace = None
        try:
            try:
                workspace = make_ws(task)
            except Exception as exc:  # noqa: BLE001 - a workspace that cannot be created is infra
                raise InfraError(f"workspace for {task.instance_id}: {exc}") from exc
            result.trajectories = runner.run(
                task, workspace, policy, verifier, chain=chain, seed=config.seed, gen_config=config.gen_config()
            )
            bad = [t.attempt for t in result.trajectories if t.verdict is not None and t.verdict.infra_failure]
            if bad:  # never store an infra verdict as a scored (reward 0) attempt
                raise InfraError(f"attempt(s) {bad} of {task.instance_id} chain {chain} carry an infra_failure verdict")
            result.seconds = time.monotonic() - started
            return result
        except InfraError as exc:
            log.warning("infra failure on %s chain %d (try %d): %s", task.instance_id, chain, attempt_no + 1, exc)
            result.infra_errors.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug or bad policy output: report, do not retry
            result.error = f"{type(exc).__name__}: {exc}"
            result.infra_errors.append(traceback.format_exc(limit=6))
            result.seconds = time.monotonic() - started
            return result
        finally:
            if workspace is not None:
                try:
                    workspace.close()
                except Exception as exc:  # noqa: BLE001
                    log.warning("closing workspace of %s failed: %s", task.instance_id, exc)
    result.error = f"{INFRA_GIVE_UP} {config.max_infra_retries + 1} tries: {result.infra_errors[-1]}"
    result.seconds = time.monotonic() - started
    return result


#: what builds a policy: a Policy, a picklable zero-argument factory or a spec string
PolicySpec = Policy | Callable[[], Policy] | str


def build_policy(spec: PolicySpec) -> Policy:
    """A policy from a spec: an object with ``generate`` (returned as is), a zero-argument
    factory, ``"scripted:NAME[:TOKENIZER]"`` or any ``swetrain.policy.load_policy`` spec."""
    if hasattr(spec, "generate"):
        return spec
    if callable(spec):
        return spec()
    if isinstance(spec, str):
        if spec.startswith("scripted:"):
            from swetrain.agent.scripted import load_scripted

            return load_scripted(spec)
        from swetrain.policy import load_policy

        return load_policy(spec)
    raise TypeError(f"policy spec must be a Policy, a factory or a string, got {type(spec).__name__}")


def build_verifier(timeout_s: float, sandbox: str | None = None, test_timeout_s: float = TEST_TIMEOUT_S) -> PatchVerifier:
    """The environment's verifier (hidden tests in a fresh workspace of ``sandbox``; the whole run
    limited to ``timeout_s``, each test to ``test_timeout_s``)."""
    from swetrain.env.verifier import Verifier

    return Verifier(timeout_s=timeout_s, sandbox=sandbox, test_timeout_s=test_timeout_s)


@dataclass
class RolloutReport:
    """What a run did: counts, skipped tasks and the metrics of its trajectories."""

    chains_done: int = 0
    chains_skipped: int = 0
    chains_resumed: int = 0
    trajectories: int = 0
    infra_retries: int = 0
    infra_failures: int = 0  # tries lost to infra failures (retried or not); never scored
    dropped_parts: list[str] = field(default_factory=list)  # unreadable parts moved aside on resume
    backend_start_s: float = 0.0  # building policies / starting Ray and its actors
    # batch_generation: generate calls of the chains, policy calls they became, prompts per call
    generation_batches: dict[str, float] = field(default_factory=dict)
    skipped_tasks: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    metrics: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def infra_fraction(report: RolloutReport) -> float:
    """Share of the run's chains given up after infrastructure failures (retries exhausted)."""
    chains = report.chains_done + report.chains_skipped
    return report.chains_skipped / chains if chains else 0.0


def check_infra_fraction(report: RolloutReport, limit: float) -> None:
    """Raise :class:`InfraFailureError` when more than ``limit`` of the tries were infra failures."""
    frac = infra_fraction(report)
    # a run that stored nothing is reported by the no-trajectory path (rollout/errors.py)
    if report.infra_failures and report.chains_done and frac > limit:
        first = next(iter(report.skipped_tasks.values()), "")
        raise InfraFailureError(
            f"{report.chains_skipped} of {report.chains_done + report.chains_skipped} chains "
            f"({100 * frac:.0f}%) were given up for infrastructure failures (limit {100 * limit:.0f}%, "
            f"rollout.max_infra_fraction): the environment, not the policy, failed"
            + (f"; first: {' '.join(first.split())[:300]}" if first else "")
        )
