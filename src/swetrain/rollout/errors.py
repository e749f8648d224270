"""A run that stored no trajectory at all is a failure, not an empty success.

Limits (context, turns, tokens, wall) end attempts that are still stored and scored, so a run that
stores nothing means every chain it started was given up (infra failures, a policy or bug raising).
``swetrain rollout`` / ``swetrain eval`` then exit 1 with :func:`no_trajectory_message`, and an RL
step raises :class:`NoTrajectoryError`.
"""

from __future__ import annotations

from typing import Any


class NoTrajectoryError(RuntimeError):
    """A rollout, evaluation or training step ran chains but stored no trajectory."""


class InfraFailureError(NoTrajectoryError):
    """Most tries of a rollout, evaluation or training step were infrastructure failures (the
    sandbox, the verifier or the task environment failed, not the model): stop, never score it."""


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def no_trajectory_message(report: Any) -> str | None:
    """Why a :class:`~swetrain.rollout.engine.RolloutReport` stored nothing, in one line; None when
    it stored a trajectory or had no chain to run (e.g. everything resumed)."""
    attempted = int(report.chains_done) + int(report.chains_skipped)
    if report.trajectories or not attempted:
        return None
    first = next(iter(report.skipped_tasks.values()), "unknown error")
    return f"no trajectory stored: all {attempted} chains failed: {_one_line(first)}"

