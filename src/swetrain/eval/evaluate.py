"""Evaluate a policy with FC-SWE's verifier-assisted protocol and get its headline as an object:
Resolved@1, Resolved@2 and conditional recovery.

A thin wrapper over :func:`swetrain.eval.protocol.run_eval` (the package's one evaluation): it writes
the same ``out_dir/eval.json`` as ``swetrain eval`` (trajectories under ``out_dir/seed-<seed>/``)
and summarises that record as an :class:`EvalResult`. Each task gets ``chains`` independent recovery
chains of up to ``attempts`` attempts (attempt 2 sees the failed patch and the verifier's
diagnostics when ``context_variant`` is "patch+verifier"); chain ``c`` plays the role of a decoding
seed, and :mod:`swetrain.eval.metrics` averages over chains.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TYPE_CHECKING

from swetrain.env.interface import COMMAND_TIMEOUT_S, TEST_TIMEOUT_S
from swetrain.rollout.sampling import SamplingConfig, sampling_defaults

if TYPE_CHECKING:
    from swetrain.policy.base import Policy
    from swetrain.agent.loop import PatchVerifier


@dataclass
class EvalResult:
    resolved_at_1: float
    resolved_at_2: float
    conditional_recovery: float  # NaN-free: 0.0 when no first attempt failed (see n_first_failed)
    n_tasks: int
    chains: int
    n_first_failed: int
    invalid_turn_rate: float = 0.0
    seconds: float = 0.0
    skipped_tasks: dict[str, str] = field(default_factory=dict)
    per_task: dict[str, list[list[float]]] = field(default_factory=dict)
    infra_failures: int = 0  # tries lost to infrastructure failures (never scored)
    model_failures: int = 0  # executed, verified attempts that did not resolve the task

    def headline(self) -> dict[str, float]:
        return {
            "resolved_at_1": self.resolved_at_1,
            "resolved_at_2": self.resolved_at_2,
            "conditional_recovery": self.conditional_recovery,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> EvalResult:
        """The headline of an ``eval.json`` record over the tasks every sample scored (a task lost
        to infrastructure failures is left out); raises ``NoTrajectoryError`` when none is left."""
        from swetrain.eval.metrics import conditional_recovery, resolved_at
        from swetrain.eval.protocol import matrices
        from swetrain.rollout.errors import NoTrajectoryError

        y, _, ex = matrices(record)
        kept = [i for i in range(len(record["tasks"])) if not ex[:, i].any()]
        skipped = {iid: why for block in record["infra_failures"].values() for iid, why in block.items()}
        if not kept:
            raise NoTrajectoryError(f"evaluation: every task was skipped: {skipped}")
        y = y[:, kept, :]
        K = int(record["attempts"])
        r1 = resolved_at(y, 1)
        cr = conditional_recovery(y) if K >= 2 else math.nan
        return cls(
            resolved_at_1=r1,
            resolved_at_2=resolved_at(y, 2) if K >= 2 else r1,
            conditional_recovery=0.0 if math.isnan(cr) else cr,
            n_tasks=len(kept),
            chains=y.shape[0],
            n_first_failed=int((y[:, :, 0] != 1).sum()),
            invalid_turn_rate=float(record.get("invalid_turn_rate", 0.0)),
            seconds=float(record.get("seconds", 0.0)),
            skipped_tasks=skipped,
            per_task={record["tasks"][i]: y[:, j, :].tolist() for j, i in enumerate(kept)},
            infra_failures=int(sum(record.get("infra_tries", {}).values())),
            model_failures=int((y == 0).sum()),
        )


def evaluate_policy(
    policy: Policy,
    tasks: list[Any],
    out_dir: str | Path,
    *,
    sampling: SamplingConfig | None = None,
    chains: int = 1,
    attempts: int = 2,
    context_variant: str = "patch+verifier",
    seed: int = 0,
    workers: int = 1,
    verifier: PatchVerifier | None = None,
    on_result: Any = None,
    batch_generation: bool = True,
    edit_match: str = "exact",
    command_timeout_s: float = COMMAND_TIMEOUT_S,
    test_timeout_s: float = TEST_TIMEOUT_S,
    policy_name: str = "policy",
    **sampling_values: Any,
) -> EvalResult:
    """Run :func:`~swetrain.eval.protocol.run_eval` (one decoding seed, ``chains`` chains per task)
    into ``out_dir`` and summarise it (tasks skipped for infrastructure reasons excluded).

    ``sampling`` (default: ``swetrain eval``'s, :data:`swetrain.rollout.sampling.DEFAULTS`) with
    ``sampling_values`` (``SamplingConfig`` keys such as ``max_turns=6``) replacing its fields.
    ``context_variant="none"`` evaluates in resample mode. Raises
    :class:`~swetrain.rollout.errors.NoTrajectoryError` when no trajectory was stored or every
    task was skipped (nothing left to score).
    """
    from swetrain.eval.protocol import EvalProtocol, run_eval

    chosen = (sampling or sampling_defaults("eval")).override(**sampling_values)
    protocol = EvalProtocol(
        **chosen.model_dump(), attempts=attempts, context=context_variant, seeds=[seed], chains=chains,
        mode="resample" if context_variant == "none" else "feedback", workers=workers,
        batch_generation=batch_generation, edit_match=edit_match, command_timeout_s=command_timeout_s,
        test_timeout_s=test_timeout_s,
    )
    record = run_eval(policy, tasks, out_dir, protocol, policy_name=policy_name, verifier=verifier, on_result=on_result)
    return EvalResult.from_record(record)
