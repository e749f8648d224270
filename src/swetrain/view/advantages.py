"""The advantages a training run's trainer used, recomputed from what the run stored.

The trainer does not store advantages; it computes them each step from the step's rows
(``RLTrainer.train_step``: ``trajectory_advantages`` over the step's attempt records, then
``sample_from_trajectory`` and the token broadcast with the runtime penalty). The same functions run
here on the same rows with the run's ``config.yaml``, so the page shows what the trainer computed.

Which rows form a step: ``metrics.jsonl`` says how many rows each step stored
(``rollout/trajectories`` + ``rollout/incomplete_group_rows``); when the counts do not add up to the
store (a resumed run, a cut metrics file) the rows' ``policy_version`` (the step before the update)
groups them. A task with fewer chains than ``rollout.group`` in a step had a chain given up: the
trainer left it out of the batch, and so does this (no advantage shown).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from swetrain.view.load import Run, Source


@dataclass
class TrainInfo:
    """Per row (part index, row index) of one store: (step, reward, advantage or None)."""

    rows: dict[tuple[int, int], tuple[int, float | None, float | None]] = field(default_factory=dict)
    penalty: float | None = None  # the runtime penalty's advantage on invalid turns (None: off)
    token_note: str = ""


def is_train_source(src: Source) -> bool:
    return (src.dir / "config.yaml").is_file() and ((src.dir / "metrics.jsonl").is_file() or (src.dir / "checkpoints").is_dir())


def train_advantages(run: Run, src: Source, rows: list[tuple[int, int, dict[str, Any]]]) -> TrainInfo | None:
    """Advantages of ``rows`` ((part index, row index, row with instance_id/chain/attempt/resolved/
    policy_version)) of a training store, or None (with a note) when they cannot be recomputed."""
    try:
        import yaml

        from swetrain.train.config import validate_config

        cfg = validate_config(yaml.safe_load((src.dir / "config.yaml").read_text()), origin=str(src.dir / "config.yaml"))
    except Exception as exc:  # noqa: BLE001 - an old or foreign config: no advantages, a note
        run.notes.append(f"{run.rel(src.dir / 'config.yaml')}: not a valid training config ({' '.join(str(exc).split())[:200]}); "
                         "advantages are not shown")
        return None
    try:
        from swetrain.algos import get_loss_spec
        from swetrain.train.update import AttemptRecord, trajectory_advantages

        distilled = get_loss_spec(cfg.algo.policy_loss).needs_teachers
    except Exception as exc:  # noqa: BLE001
        run.notes.append(f"advantages not shown: the trainer could not be imported ({type(exc).__name__}: {exc})")
        return None
    algo = cfg.algo
    info = TrainInfo(penalty=float(algo.invalid_penalty) if algo.runtime_penalty else None)
    if distilled:
        info.token_note = ("distillation (MOPD): token advantages come from teacher and reference log-probs (not stored); "
                           "the outcome advantage below is the reward-path estimate only")
    elif algo.use_return_to_go:
        info.token_note = ("return-to-go with K1 in the reward: token advantages depend on log-probs the trainer "
                           "recomputed; the outcome (terminal) advantage is shown on every trainable token")
    steps = _steps(run, src, rows)
    by_step: dict[int, list[tuple[int, int, dict[str, Any]]]] = defaultdict(list)
    for (pi, ri, row), step in zip(rows, steps):
        by_step[step].append((pi, ri, row))
    group = int(cfg.rollout.group)
    for step, items in by_step.items():
        chains: dict[str, set[int]] = defaultdict(set)
        for _, _, row in items:
            chains[row["instance_id"]].add(int(row["chain"]))
        kept = [it for it in items if len(chains[it[2]["instance_id"]]) >= group]
        for pi, ri, _ in items:
            info.rows[(pi, ri)] = (step, None, None)
        kept.sort(key=lambda it: (it[2]["instance_id"], int(it[2]["chain"]), int(it[2]["attempt"])))
        if not kept:
            continue
        records = [AttemptRecord(r["instance_id"], int(r["chain"]), int(r["attempt"]) - 1, bool(r["resolved"])) for _, _, r in kept]
        try:
            rewards, advs = trajectory_advantages(records, algo)
        except Exception as exc:  # noqa: BLE001
            run.notes.append(f"step {step}: advantages could not be recomputed ({type(exc).__name__}: {exc})")
            continue
        for (pi, ri, _), rew, adv in zip(kept, rewards, advs):
            info.rows[(pi, ri)] = (step, None if math.isnan(rew) else rew, None if math.isnan(adv) else adv)
    return info


def _steps(run: Run, src: Source, rows: list[tuple[int, int, dict[str, Any]]]) -> list[int]:
    metrics = run.metrics_by_dir.get(src.name) or []
    counts = []
    for m in sorted((m for m in metrics if isinstance(m.get("step"), int)), key=lambda m: m["step"]):
        n = m.get("rollout/trajectories")
        if not isinstance(n, (int, float)):
            counts = []
            break
        counts.append((m["step"], int(n) + int(m.get("rollout/incomplete_group_rows") or 0)))
    if counts and sum(n for _, n in counts) == len(rows):
        out = []
        for step, n in counts:
            out.extend([step] * n)
        return out
    return [int(r.get("policy_version") or 0) + 1 for _, _, r in rows]

