"""FC-SWE's evaluation protocol (paper 001, Figures 4a, 4b, 5a, 5b) and its record, ``RUN_DIR/eval.json``.

One run = a policy x a task list x decoding seeds x up to K attempts per task:

* ``mode="feedback"``: attempt r+1 runs after attempt r failed and sees C(x, patch_r, verify_r)
  (``context``: ``patch+verifier`` = FC-SWE, ``patch-only``, ``none``; Fig. 4b's ablation);
* ``mode="resample"``: every attempt starts fresh from the task (independent resampling at the same
  attempt budget, Fig. 4a). It is the chain of ``context="none"``, recorded as its own mode.

A chain stops at its first success (later attempts are ``null``). Each seed is one
:func:`swetrain.rollout.engine.run_local` call into ``RUN_DIR/seed-<s>/`` (trajectories kept).
Tasks lost to infrastructure failures in a seed are listed under ``infra_failures`` and left out of
that seed's denominators, never counted as failures. Metrics come from
:func:`swetrain.eval.metrics.protocol_summary`.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

SCHEMA = "swetrain.eval/1"
MODES = ("feedback", "resample")
MAX_ATTEMPTS = 16
#: The paper's evaluation decoding and limits (FC-SWE, Sec. 5 setup): T 1.0, top-p 0.95, top-k 20,
#: 150 actions (agent turns) per attempt, a 200K-token context.
PAPER_PRESET = {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "max_turns": 150, "max_context_tokens": 200_000}
PRESETS = {"paper": PAPER_PRESET}
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)


class EvalError(ValueError):
    """Bad protocol settings, or an ``eval.json`` that does not follow the schema."""


class EvalProtocol(BaseModel):
    """What an evaluation runs (validated; every bad value names itself)."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(2, ge=1, le=MAX_ATTEMPTS)
    mode: Literal["feedback", "resample"] = "feedback"
    context: Literal["patch+verifier", "patch-only", "none"] = "patch+verifier"
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    temperature: float = Field(0.5, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int = Field(0, ge=0)
    max_turns: int = Field(8, ge=1)
    max_new_tokens: int = Field(192, ge=1)
    max_context_tokens: int = Field(8192, ge=64)
    context_budget: int = Field(2048, ge=64)
    workers: int = Field(1, ge=1)
    edit_match: Literal["exact", "tolerant"] = "exact"  # str_replace matching (env/edit_match.py)
    preset: Optional[str] = None

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError(f"seeds must be distinct, got {v}")
        return v

    @model_validator(mode="after")
    def _resample_is_fresh(self) -> "EvalProtocol":
        if self.mode == "resample" and self.context != "none":
            raise ValueError(f"mode 'resample' starts every attempt fresh: context must be 'none', got {self.context!r}")
        return self

    @classmethod
    def build(cls, *, preset: str | None = None, context: str | None = None, **values: Any) -> "EvalProtocol":
        """Settings from a preset, overridden by the explicit ``values`` (None = not given).

        ``context`` defaults to ``patch+verifier`` in feedback mode and ``none`` in resample mode.
        """
        merged: dict[str, Any] = {}
        if preset is not None:
            if preset not in PRESETS:
                raise EvalError(f"preset {preset!r}: unknown; choose one of {', '.join(PRESETS)}")
            merged.update(PRESETS[preset])
            merged["preset"] = preset
        merged.update({k: v for k, v in values.items() if v is not None})
        mode = merged.get("mode", "feedback")
        merged["context"] = context if context is not None else ("none" if mode == "resample" else "patch+verifier")
        try:
            return cls(**merged)
        except ValidationError as exc:
            raise EvalError(_first_error(exc)) from None


def _first_error(exc: ValidationError) -> str:
    problems = []
    for e in exc.errors():
        where = ".".join(str(p) for p in e["loc"]) or "settings"
        problems.append(f"{where}: {e['msg']} (got {e.get('input')!r:.80})")
    return "; ".join(problems)


def parse_seeds(text: str) -> list[int]:
    """``"0,1,2"`` -> ``[0, 1, 2]``; a clear error otherwise."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        seeds = [int(p) for p in parts]
    except ValueError:
        raise EvalError(f"seeds {text!r}: expected comma-separated integers like 0,1,2") from None
    if len(set(seeds)) != len(seeds):
        raise EvalError(f"seeds {text!r}: seeds must be distinct")
    return seeds


# ------------------------------------------------------------------------------------- running
def run_eval(
    policy: Any,
    tasks: list[Any],
    out_dir: str | Path,
    protocol: EvalProtocol,
    *,
    policy_name: str,
    info: dict[str, Any] | None = None,
    verifier: Any = None,
    on_result: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """Run ``protocol`` and write ``out_dir/eval.json`` (atomically, only once every seed is done).

    Returns the record. Raises :class:`EvalError` when ``out_dir`` already holds an evaluation and
    :class:`~swetrain.rollout.errors.NoTrajectoryError` when no seed stored a trajectory.
    """
    from swetrain.rollout.engine import run_local
    from swetrain.rollout.errors import NoTrajectoryError
    from swetrain.rollout.store import write_json_atomic

    out = Path(out_dir)
    if (out / "eval.json").exists() or any((out / f"seed-{s}").exists() for s in protocol.seeds):
        raise EvalError(f"out {out}: already holds an evaluation (eval.json or seed-*/); choose a new folder")
    ids = [t.instance_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise EvalError(f"tasks: duplicate instance ids {sorted({i for i in ids if ids.count(i) > 1})}")
    started = time.monotonic()
    K = protocol.attempts
    outcomes: dict[str, dict[str, list]] = {}
    tokens: dict[str, dict[str, list]] = {}
    prompt_tokens: dict[str, dict[str, list]] = {}
    generated_tokens: dict[str, dict[str, list]] = {}
    infra: dict[str, dict[str, str]] = {}
    stop_reasons: dict[str, int] = {}
    turns = invalid = 0
    for seed in protocol.seeds:
        report, trajs = run_local(
            policy, tasks, out / f"seed-{seed}", chains=1, attempts=K, context_variant=protocol.context, seed=seed,
            max_turns=protocol.max_turns, max_new_tokens=protocol.max_new_tokens,
            max_context_tokens=protocol.max_context_tokens, temperature=protocol.temperature, top_p=protocol.top_p,
            top_k=protocol.top_k, context_budget_tokens=protocol.context_budget, workers=protocol.workers,
            verifier=verifier, on_result=on_result, edit_match=protocol.edit_match,
        )
        key = str(seed)
        by_task: dict[str, list] = {iid: [] for iid in ids}
        for t in sorted(trajs, key=lambda t: (t.instance_id, t.attempt)):
            by_task[t.instance_id].append(t)
            stop_reasons[t.stop_reason] = stop_reasons.get(t.stop_reason, 0) + 1
            turns += len(t.invalid)
            invalid += sum(t.invalid)
        outcomes[key] = {iid: [int(bool(t.resolved)) for t in rows] + [None] * (K - len(rows)) for iid, rows in by_task.items()}
        tokens[key] = {iid: [int(t.input_tokens + t.output_tokens) for t in rows] for iid, rows in by_task.items()}
        prompt_tokens[key] = {iid: [int(t.input_tokens) for t in rows] for iid, rows in by_task.items()}
        generated_tokens[key] = {iid: [int(t.output_tokens) for t in rows] for iid, rows in by_task.items()}
        infra[key] = {iid: str(why) for iid, why in report.skipped_tasks.items()}
    if all(not any(v for v in tokens[str(s)].values()) for s in protocol.seeds):
        raise NoTrajectoryError(f"evaluation: no trajectory stored in any seed; infrastructure failures: {infra}")
    routes = [getattr(t, "route", None) for t in tasks]
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "policy": policy_name,
        "mode": protocol.mode,
        "context": protocol.context,
        "attempts": K,
        "seeds": list(protocol.seeds),
        "tasks": ids,
        "routes": {iid: r for iid, r in zip(ids, routes) if r},
        "outcomes": outcomes,
        "tokens": tokens,
        "prompt_tokens": prompt_tokens,
        "generated_tokens": generated_tokens,
        "infra_failures": infra,
        "protocol": protocol.model_dump(),
        **(info or {}),
        "stop_reasons": stop_reasons,
        "invalid_turn_rate": invalid / turns if turns else 0.0,
        "seconds": round(time.monotonic() - started, 2),
    }
    record.update(summarize_record(record))
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "eval.json", record)
    return record


# ------------------------------------------------------------------------------ the record
def matrices(record: dict[str, Any]) -> tuple[Any, Any, Any]:
    """``(outcomes [S,T,K], tokens [S,T,K], excluded [S,T])`` of an eval record (seeds and tasks in
    the record's order; tokens NaN where no attempt ran)."""
    import numpy as np

    seeds, ids, K = [str(s) for s in record["seeds"]], record["tasks"], int(record["attempts"])
    y = np.full((len(seeds), len(ids), K), np.nan)
    tk = np.full_like(y, np.nan)
    ex = np.zeros((len(seeds), len(ids)), dtype=bool)
    for si, s in enumerate(seeds):
        failed = record.get("infra_failures", {}).get(s, {})
        for ti, iid in enumerate(ids):
            ex[si, ti] = iid in failed
            row = record["outcomes"][s][iid]
            y[si, ti] = [np.nan if v is None else float(v) for v in row]
            spent = record["tokens"][s][iid]
            tk[si, ti, : len(spent)] = spent
    return y, tk, ex


def summarize_record(record: dict[str, Any]) -> dict[str, Any]:
    """The derived fields of ``eval.json`` (Resolved@K and the rest, :func:`~swetrain.eval.metrics.protocol_summary`)."""
    from swetrain.eval.metrics import protocol_summary

    y, tk, ex = matrices(record)
    routes = [record.get("routes", {}).get(iid) for iid in record["tasks"]]
    summary = protocol_summary(y, tk, excluded=ex, routes=routes if any(routes) else None, thresholds=THRESHOLDS)
    summary.setdefault("by_route", {})
    return summary


def _fail(path: Path, why: str) -> EvalError:
    return EvalError(f"{path}: {why}")


def load_eval(path: str | Path) -> dict[str, Any]:
    """Read and check an ``eval.json`` (or the run folder holding one) against the schema.

    Checks the seeds/tasks/outcomes/tokens layout, values (0/1/null), that a chain stops at its first
    success, and that each executed attempt has a token count. Raises :class:`EvalError` naming the
    file and the first problem.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "eval.json"
    if not p.is_file():
        raise _fail(p, "no such file (a run folder of `swetrain eval` holds eval.json)")
    try:
        record = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _fail(p, f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise _fail(p, "expected a JSON object")
    missing = [k for k in ("policy", "mode", "context", "attempts", "seeds", "tasks", "outcomes", "tokens") if k not in record]
    if missing:
        raise _fail(p, f"missing field(s) {missing}")
    K = record["attempts"]
    if not isinstance(K, int) or not 1 <= K <= MAX_ATTEMPTS:
        raise _fail(p, f"attempts: expected an integer in [1, {MAX_ATTEMPTS}], got {K!r}")
    if record["mode"] not in MODES:
        raise _fail(p, f"mode: {record['mode']!r} is not one of {', '.join(MODES)}")
    seeds, ids = record["seeds"], record["tasks"]
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) for s in seeds):
        raise _fail(p, f"seeds: expected a non-empty list of integers, got {seeds!r:.80}")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise _fail(p, "tasks: expected a non-empty list of instance ids")
    for field in ("outcomes", "tokens"):
        block = record[field]
        if not isinstance(block, dict) or sorted(block) != sorted(str(s) for s in seeds):
            raise _fail(p, f"{field}: expected one entry per seed {seeds}, got {sorted(block) if isinstance(block, dict) else block!r:.80}")
        for s in seeds:
            rows = block[str(s)]
            if not isinstance(rows, dict) or set(rows) != set(ids):
                raise _fail(p, f"{field}[{s}]: expected one entry per task of 'tasks'")
    for s in seeds:
        for iid in ids:
            row = record["outcomes"][str(s)][iid]
            where = f"outcomes[{s}][{iid}]"
            if not isinstance(row, list) or len(row) != K or any(v not in (0, 1, None) or isinstance(v, float) for v in row):
                raise _fail(p, f"{where}: expected {K} values of 0, 1 or null, got {row!r:.80}")
            ran = [v for v in row if v is not None]
            if row[: len(ran)] != ran:
                raise _fail(p, f"{where}: an attempt after a null (attempts run in order), got {row}")
            if 1 in ran[:-1]:
                raise _fail(p, f"{where}: attempts after a success (a chain stops at its first success), got {row}")
            spent = record["tokens"][str(s)][iid]
            if (not isinstance(spent, list) or len(spent) != len(ran)
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 and math.isfinite(v) for v in spent)):
                raise _fail(p, f"tokens[{s}][{iid}]: expected {len(ran)} non-negative counts (one per executed attempt), got {spent!r:.80}")
    record["_path"] = str(p)
    return record
