"""Evaluation metrics of both papers (pure functions, numpy; torch tensors accepted).

Attempt outcome matrices
------------------------
``outcomes`` is ``[T, K]`` (tasks x attempts) or ``[S, T, K]`` (seeds x tasks x attempts) with
1 = resolved, 0 = failed, NaN = not executed (after a success, or missing). A missing evaluation
counts as unresolved, never dropped (full task denominator). With several seeds, each metric is
computed per seed and averaged over seeds.

Rates are returned as fractions in [0, 1]; multiply by 100 for percentages. Category scores in
:func:`category_summary` keep the units they are given in (the papers use percentage points).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

FULL = "full"


def _array(x: Any, name: str) -> np.ndarray:
    if hasattr(x, "detach"):  # torch tensor
        x = x.detach().cpu().numpy()
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: cannot be read as a numeric array ({exc})") from None
    return a


def _outcomes(outcomes: Any) -> np.ndarray:
    """Return outcomes as ``[S, T, K]`` float64, validating values in {0, 1, NaN}."""
    y = _array(outcomes, "outcomes")
    if y.ndim == 2:
        y = y[None]
    if y.ndim != 3:
        raise ValueError(f"outcomes: expected shape [T, K] or [S, T, K], got {y.shape}")
    if y.shape[1] == 0 or y.shape[2] == 0:
        raise ValueError(f"outcomes: needs at least one task and one attempt, got {y.shape}")
    ok = np.isnan(y) | (y == 0) | (y == 1)
    if not ok.all():
        bad = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise ValueError(f"outcomes: value {y[bad]} at {bad}; expected 0, 1 or NaN")
    return y


def _solved_by(y: np.ndarray) -> np.ndarray:
    """``[S, T, K]`` bool: task solved within the first k+1 attempts."""
    return np.maximum.accumulate(np.nan_to_num(y, nan=0.0) == 1, axis=2)


def resolved_at(outcomes: Any, k: int) -> float:
    """Resolved@k: share of tasks solved within their first ``k`` attempts (mean over seeds).

    FC-SWE's Resolved@1 / Resolved@2 / cumulative Resolved@K. Shapes: ``[T, K]`` or ``[S, T, K]``.
    """
    y = _outcomes(outcomes)
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= y.shape[2]:
        raise ValueError(f"k: must be an integer in [1, {y.shape[2]}], got {k!r}")
    return float(_solved_by(y)[:, :, k - 1].mean(axis=1).mean())


def resolved_curve(outcomes: Any) -> list[float]:
    """``[Resolved@1, ..., Resolved@K]`` (non-decreasing)."""
    y = _outcomes(outcomes)
    return [float(v) for v in _solved_by(y).mean(axis=1).mean(axis=0)]


def conditional_recovery(outcomes: Any) -> float:
    """P(attempt 2 resolves | attempt 1 did not), FC-SWE's conditional recovery rate.

    Per seed this equals ``(R@2 − R@1)/(1 − R@1)``; FC-SWE's 41.7% / 52.8% give 19.0%. A missing
    second attempt after a failed first one counts as a failed recovery. Returns NaN when no task
    failed its first attempt (in any seed). Works for feedback retries and for independent
    resamples alike (the paper's feedback-vs-resample comparison applies it to both matrices).
    """
    y = _outcomes(outcomes)
    if y.shape[2] < 2:
        raise ValueError(f"outcomes: conditional recovery needs K >= 2 attempts, got K={y.shape[2]}")
    first_failed = y[:, :, 0] != 1
    second_ok = y[:, :, 1] == 1
    n = first_failed.sum(axis=1)
    rates = [float((first_failed[s] & second_ok[s]).sum() / n[s]) for s in range(y.shape[0]) if n[s] > 0]
    return float(np.mean(rates)) if rates else math.nan


def recovery_from_resolved(r_at_1: float, r_at_2: float) -> float:
    """Conditional recovery from aggregate rates: ``(R@2 − R@1) / (1 − R@1)`` (fractions)."""
    for name, v in (("r_at_1", r_at_1), ("r_at_2", r_at_2)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{name}: must be a fraction in [0, 1], got {v!r}")
    if r_at_2 < r_at_1:
        raise ValueError(f"r_at_2: Resolved@2 ({r_at_2}) cannot be below Resolved@1 ({r_at_1})")
    if r_at_1 == 1.0:
        return math.nan
    return (r_at_2 - r_at_1) / (1.0 - r_at_1)


@dataclass(frozen=True)
class TokenBudget:
    """Cheapest attempt budget reaching a resolve-rate threshold."""

    k: int  # attempt budget (1-based)
    resolved: float  # Resolved@k at that budget
    tokens_per_task: float  # mean cumulative tokens per task spent under budget k


def cumulative_tokens(outcomes: Any, tokens: Any) -> np.ndarray:
    """Mean cumulative tokens per task for each budget ``k = 1..K`` (``[K]``, mean over seeds).

    An attempt's tokens count under budget ``k`` when it is among the first ``k``, was executed
    (outcome not NaN) and no earlier attempt succeeded (tasks stop after success).
    """
    y = _outcomes(outcomes)
    tk = _array(tokens, "tokens")
    if tk.ndim == 2:
        tk = tk[None]
    if tk.shape != y.shape:
        raise ValueError(f"tokens: shape {tk.shape} does not match outcomes {y.shape}")
    solved_before = np.zeros_like(y, dtype=bool)
    solved_before[:, :, 1:] = _solved_by(y)[:, :, :-1]
    counted = ~np.isnan(y) & ~solved_before
    bad = counted & ~np.isfinite(tk)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"tokens: executed attempt at {idx} has no finite token count")
    if (tk[counted] < 0).any():
        raise ValueError("tokens: token counts must be non-negative")
    spent = np.where(counted, tk, 0.0)
    return np.cumsum(spent, axis=2).mean(axis=1).mean(axis=0)


def tokens_to_reach(outcomes: Any, tokens: Any, threshold: float) -> TokenBudget | None:
    """Smallest budget ``k`` with Resolved@k ≥ ``threshold`` and its token cost (FC-SWE Fig. 5b).

    Args:
        outcomes: ``[T, K]`` or ``[S, T, K]`` attempt outcomes.
        tokens: same shape, tokens (input + output) spent by each attempt; ignored where the
            attempt did not run.
        threshold: target resolve rate as a fraction in [0, 1].

    Returns:
        :class:`TokenBudget`, or ``None`` when no budget up to K reaches the threshold.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold: must be a fraction in [0, 1], got {threshold!r}")
    curve = resolved_curve(outcomes)
    cum = cumulative_tokens(outcomes, tokens)
    for k, r in enumerate(curve, start=1):
        if r >= threshold - 1e-12:
            return TokenBudget(k=k, resolved=r, tokens_per_task=float(cum[k - 1]))
    return None


@dataclass(frozen=True)
class CategorySummary:
    """Category-level comparison of a model against a base (seed 000, eqs. 28-29, Table 13).

    ``gains[c] = model_c − base_c``; ``full_gain``; ``g_sim = min_c gains[c]``;
    ``ssg = full_gain − g_sim``; ``recovery[c] = gains[c] / (expert_c − base_c)`` (fraction;
    NaN where the expert did not move), ``None`` without experts.
    """

    gains: dict[str, float]
    full_gain: float
    g_sim: float
    ssg: float
    recovery: dict[str, float] | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _scores(d: Mapping[str, float], name: str) -> dict[str, float]:
    if not isinstance(d, Mapping):
        raise ValueError(f"{name}: expected a mapping {{category: score, 'full': score}}")
    out = {}
    for k, v in d.items():
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{name}[{k!r}]: score {v!r} is not a number") from None
        if not math.isfinite(f):
            raise ValueError(f"{name}[{k!r}]: score must be finite, got {v!r}")
        out[str(k)] = f
    return out


def category_summary(
    base: Mapping[str, float],
    model: Mapping[str, float],
    expert: Mapping[str, float] | None = None,
) -> CategorySummary:
    """Gains per category, G_sim, SSG and expert-gain recovery (seed 000, Tables 12-13).

    Args:
        base, model: ``{category: score, "full": score}``; the categories are the keys of
            ``base`` other than ``"full"``, and ``model`` must score exactly those.
        expert: optional ``{category: score}`` of the category-routed experts (``"full"`` ignored).

    With Table 12's numbers (base A/B/C/full 51.74/54.39/51.87/52.65, MOPD 58.07/59.37/56.63/58.04,
    experts 59.58/58.87/57.48) this gives G_sim 4.76, SSG 0.63 and recovery 80.7/111.2/84.8%.
    """
    b = _scores(base, "base")
    m = _scores(model, "model")
    for name, d in (("base", b), ("model", m)):
        if FULL not in d:
            raise ValueError(f"{name}: missing the {FULL!r} score")
    cats = [c for c in b if c != FULL]
    if not cats:
        raise ValueError("base: needs at least one category besides 'full'")
    if set(m) - {FULL} != set(cats):
        raise ValueError(
            f"model: categories {sorted(set(m) - {FULL})} do not match base categories {sorted(cats)}"
        )
    gains = {c: m[c] - b[c] for c in cats}
    full_gain = m[FULL] - b[FULL]
    g_sim = min(gains.values())
    recovery = None
    if expert is not None:
        e = _scores(expert, "expert")
        missing = [c for c in cats if c not in e]
        if missing:
            raise ValueError(f"expert: missing categories {missing}")
        recovery = {
            c: (gains[c] / (e[c] - b[c]) if e[c] != b[c] else math.nan) for c in cats
        }
    return CategorySummary(gains=gains, full_gain=full_gain, g_sim=g_sim, ssg=full_gain - g_sim, recovery=recovery)


@dataclass(frozen=True)
class BootstrapCI:
    """Paired-bootstrap interval of ``mean(a − b)`` over instances."""

    mean_diff: float
    low: float
    high: float
    level: float
    n_resamples: int


def paired_bootstrap(
    scores_a: Any,
    scores_b: Any,
    n: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> BootstrapCI:
    """Paired instance bootstrap of the mean score difference ``a − b`` (seed 000, Table 14).

    Args:
        scores_a, scores_b: ``[N]`` per-instance scores, or ``[S, N]`` per round (averaged over
            rounds first, as in the paper). Same instances in the same order.
        n: bootstrap resamples; ``seed``: RNG seed (deterministic); ``level``: CI mass (0.95).

    Returns:
        :class:`BootstrapCI` with the observed mean difference and percentile bounds, in the units
        of the scores.
    """
    a = _array(scores_a, "scores_a")
    b = _array(scores_b, "scores_b")
    for name, x in (("scores_a", a), ("scores_b", b)):
        if x.ndim not in (1, 2) or x.shape[-1] == 0:
            raise ValueError(f"{name}: expected shape [N] or [S, N] with N >= 1, got {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError(f"{name}: scores must be finite (score a missing run as 0)")
    a = a.mean(axis=0) if a.ndim == 2 else a
    b = b.mean(axis=0) if b.ndim == 2 else b
    if a.shape != b.shape:
        raise ValueError(f"scores_b: {b.shape[0]} instances but scores_a has {a.shape[0]}")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n: must be a positive integer, got {n!r}")
    if not 0 < level < 1:
        raise ValueError(f"level: must be in (0, 1), got {level!r}")
    d = a - b
    rng = np.random.default_rng(seed)
    N = d.shape[0]
    means = np.empty(n)
    chunk = max(1, 2_000_000 // N)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        idx = rng.integers(0, N, size=(stop - start, N))
        means[start:stop] = d[idx].mean(axis=1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return BootstrapCI(mean_diff=float(d.mean()), low=float(lo), high=float(hi), level=level, n_resamples=int(n))


# --------------------------------------------------------------------------- the eval protocol
def outcome_matrix(
    records: Any,
    task_ids: list[str] | None = None,
    attempts: int | None = None,
    samples: int | None = None,
    *,
    value: Any = None,
) -> tuple[np.ndarray, list[str]]:
    """``[S, T, K]`` matrix of attempt records and its task ids: the one place outcome matrices are built.

    ``records`` are objects with ``instance_id``, ``chain`` (the sample/seed index s), ``attempt``
    (1-based r) and ``resolved`` (stored trajectories). Cell ``[s, t, r-1]`` is 1/0 (``value``: a
    function of the record giving another number, e.g. its tokens), NaN where the attempt did not run
    (FC-SWE chains stop at their first success, q_{c,r+1} = q_{c,r}(1 - y_{c,r})). ``task_ids``
    (default: the sorted ids of the records) fixes the rows (records of other tasks are ignored);
    ``attempts``/``samples`` widen K/S beyond what the records show.
    """
    records = list(records)
    tasks = list(task_ids) if task_ids is not None else sorted({r.instance_id for r in records})
    col = {iid: i for i, iid in enumerate(tasks)}
    rows = [r for r in records if r.instance_id in col]
    k = max([attempts or 1] + [int(r.attempt) for r in rows])
    s = max([samples or 1] + [int(r.chain) + 1 for r in rows])
    y = np.full((s, len(tasks), k), np.nan)
    for r in rows:
        if int(r.attempt) < 1:
            raise ValueError(f"records: attempt numbers start at 1, got {r.attempt!r} for {r.instance_id}")
        y[int(r.chain), col[r.instance_id], int(r.attempt) - 1] = (
            (1.0 if r.resolved else 0.0) if value is None else float(value(r))
        )
    return y, tasks


def _excluded(y: np.ndarray, excluded: Any) -> np.ndarray:
    if excluded is None:
        return np.zeros(y.shape[:2], dtype=bool)
    ex = np.asarray(excluded, dtype=bool)
    if ex.ndim == 1:
        ex = np.broadcast_to(ex, y.shape[:2])
    if ex.shape != y.shape[:2]:
        raise ValueError(f"excluded: shape {ex.shape} does not match outcomes' [S, T] {y.shape[:2]}")
    return ex


def resolved_curves_per_seed(outcomes: Any, excluded: Any = None) -> np.ndarray:
    """``[S, K]``: Resolved@k of each seed over the tasks it scored (FC-SWE Fig. 5a per seed).

    ``excluded`` (``[S, T]`` or ``[T]`` bool) marks tasks a seed never scored (infrastructure
    failures): they leave that seed's denominator instead of counting as failures. A non-excluded
    task without any executed attempt counts as unresolved. A seed that scored no task is NaN.
    """
    y = _outcomes(outcomes)
    ex = _excluded(y, excluded)
    solved = _solved_by(y)
    out = np.full((y.shape[0], y.shape[2]), np.nan)
    for s in range(y.shape[0]):
        keep = ~ex[s]
        if keep.any():
            out[s] = solved[s, keep].mean(axis=0)
    return out


def seed_mean_std(per_seed: Any) -> tuple[list[float], list[float]]:
    """Mean and spread over seeds of ``[S, K]`` per-seed rates (sample std, ddof=1; 0 with one seed);
    seeds that scored nothing (NaN rows) are left out."""
    a = _array(per_seed, "per_seed")
    a = a[~np.isnan(a).all(axis=1)]
    if a.shape[0] == 0:
        raise ValueError("per_seed: no seed scored any task")
    std = a.std(axis=0, ddof=1) if a.shape[0] > 1 else np.zeros(a.shape[1])
    return [float(v) for v in a.mean(axis=0)], [float(v) for v in std]


def _per_seed(y: np.ndarray, ex: np.ndarray, fn: Any) -> list[Any]:
    return [fn(y[s][~ex[s]][None]) for s in range(y.shape[0]) if (~ex[s]).any()]


def protocol_summary(
    outcomes: Any,
    tokens: Any = None,
    *,
    excluded: Any = None,
    routes: list[str | None] | None = None,
    thresholds: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5),
) -> dict[str, Any]:
    """The headline numbers of FC-SWE's evaluation protocol from one run's matrices.

    Args:
        outcomes: ``[S, T, K]`` (seeds x tasks x attempts; 1/0/NaN = not executed).
        tokens: same shape, tokens (prompt + generated) of each executed attempt, or None.
        excluded: ``[S, T]`` infrastructure failures, left out of that seed's denominators.
        routes: per task its route (``A``/``B``/``C``; None = ``unassigned``) for the breakdown.
        thresholds: resolve rates for ``tokens_to_reach`` (Fig. 5b).

    Returns ``resolved_at`` (Fig. 5a: R@1..R@K, mean over seeds), ``resolved_at_std``,
    ``conditional_recovery`` (P(r=2 resolves | r=1 failed), Table 1; None with K=1 or no first
    failure), ``cumulative_tokens`` (mean tokens per task under each budget k),
    ``tokens_to_reach`` ({threshold: {"k", "resolved", "tokens_per_task"} or None}; Fig. 5b) and
    ``by_route`` ({route: {"tasks", "resolved_at", "conditional_recovery"}}). Every figure is computed
    per seed over the tasks that seed scored, then averaged over seeds.
    """
    y = _outcomes(outcomes)
    ex = _excluded(y, excluded)
    curves = resolved_curves_per_seed(y, ex)
    mean, std = seed_mean_std(curves)
    recs = [v for v in _per_seed(y, ex, conditional_recovery) if not math.isnan(v)] if y.shape[2] >= 2 else []
    out: dict[str, Any] = {
        "resolved_at": mean,
        "resolved_at_std": std,
        "conditional_recovery": float(np.mean(recs)) if recs else None,
    }
    if tokens is not None:
        tk = _array(tokens, "tokens")
        if tk.ndim == 2:
            tk = tk[None]
        if tk.shape != y.shape:
            raise ValueError(f"tokens: shape {tk.shape} does not match outcomes {y.shape}")
        cum = np.mean([cumulative_tokens(y[s][~ex[s]][None], tk[s][~ex[s]][None])
                       for s in range(y.shape[0]) if (~ex[s]).any()], axis=0)
        out["cumulative_tokens"] = [float(v) for v in cum]
        reach: dict[str, Any] = {}
        for th in thresholds:
            if not 0.0 <= th <= 1.0:
                raise ValueError(f"thresholds: {th!r} is not a fraction in [0, 1]")
            k = next((i for i, r in enumerate(mean) if r >= th - 1e-12), None)
            reach[f"{th:g}"] = None if k is None else {"k": k + 1, "resolved": mean[k], "tokens_per_task": float(cum[k])}
        out["tokens_to_reach"] = reach
    if routes is not None:
        if len(routes) != y.shape[1]:
            raise ValueError(f"routes: {len(routes)} entries for {y.shape[1]} tasks")
        names = [r or "unassigned" for r in routes]
        by_route: dict[str, Any] = {}
        for route in sorted(set(names)):
            cols = np.array([n == route for n in names])
            sub_ex = ex[:, cols]
            if sub_ex.all():
                continue
            sub = protocol_summary(y[:, cols], excluded=sub_ex)
            by_route[route] = {"tasks": int(cols.sum()), "resolved_at": sub["resolved_at"],
                               "conditional_recovery": sub["conditional_recovery"]}
        out["by_route"] = by_route
    return out
