"""Per-instance mastery maps: the state of paper 000's refresh-repair-expand (RRE) curriculum.

The mastery of an instance ``x`` under a policy is estimated from ``M`` independent executable
rollouts, ``p_hat(x) = (1/M) * sum_m R(tau_m)`` with ``R`` the 0/1 verifier outcome. A
:class:`MasteryMap` keeps, per instance:

* the current estimate (``rollouts``, ``successes``, the ``phase`` that produced it). A refresh
  *replaces* it: the paper's post-RL map replaces the pre-RL map;
* every earlier estimate (``history``), so paired estimates locate regressions
  (:func:`regressions`);
* ``H(x)`` (``ever_solved``): at least one verified success in any evaluation or in the RL
  history. It survives refreshes and decides which zero-pass instances the selector may admit.

Only executed, verified rollouts count: an attempt whose verifier reported an infrastructure
failure is no evidence either way, and an instance whose rollouts all failed for infrastructure
reasons is left out of the map (to be re-estimated), never recorded as "0 of M".

The map is a JSON file written atomically (temp file + rename), so an interrupted run never
leaves a half-written map; a malformed file raises :class:`MasteryError` naming the file and
the problem.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TYPE_CHECKING

from swetrain.env.interface import COMMAND_TIMEOUT_S, TEST_TIMEOUT_S
from swetrain.rollout.sampling import SamplingConfig, sampling_defaults

if TYPE_CHECKING:
    from swetrain.policy.base import Policy
    from swetrain.agent.loop import PatchVerifier

FORMAT = "swetrain-mastery"
VERSION = 1


class MasteryError(ValueError):
    """A mastery file or its use is invalid (the message names the file or instance)."""


@dataclass
class Estimate:
    """One mastery estimate of one instance: ``successes`` of ``rollouts`` verified rollouts."""

    phase: str
    rollouts: int
    successes: int

    def __post_init__(self) -> None:
        if self.rollouts < 1 or not 0 <= self.successes <= self.rollouts:
            raise MasteryError(
                f"estimate of phase {self.phase!r}: need 1 <= rollouts and 0 <= successes <= rollouts "
                f"(got {self.successes} of {self.rollouts})"
            )

    @property
    def p_hat(self) -> float:
        return self.successes / self.rollouts


@dataclass
class InstanceMastery:
    """The mastery record of one instance (current estimate, earlier ones, success evidence)."""

    instance_id: str
    current: Estimate | None = None
    history: list[Estimate] = field(default_factory=list)
    ever_solved: bool = False  # H(x)

    @property
    def p_hat(self) -> float | None:
        return None if self.current is None else self.current.p_hat

    def estimate_of(self, phase: str) -> Estimate | None:
        """The latest estimate a phase produced (current or earlier)."""
        for est in reversed([*self.history, *([self.current] if self.current else [])]):
            if est.phase == phase:
                return est
        return None


@dataclass
class MasteryMap:
    """Mastery of a set of instances under one policy lineage (see the module docstring)."""

    policy: str = ""
    instances: dict[str, InstanceMastery] = field(default_factory=dict)

    # ------------------------------------------------------------------ updates
    def refresh(self, instance_id: str, rollouts: int, successes: int, phase: str) -> InstanceMastery:
        """Record a new estimate: it becomes the current one, the old one moves to the history.

        More rollouts of the phase that made the current estimate (the same policy) are added to
        it instead: estimating a phase in several rounds gives one estimate over all its rollouts.
        """
        rec = self.instances.setdefault(instance_id, InstanceMastery(instance_id))
        if rec.current is not None and rec.current.phase == phase:
            est = Estimate(phase=phase, rollouts=rec.current.rollouts + int(rollouts),
                           successes=rec.current.successes + int(successes))
        else:
            est = Estimate(phase=phase, rollouts=int(rollouts), successes=int(successes))
            if rec.current is not None:
                rec.history.append(rec.current)
        rec.current = est
        rec.ever_solved = rec.ever_solved or est.successes > 0
        return rec

    def add_success_evidence(self, instance_ids: Iterable[str]) -> int:
        """Mark verified successes seen outside an estimate (e.g. RL history); returns how many
        instances changed from ``H(x) = 0`` to 1 (unknown instances are added, unestimated)."""
        changed = 0
        for iid in instance_ids:
            rec = self.instances.setdefault(iid, InstanceMastery(iid))
            if not rec.ever_solved:
                rec.ever_solved = True
                changed += 1
        return changed

    # ------------------------------------------------------------------ queries
    def p_hat(self, instance_id: str) -> float | None:
        rec = self.instances.get(instance_id)
        return None if rec is None else rec.p_hat

    def estimated(self, phase: str | None = None) -> set[str]:
        """Instances with a current estimate (of ``phase`` when given)."""
        return {
            iid for iid, rec in self.instances.items()
            if rec.current is not None and (phase is None or rec.current.phase == phase)
        }

    def summary(self) -> dict[str, Any]:
        """Counts by stratum and the mean pass rate of the current estimates."""
        rates = [rec.p_hat for rec in self.instances.values() if rec.p_hat is not None]
        return {
            "instances": len(self.instances),
            "estimated": len(rates),
            "mean_pass_rate": (sum(rates) / len(rates)) if rates else math.nan,
            "zero": sum(r == 0 for r in rates),
            "frontier": sum(0 < r < 1 for r in rates),
            "saturated": sum(r == 1 for r in rates),
            "ever_solved": sum(rec.ever_solved for rec in self.instances.values()),
        }

    # ------------------------------------------------------------------ storage
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "policy": self.policy,
            "instances": {
                iid: {
                    "current": asdict(rec.current) if rec.current else None,
                    "history": [asdict(h) for h in rec.history],
                    "ever_solved": rec.ever_solved,
                }
                for iid, rec in sorted(self.instances.items())
            },
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> MasteryMap:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise MasteryError(f"{source}: not a mastery map (expected a JSON object with format {FORMAT!r})")
        if data.get("version") != VERSION:
            raise MasteryError(f"{source}: mastery map version {data.get('version')!r} is not supported (expected {VERSION})")
        raw = data.get("instances")
        if not isinstance(raw, dict):
            raise MasteryError(f"{source}: 'instances' must be an object of instance id -> record")
        out = cls(policy=str(data.get("policy") or ""))
        for iid, item in raw.items():
            try:
                current = item.get("current")
                out.instances[iid] = InstanceMastery(
                    instance_id=iid,
                    current=Estimate(**current) if current else None,
                    history=[Estimate(**h) for h in item.get("history", [])],
                    ever_solved=bool(item.get("ever_solved", False)),
                )
            except (AttributeError, TypeError, MasteryError) as exc:
                raise MasteryError(f"{source}: instance {iid!r}: malformed record ({exc})") from None
        return out

    @classmethod
    def load(cls, path: str | os.PathLike) -> MasteryMap:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise MasteryError(f"{p}: mastery file does not exist") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MasteryError(f"{p}: not valid JSON ({exc})") from None
        return cls.from_dict(data, str(p))

    def save(self, path: str | os.PathLike) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, p)
        return p


# ---------------------------------------------------------------------- from trajectories
def _verified(traj: Any) -> bool:
    verdict = getattr(traj, "verdict", None)
    return verdict is not None and not getattr(verdict, "infra_failure", False)


def rollout_counts(trajectories: Iterable[Any], *, independent_only: bool = True) -> dict[str, tuple[int, int]]:
    """``{instance_id: (verified rollouts, successes)}`` (the mastery estimate's ``M`` and ``sum_m R``).

    ``independent_only``: count only first attempts (no failure context), the independent
    rollouts the estimate assumes; recovery attempts are conditioned on a failure.
    Trajectories without a verdict or with an infrastructure failure are not evidence.
    """
    counts: dict[str, list[int]] = {}
    for t in trajectories:
        if independent_only and int(getattr(t, "attempt", 1)) != 1:
            continue
        if not _verified(t):
            continue
        c = counts.setdefault(t.instance_id, [0, 0])
        c[0] += 1
        c[1] += int(bool(t.resolved))
    return {iid: (n, s) for iid, (n, s) in counts.items()}


def solved_instances(trajectories: Iterable[Any]) -> set[str]:
    """Instances with at least one verified success among ``trajectories`` (any attempt): H(x)."""
    return {t.instance_id for t in trajectories if _verified(t) and t.resolved}


def update_from_trajectories(mastery: MasteryMap, trajectories: Iterable[Any], phase: str, *,
                             refresh: bool = True) -> dict[str, int]:
    """Fold stored trajectories into ``mastery``.

    ``refresh``: replace the estimate of every instance with verified first attempts (the
    mastery estimate over them); otherwise only record their successes as evidence (an RL run's history, whose
    rollouts come from a policy that changed during the run, is evidence of ``H(x)`` but not an
    estimate of the final policy's mastery). Returns how many estimates were refreshed and how
    many instances gained ``H(x) = 1``.
    """
    trajs = list(trajectories)
    solved_before = {iid for iid, rec in mastery.instances.items() if rec.ever_solved}
    refreshed = 0
    if refresh:
        for iid, (n, s) in sorted(rollout_counts(trajs).items()):
            mastery.refresh(iid, n, s, phase)
            refreshed += 1
    mastery.add_success_evidence(sorted(solved_instances(trajs)))
    solved_after = {iid for iid, rec in mastery.instances.items() if rec.ever_solved}
    return {"refreshed": refreshed, "new_evidence": len(solved_after - solved_before)}


def regressions(mastery: MasteryMap, before: str, after: str) -> dict[str, list[str]]:
    """Paired comparison of two phases' estimates on the instances both estimated.

    Returns ``{"improved": [...], "unchanged": [...], "regressed": [...]}`` (instance ids,
    sorted), as the paper's matched-record analysis of base -> post-RL -> post-SFT rates.
    """
    out: dict[str, list[str]] = {"improved": [], "unchanged": [], "regressed": []}
    for iid, rec in sorted(mastery.instances.items()):
        a, b = rec.estimate_of(before), rec.estimate_of(after)
        if a is None or b is None:
            continue
        key = "improved" if b.p_hat > a.p_hat else "regressed" if b.p_hat < a.p_hat else "unchanged"
        out[key].append(iid)
    return out


def estimate_mastery(
    policy: Policy,
    tasks: list[Any],
    out_dir: str | Path,
    mastery: MasteryMap,
    *,
    phase: str,
    rollouts: int = 4,
    seed: int = 0,
    workers: int = 1,
    sampling: SamplingConfig | None = None,
    verifier: PatchVerifier | None = None,
    on_result: Any = None,
    edit_match: str = "exact",
    command_timeout_s: float = COMMAND_TIMEOUT_S,
    test_timeout_s: float = TEST_TIMEOUT_S,
    **sampling_values: Any,
) -> dict[str, Any]:
    """Run ``rollouts`` independent single-attempt rollouts per task (the rollout engine, real
    sandboxes and verifier) into ``out_dir/trajectories`` and refresh ``mastery`` with them.

    ``sampling``: a :class:`~swetrain.rollout.sampling.SamplingConfig` (decoding, top-p/top-k
    included, and the attempt's limits; default: the ``mastery`` entry of
    :data:`swetrain.rollout.sampling.DEFAULTS`) with ``sampling_values`` (its keys, e.g.
    ``max_turns=3``) replacing its fields. Returns ``{"refreshed": n, "new_evidence": n,
    "skipped": {instance_id: reason}}``; skipped tasks (infrastructure failures on every rollout)
    keep their previous estimate.
    """
    from swetrain.rollout.engine import run_local

    if rollouts < 1:
        raise MasteryError(f"rollouts: must be >= 1 (got {rollouts})")
    chosen = (sampling or sampling_defaults("mastery")).override(**sampling_values)
    report, trajs = run_local(
        policy, tasks, out_dir, chains=rollouts, attempts=1, context_variant="none", seed=seed, workers=workers,
        verifier=verifier, on_result=on_result, edit_match=edit_match, command_timeout_s=command_timeout_s,
        test_timeout_s=test_timeout_s, **chosen.sampling().model_dump(),
    )
    changes = update_from_trajectories(mastery, trajs, phase)
    return {**changes, "skipped": dict(report.skipped_tasks)}
