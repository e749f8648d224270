"""Category report of the experts pipeline: ``report.json`` (the contract of issue 18),
``report.md`` and PNG plots.

``report.json``::

    {"routes": ["A", "B", "C"],
     "models": {NAME: {"per_task": {instance_id: resolved fraction over seeds},
                       "by_route": {route: score}, "full": score}},
     "metrics": {NAME: {"gains": {route: g}, "full_gain": g, "g_sim": g, "ssg": g,
                        "recovery": {route: r}}},
     "bootstrap": {NAME: {"full": {mean_diff, low, high}, route: {...}}}, ...}

NAME: ``base``, ``pooled``/``balanced`` (when run), ``expert_<route>``, ``routed_experts`` (route
r's tasks scored by ``expert_r``; unassigned tasks by the base) and ``mopd``. Scores are fractions
in [0, 1]. ``full`` is the mean over every evaluated task (unassigned ones included, as in the
paper). Metrics come from :func:`swetrain.eval.metrics.category_summary` (gains against the base,
G_sim = min gain, SSG = full gain - G_sim, recovery = gain / routed experts' gain) and intervals
from :func:`swetrain.eval.metrics.paired_bootstrap` (model - base, paired by instance).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FULL = "full"


def _clean(x: Any) -> Any:
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else x
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def model_scores(per_task: dict[str, float], eval_ids: dict[str, list[str]], unassigned: list[str]) -> dict[str, Any]:
    by_route = {}
    for route, ids in eval_ids.items():
        missing = [i for i in ids if i not in per_task]
        if missing:
            raise ValueError(f"route {route}: no score for {missing[:3]}")
        by_route[route] = sum(per_task[i] for i in ids) / len(ids)
    all_ids = [i for ids in eval_ids.values() for i in ids] + list(unassigned)
    full = sum(per_task[i] for i in all_ids) / len(all_ids)
    return {"per_task": {i: per_task[i] for i in all_ids}, "by_route": by_route, "full": full}


def build_report(routes: list[str], eval_ids: dict[str, list[str]], unassigned: list[str],
                 evals: dict[str, dict[str, float]], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """``evals``: model name -> {instance_id: score}; needs ``base`` and ``expert_<route>`` for
    every route. Adds ``routed_experts``."""
    from swetrain.eval.metrics import category_summary, paired_bootstrap

    eval_ids = {r: list(eval_ids[r]) for r in routes}
    for r in routes:
        if f"expert_{r}" not in evals:
            raise ValueError(f"report: no evaluation of expert_{r}")
    routed: dict[str, float] = {}
    for r in routes:
        for i in eval_ids[r]:
            routed[i] = evals[f"expert_{r}"][i]
    for i in unassigned:
        routed[i] = evals["base"][i]
    evals = {**evals, "routed_experts": routed}
    models = {name: model_scores(pt, eval_ids, unassigned) for name, pt in evals.items()}

    def flat(name: str) -> dict[str, float]:
        return {**models[name]["by_route"], FULL: models[name]["full"]}

    expert_ref = models["routed_experts"]["by_route"]
    metrics = {}
    boot = {}
    base_pt = models["base"]["per_task"]
    for name in models:
        s = category_summary(flat("base"), flat(name), expert_ref)
        metrics[name] = {"gains": s.gains, "full_gain": s.full_gain, "g_sim": s.g_sim, "ssg": s.ssg,
                         "recovery": s.recovery}
        if name == "base":
            continue
        pt = models[name]["per_task"]
        b = {}
        for scope, ids in [(FULL, list(pt)), *[(r, eval_ids[r]) for r in routes]]:
            ci = paired_bootstrap([pt[i] for i in ids], [base_pt[i] for i in ids], n=n_boot, seed=seed)
            b[scope] = {"mean_diff": ci.mean_diff, "low": ci.low, "high": ci.high, "level": ci.level}
        boot[name] = b
    return _clean({"routes": list(routes), "models": models, "metrics": metrics, "bootstrap": boot,
                   "eval_tasks": {r: len(eval_ids[r]) for r in routes}, "unassigned_eval": len(unassigned)})


@contextmanager
def _saved(path: Path, figsize: tuple[float, float]):
    """A figure and its axes; on leaving the block: tight layout, written to ``path``, closed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    try:
        yield fig, ax
        fig.tight_layout()
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)


def write_plots(report: dict[str, Any], out: Path) -> list[Path]:
    routes = report["routes"]
    names = list(report["models"])
    paths = [out / "per_route.png", out / "gain_recovery.png", out / "mopd_curves.png", out / "expert_stages.png"]
    with _saved(paths[0], (max(6, 1.2 * len(names)), 3.5)) as (_, ax):  # per-route bars
        width = 0.8 / (len(routes) + 1)
        for j, scope in enumerate([*routes, FULL]):
            vals = [(report["models"][n]["by_route"].get(scope) if scope != FULL else report["models"][n]["full"]) or 0.0
                    for n in names]
            ax.bar([i + j * width for i in range(len(names))], vals, width, label=scope)
        ax.set_xticks([i + width * len(routes) / 2 for i in range(len(names))], names, rotation=20, fontsize=8)
        ax.set_ylabel("resolved fraction")
        ax.legend(fontsize=8)
        ax.set_title("per-route resolution")
    with _saved(paths[1], (5, 3)) as (_, ax):  # gain recovery
        rec = (report["metrics"].get("mopd") or {}).get("recovery") or {}
        ax.bar(routes, [rec.get(r) if rec.get(r) is not None else 0.0 for r in routes])
        ax.set_ylabel("MOPD gain / routed expert gain")
        ax.set_title("gain recovery (undefined bars drawn at 0)")
    with _saved(paths[2], (5, 3)) as (_, ax):  # MOPD curves
        curve = report.get("mopd_curve") or []
        steps = [c["step"] for c in curve]
        ax.plot(steps, [c["kl"] if c["kl"] is not None else math.nan for c in curve], marker="o", label="student-teacher K1")
        ax2 = ax.twinx()
        ax2.plot(steps, [c["score"] if c["score"] is not None else math.nan for c in curve], marker="s", color="C1",
                 label="rollout score")
        ax.set_xlabel("MOPD step")
        ax.set_ylabel("K1")
        ax2.set_ylabel("rollout score")
        ax.set_title("MOPD")
    with _saved(paths[3], (6, 3)) as (_, ax):  # stage-wise expert curves
        for r, stages in (report.get("stages") or {}).items():
            ax.plot(range(len(stages)), [s["score"] for s in stages], marker="o", label=f"expert {r}")
        ax.set_xlabel("stage (initial RL, repair SFT, expanded RL, ...)")
        ax.set_ylabel("target-route score")
        ax.legend(fontsize=8)
    return paths


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def write_markdown(report: dict[str, Any], path: Path, plots: list[Path], cfg: Any = None) -> None:
    routes = report["routes"]
    lines = ["# Category-aware experts: report", ""]
    if cfg is not None:
        lines += [f"Preset `{cfg.preset}`, base `{cfg.policy}`, {cfg.eval.samples} sample(s) per evaluation task, "
                  f"evaluation tasks per route: {report['eval_tasks']}, unassigned: {report['unassigned_eval']}.", ""]
    lines += ["## Resolution (%)", "", "| model | " + " | ".join(routes) + " | full |",
              "|---|" + "---|" * (len(routes) + 1)]
    for name, m in report["models"].items():
        lines.append(f"| {name} | " + " | ".join(_pct(m["by_route"].get(r)) for r in routes) + f" | {_pct(m['full'])} |")
    lines += ["", "## Gains over the base (points), G_sim, SSG, recovery", "",
              "| model | " + " | ".join(f"gain {r}" for r in routes) + " | full gain | G_sim | SSG | "
              + " | ".join(f"recovery {r}" for r in routes) + " |",
              "|---|" + "---|" * (2 * len(routes) + 3)]
    for name, m in report["metrics"].items():
        rec = m.get("recovery") or {}
        lines.append(f"| {name} | " + " | ".join(_pct(m["gains"].get(r)) for r in routes)
                     + f" | {_pct(m['full_gain'])} | {_pct(m['g_sim'])} | {_pct(m['ssg'])} | "
                     + " | ".join("-" if rec.get(r) is None else f"{100 * rec[r]:.0f}%" for r in routes) + " |")
    lines += ["", "Recovery is undefined (-) where the routed expert did not move from the base.", "",
              "## Paired bootstrap vs base (95%, points)", "", "| model | full | " + " | ".join(routes) + " |",
              "|---|" + "---|" * (len(routes) + 1)]
    for name, b in report["bootstrap"].items():
        cells = [f"{_pct(b[s]['mean_diff'])} [{_pct(b[s]['low'])}, {_pct(b[s]['high'])}]" for s in [FULL, *routes]]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Expert stages (target-route score, %)", ""]
    for r, stages in (report.get("stages") or {}).items():
        lines.append(f"- expert {r}: " + ", ".join(
            f"{s['stage']} {_pct(s['score'])}" + (" (skipped: nothing to replay, model unchanged)" if s.get("skipped") else "")
            for s in stages))
    lines += ["", "## Paired mastery (improved / unchanged / regressed instances)", ""]
    for r, pm in (report.get("paired_mastery") or {}).items():
        for key, c in pm.items():
            lines.append(f"- {r} {key}: {c.get('improved', 0)} / {c.get('unchanged', 0)} / {c.get('regressed', 0)}")
    curve = report.get("mopd_curve") or []
    if curve:
        lines += ["", "## MOPD per step", "", "| step | student-teacher K1 | rollout score |", "|---|---|---|"]
        for c in curve:
            kl = "-" if c["kl"] is None else f"{c['kl']:.4f}"
            lines.append(f"| {c['step']} | {kl} | {_pct(c['score'])} |")
    secs = report.get("phase_seconds") or {}
    if secs:
        lines += ["", "## Phase times (s)", ""] + [f"- {k}: {v}" for k, v in secs.items()]
    lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    path.write_text("\n".join(lines) + "\n")
