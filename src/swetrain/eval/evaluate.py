"""Evaluate a policy on tasks with FC-SWE's verifier-assisted protocol: Resolved@1, Resolved@2 and
conditional recovery.

Each task gets ``chains`` independent recovery chains of up to ``attempts`` attempts (attempt 2
sees the failed patch and the verifier's diagnostics when ``context_variant`` is
"patch+verifier"), run by :class:`swetrain.rollout.RolloutEngine` into ``out_dir/trajectories``.
Chain ``c`` of every task plays the role of decoding seed ``c``: outcomes form an ``[S, T, K]``
matrix and :mod:`swetrain.eval.metrics` averages over seeds.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


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


def evaluate_policy(
    policy: Any,
    tasks: list[Any],
    out_dir: str | Path,
    *,
    chains: int = 1,
    attempts: int = 2,
    context_variant: str = "patch+verifier",
    seed: int = 0,
    max_turns: int = 8,
    max_new_tokens: int = 128,
    max_context_tokens: int = 4096,
    temperature: float = 1.0,
    workers: int = 1,
    verifier: Any = None,
    on_result: Any = None,
    batch_generation: bool = True,
    edit_match: str = "exact",
) -> EvalResult:
    """Run the protocol and compute the metrics (tasks skipped for infrastructure reasons excluded).

    Raises :class:`~swetrain.rollout.errors.NoTrajectoryError` when no trajectory was stored or
    every task was skipped (nothing left to score).
    """
    from swetrain.eval.metrics import conditional_recovery, outcome_matrix, resolved_at
    from swetrain.rollout.engine import run_local, summarize
    from swetrain.rollout.errors import NoTrajectoryError, require_trajectories

    report, trajs = run_local(
        policy, tasks, out_dir, chains=chains, attempts=attempts, context_variant=context_variant, seed=seed,
        max_turns=max_turns, max_new_tokens=max_new_tokens, max_context_tokens=max_context_tokens,
        temperature=temperature, workers=workers, verifier=verifier, on_result=on_result,
        batch_generation=batch_generation, edit_match=edit_match,
    )
    require_trajectories(report, "evaluation")
    kept = [t.instance_id for t in tasks if t.instance_id not in report.skipped_tasks]
    if not kept:
        raise NoTrajectoryError(f"evaluation: every task was skipped: {report.skipped_tasks}")
    y, _ = outcome_matrix(trajs, kept, attempts, chains)
    r1 = resolved_at(y, 1)
    r2 = resolved_at(y, 2) if attempts >= 2 else r1
    cr = conditional_recovery(y) if attempts >= 2 else math.nan
    n_failed = int((y[:, :, 0] != 1).sum())
    summary = summarize(trajs)
    return EvalResult(
        resolved_at_1=r1,
        resolved_at_2=r2,
        conditional_recovery=0.0 if math.isnan(cr) else cr,
        n_tasks=len(kept),
        chains=chains,
        n_first_failed=n_failed,
        invalid_turn_rate=float(summary.get("invalid_turn_rate", 0.0)),
        seconds=report.seconds,
        skipped_tasks=dict(report.skipped_tasks),
        per_task={iid: y[:, i, :].tolist() for i, iid in enumerate(kept)},
        infra_failures=int(report.infra_failures),
        model_failures=int((y == 0).sum()),
    )
