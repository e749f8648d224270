"""FC-SWE's evaluation protocol (paper 001, Figures 4a, 4b, 5a, 5b) and its record, ``RUN_DIR/eval.json``.

One run = a policy x a task list x decoding seeds x up to K attempts per task:

* ``mode="feedback"``: attempt r+1 runs after attempt r failed and sees C(x, patch_r, verify_r)
  (``context``: ``patch+verifier`` = FC-SWE, ``patch-only``, ``none``; Fig. 4b's ablation);
* ``mode="resample"``: every attempt starts fresh from the task (independent resampling at the same
  attempt budget, Fig. 4a). It is the chain of ``context="none"``, recorded as its own mode.

A chain stops at its first success (later attempts are ``null``). Each seed is one
:func:`swetrain.rollout.engine.run_local` call into ``RUN_DIR/seed-<s>/`` (trajectories kept) with
``chains`` independent chains per task (default 1). Every (seed, chain) is one *sample*, keyed by the
seed (``"3"``) when there is one chain per seed and ``"<seed>:<chain>"`` otherwise
(:func:`sample_keys`); outcomes and tokens are recorded per sample. Tasks lost to infrastructure
failures in a seed are listed under ``infra_failures`` (per sample) and left out of that sample's
denominators, never counted as failures; ``infra_tries`` counts the tries each seed lost (retried or
not). Metrics come from :func:`swetrain.eval.metrics.protocol_summary`.

This is the package's one evaluation: ``swetrain eval``, :func:`swetrain.eval.evaluate.evaluate_policy`
and the experts pipeline all call :func:`run_eval` and write this record.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Callable, Literal, Optional, TYPE_CHECKING

from pydantic import ConfigDict, Field, field_validator, model_validator

from swetrain.env.interface import COMMAND_TIMEOUT_S, TEST_TIMEOUT_S
from swetrain.config import ConfigError, load_layers, preset_layer
from swetrain.rollout.sampling import SamplingConfig, sampling_defaults

if TYPE_CHECKING:
    from swetrain.policy.base import Policy
    from swetrain.agent.loop import PatchVerifier

SCHEMA = "swetrain.eval/1"
MODES = ("feedback", "resample")
MAX_ATTEMPTS = 16
#: The paper's evaluation decoding and limits (FC-SWE, Sec. 5 setup): T 1.0, top-p 0.95, top-k 20,
#: 150 actions (agent turns) per attempt, a 200K-token context.
PAPER_PRESET = {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "max_turns": 150, "max_context_tokens": 200_000}
PRESETS = {"paper": PAPER_PRESET}
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)


class EvalError(ConfigError):
    """Bad protocol settings, or an ``eval.json`` that does not follow the schema."""


class EvalProtocol(SamplingConfig):
    """What an evaluation runs (validated; every bad value names itself). Decoding and the attempt's
    limits are :class:`~swetrain.rollout.sampling.SamplingConfig`'s, with the ``eval`` defaults of
    :data:`swetrain.rollout.sampling.DEFAULTS` (T 0.5, 192 tokens per call, an 8192-token context)."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(2, ge=1, le=MAX_ATTEMPTS)
    mode: Literal["feedback", "resample"] = "feedback"
    context: Literal["patch+verifier", "patch-only", "none"] = "patch+verifier"
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    chains: int = Field(1, ge=1)  # independent chains per task and seed (samples; chain c of seed s: "s:c")
    context_budget: int = Field(2048, ge=64)
    workers: int = Field(1, ge=1)
    batch_generation: bool = True  # workers > 1: the chains' generate calls share the model (records unchanged)
    edit_match: Literal["exact", "tolerant"] = "exact"  # str_replace matching (env/edit_match.py)
    command_timeout_s: float = Field(COMMAND_TIMEOUT_S, gt=0.0)  # one agent command's wall-clock limit
    test_timeout_s: float = Field(TEST_TIMEOUT_S, gt=0.0)  # the verifier's per-test limit
    preset: Optional[str] = None

    @model_validator(mode="before")
    @classmethod
    def _eval_sampling_defaults(cls, data: Any) -> Any:
        return {**sampling_defaults("eval").model_dump(), **data} if isinstance(data, dict) else data

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
        layers = []
        if preset is not None:
            name, layer = preset_layer(PRESETS, preset, "preset", EvalError)
            layers.append((name, {**layer, "preset": preset}))
        given = {k: v for k, v in values.items() if v is not None}
        mode = given.get("mode", "feedback")
        given["context"] = context if context is not None else ("none" if mode == "resample" else "patch+verifier")
        layers.append(("options", given))
        return load_layers(cls, layers, what="evaluation settings", error=EvalError)

    def sample_keys(self, seed: int) -> list[str]:
        """The keys of ``seed``'s samples in ``eval.json`` (:func:`sample_keys`)."""
        return sample_keys([seed], self.chains)


def sample_keys(seeds: list[int], chains: int = 1) -> list[str]:
    """The S axis of ``eval.json``: one key per (decoding seed, chain); the seed itself when there is
    one chain per seed (the CLI's default), ``"<seed>:<chain>"`` otherwise."""
    return [str(s) if chains == 1 else f"{s}:{c}" for s in seeds for c in range(chains)]


def record_samples(record: dict[str, Any]) -> list[str]:
    """The sample keys of an eval record (its ``seeds`` x ``chains``, absent = 1)."""
    return sample_keys(record["seeds"], int(record.get("chains", 1)))


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
    policy: Policy,
    tasks: list[Any],
    out_dir: str | Path,
    protocol: EvalProtocol,
    *,
    policy_name: str,
    info: dict[str, Any] | None = None,
    verifier: PatchVerifier | None = None,
    on_result: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """Run ``protocol`` and write ``out_dir/eval.json`` (atomically, only once every seed is done).

    The one evaluation of the package: ``swetrain eval``, :func:`swetrain.eval.evaluate.evaluate_policy`
    (the quickstart and the learning check) and the experts pipeline all run it. Returns the record.
    Raises :class:`EvalError` when ``out_dir`` already holds an evaluation and
    :class:`~swetrain.rollout.errors.NoTrajectoryError` when no seed stored a trajectory.
    """
    from swetrain.rollout.errors import NoTrajectoryError
    from swetrain.rollout.store import write_json_atomic

    out = Path(out_dir)
    if (out / "eval.json").exists() or any((out / f"seed-{s}").exists() for s in protocol.seeds):
        raise EvalError(f"out {out}: already holds an evaluation (eval.json or seed-*/); choose a new folder")
    ids = [t.instance_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise EvalError(f"tasks: duplicate instance ids {sorted({i for i in ids if ids.count(i) > 1})}")
    started = time.monotonic()
    blocks: dict[str, dict[str, Any]] = {name: {} for name in _PER_SAMPLE}
    trajs: list[Any] = []
    infra_tries: dict[str, int] = {}
    for seed in protocol.seeds:
        report, rows = _run_seed(policy, tasks, out / f"seed-{seed}", protocol, seed, verifier, on_result)
        trajs += rows
        infra_tries[str(seed)] = int(report.infra_failures)
        skipped = {iid: str(why) for iid, why in report.skipped_tasks.items()}
        for chain, key in enumerate(protocol.sample_keys(seed)):
            for name, block in _sample_blocks([t for t in rows if t.chain == chain], ids, protocol.attempts).items():
                blocks[name][key] = block
            blocks["infra_failures"][key] = skipped
    if not trajs:
        raise NoTrajectoryError(f"evaluation: no trajectory stored in any seed; infrastructure failures: {blocks['infra_failures']}")
    record = _record(protocol, tasks, policy_name, blocks, info)
    record.update(_turn_stats(trajs), infra_tries=infra_tries, seconds=round(time.monotonic() - started, 2))
    record.update(summarize_record(record))
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "eval.json", record)
    return record


#: the per-sample blocks of ``eval.json``: ``{sample key: {instance_id: ...}}``
_PER_SAMPLE = ("outcomes", "tokens", "prompt_tokens", "generated_tokens", "infra_failures")


def _run_seed(policy: Policy, tasks: list[Any], out: Path, protocol: EvalProtocol, seed: int, verifier: PatchVerifier | None,
              on_result: Callable[[Any], None] | None) -> tuple[Any, list[Any]]:
    """One decoding seed: ``protocol.chains`` chains per task into ``out``'s store."""
    from swetrain.rollout.engine import run_local

    return run_local(
        policy, tasks, out, chains=protocol.chains, attempts=protocol.attempts, context_variant=protocol.context,
        seed=seed, context_budget_tokens=protocol.context_budget, workers=protocol.workers, verifier=verifier,
        on_result=on_result, batch_generation=protocol.batch_generation, edit_match=protocol.edit_match,
        command_timeout_s=protocol.command_timeout_s, test_timeout_s=protocol.test_timeout_s,
        **protocol.sampling().model_dump(),
    )


def _sample_blocks(trajs: list[Any], ids: list[str], attempts: int) -> dict[str, dict[str, list]]:
    """One sample's outcomes (``attempts`` values of 0, 1 or null per task) and token counts."""
    by_task: dict[str, list] = {iid: [] for iid in ids}
    for t in sorted(trajs, key=lambda t: (t.instance_id, t.attempt)):
        by_task[t.instance_id].append(t)
    return {
        "outcomes": {iid: [int(bool(t.resolved)) for t in rows] + [None] * (attempts - len(rows)) for iid, rows in by_task.items()},
        "tokens": {iid: [int(t.input_tokens + t.output_tokens) for t in rows] for iid, rows in by_task.items()},
        "prompt_tokens": {iid: [int(t.input_tokens) for t in rows] for iid, rows in by_task.items()},
        "generated_tokens": {iid: [int(t.output_tokens) for t in rows] for iid, rows in by_task.items()},
    }


def _turn_stats(trajs: list[Any]) -> dict[str, Any]:
    """How the evaluation's attempts stopped and the share of invalid turns."""
    stop_reasons: dict[str, int] = {}
    for t in trajs:
        stop_reasons[t.stop_reason] = stop_reasons.get(t.stop_reason, 0) + 1
    turns = sum(len(t.invalid) for t in trajs)
    invalid = sum(sum(t.invalid) for t in trajs)
    return {"stop_reasons": stop_reasons, "invalid_turn_rate": invalid / turns if turns else 0.0}


def _record(protocol: EvalProtocol, tasks: list[Any], policy_name: str, blocks: dict[str, dict[str, Any]],
            info: dict[str, Any] | None) -> dict[str, Any]:
    ids = [t.instance_id for t in tasks]
    routes = [getattr(t, "route", None) for t in tasks]
    return {
        "schema": SCHEMA,
        "policy": policy_name,
        "mode": protocol.mode,
        "context": protocol.context,
        "attempts": protocol.attempts,
        "seeds": list(protocol.seeds),
        "chains": protocol.chains,
        "tasks": ids,
        "routes": {iid: r for iid, r in zip(ids, routes) if r},
        **blocks,
        "protocol": protocol.model_dump(),
        **(info or {}),
    }


def task_success(record: dict[str, Any], k: int | None = None, unscored: float | None = 0.0) -> dict[str, Any]:
    """Per task: the share of the samples that scored it (not lost to infrastructure) that resolved
    it within its first ``k`` attempts (default all); ``unscored`` for a task no sample scored."""
    import numpy as np

    y, _, ex = matrices(record)
    solved = (y[:, :, : k or y.shape[2]] == 1).any(axis=2)
    out: dict[str, Any] = {}
    for ti, iid in enumerate(record["tasks"]):
        keep = ~ex[:, ti]
        out[iid] = float(np.mean(solved[keep, ti])) if keep.any() else unscored
    return out


# ------------------------------------------------------------------------------ the record
def matrices(record: dict[str, Any]) -> tuple[Any, Any, Any]:
    """``(outcomes [S,T,K], tokens [S,T,K], excluded [S,T])`` of an eval record (seeds and tasks in
    the record's order; tokens NaN where no attempt ran)."""
    import numpy as np

    seeds, ids, K = record_samples(record), record["tasks"], int(record["attempts"])
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

    Checks the seeds/chains/tasks/outcomes/tokens layout, values (0/1/null), that a chain stops at
    its first success, and that each executed attempt has a token count. Raises :class:`EvalError`
    naming the file and the first problem.
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
    for check in (_header_problem, _layout_problem, _rows_problem):  # in order: each relies on the one before
        problem = check(record)
        if problem:
            raise _fail(p, problem)
    record["_path"] = str(p)
    return record


def _header_problem(record: dict[str, Any]) -> str | None:
    missing = [k for k in ("policy", "mode", "context", "attempts", "seeds", "tasks", "outcomes", "tokens") if k not in record]
    if missing:
        return f"missing field(s) {missing}"
    K, chains = record["attempts"], record.get("chains", 1)
    if not isinstance(K, int) or not 1 <= K <= MAX_ATTEMPTS:
        return f"attempts: expected an integer in [1, {MAX_ATTEMPTS}], got {K!r}"
    if not isinstance(chains, int) or isinstance(chains, bool) or chains < 1:
        return f"chains: expected an integer >= 1, got {chains!r}"
    if record["mode"] not in MODES:
        return f"mode: {record['mode']!r} is not one of {', '.join(MODES)}"
    seeds, ids = record["seeds"], record["tasks"]
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) for s in seeds):
        return f"seeds: expected a non-empty list of integers, got {seeds!r:.80}"
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        return "tasks: expected a non-empty list of instance ids"
    return None


def _layout_problem(record: dict[str, Any]) -> str | None:
    samples, ids = record_samples(record), set(record["tasks"])
    for field in ("outcomes", "tokens"):
        block = record[field]
        if not isinstance(block, dict) or sorted(block) != sorted(samples):
            got = sorted(block) if isinstance(block, dict) else block
            return f"{field}: expected one entry per seed (and chain) {samples}, got {got!r:.80}"
        for s in samples:
            if not isinstance(block[s], dict) or set(block[s]) != ids:
                return f"{field}[{s}]: expected one entry per task of 'tasks'"
    return None


def _rows_problem(record: dict[str, Any]) -> str | None:
    K = record["attempts"]
    for s in record_samples(record):
        for iid in record["tasks"]:
            row = record["outcomes"][s][iid]
            where = f"outcomes[{s}][{iid}]"
            if not isinstance(row, list) or len(row) != K or any(v not in (0, 1, None) or isinstance(v, float) for v in row):
                return f"{where}: expected {K} values of 0, 1 or null, got {row!r:.80}"
            ran = [v for v in row if v is not None]
            if row[: len(ran)] != ran:
                return f"{where}: an attempt after a null (attempts run in order), got {row}"
            if 1 in ran[:-1]:
                return f"{where}: attempts after a success (a chain stops at its first success), got {row}"
            spent = record["tokens"][s][iid]
            if (not isinstance(spent, list) or len(spent) != len(ran)
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 and math.isfinite(v) for v in spent)):
                return f"tokens[{s}][{iid}]: expected {len(ran)} non-negative counts (one per executed attempt), got {spent!r:.80}"
    return None
