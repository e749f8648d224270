"""Run reports: Markdown with the headline numbers and PNG plots (matplotlib, Agg backend)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def plot_reward(metrics: list[dict[str, Any]], path: Path) -> Path:
    """Reward (mean verifier reward of the step's attempts) and the rollouts' first-attempt success
    (Resolved@1) and success within two attempts (Resolved@2) per step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [m["step"] for m in metrics]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, [m.get("reward/mean", 0.0) or 0.0 for m in metrics], marker="o", label="mean reward")
    for key, marker, label in (("rollout/resolved@1", "s", "first attempt (rollout R@1)"),
                               ("rollout/resolved@2", "^", "within 2 attempts (rollout R@2)")):
        if any(key in m for m in metrics):
            ax.plot(steps, [m.get(key) or 0.0 for m in metrics], marker=marker, label=label)
    ax.set_xlabel("RL step")
    ax.set_ylabel("fraction")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Training reward and rollout success per step")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _metric_label(metric: str) -> str:
    """``resolved_at_2`` -> ``Resolved@2``; ``frontier_success`` -> ``RL set success``."""
    return "RL set success" if metric == "frontier_success" else metric.replace("resolved_at_", "Resolved@")


def plot_before_after(before: dict[str, float], after: dict[str, float], path: Path,
                      paired: list[dict[str, Any]] | None = None, rl_set: tuple[float, float] | None = None) -> Path:
    """Grouped bars (each labelled with its value, so a chart of zeros still reads) of Resolved@1,
    Resolved@2 and conditional recovery before vs after training, and with ``rl_set`` the RL set's
    success (train tasks, fresh seeds) before and after; with ``paired``, a second panel with each
    paired after - before difference and its bootstrap 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["resolved_at_1", "resolved_at_2", "conditional_recovery"]
    labels = ["Resolved@1", "Resolved@2", "Cond. recovery"]
    if rl_set is not None:
        keys.append("rl_set_success")
        labels.append("RL set success\n(train)")
        labels[2] = "Cond.\nrecovery"
        before, after = {**before, "rl_set_success": rl_set[0]}, {**after, "rl_set_success": rl_set[1]}
    x = list(range(len(keys)))
    panels = 2 if paired else 1
    width = 6 + 1.5 * (len(keys) - 3)
    fig, axes = plt.subplots(1, panels, figsize=(width + 3.5 * (panels - 1), 3.5), squeeze=False)
    ax = axes[0][0]
    for shift, name, values in ((-0.2, "before", before), (0.2, "after", after)):
        heights = [values.get(k) or 0.0 for k in keys]
        bars = ax.bar([i + shift for i in x], heights, width=0.4, label=name)
        ax.bar_label(bars, labels=[f"{100 * h:.1f}%" for h in heights], fontsize=7, padding=1)
    ax.set_xticks(x, labels)
    ax.set_ylim(0, max(0.1, 1.15 * max([before.get(k) or 0.0 for k in keys] + [after.get(k) or 0.0 for k in keys])))
    ax.set_ylabel("fraction of held-out tasks" if rl_set is None else "fraction of tasks (RL set: of attempts)")
    ax.set_title("Held-out evaluation before vs after RL" if rl_set is None else "Before vs after RL (held-out; RL set)")
    ax.legend()
    if paired:
        ax2 = axes[0][1]
        ok = [p for p in paired if p.get("diff") is not None]
        ys = [100 * p["diff"] for p in ok]
        err = [[100 * (p["diff"] - p["ci_low"]) for p in ok], [100 * (p["ci_high"] - p["diff"]) for p in ok]]
        ax2.errorbar(range(len(ok)), ys, yerr=err, fmt="o", capsize=6)
        ax2.axhline(0, color="grey", lw=0.8)
        ax2.set_xticks(range(len(ok)), [_metric_label(p["metric"]) for p in ok])
        ax2.set_xlim(-0.6, len(ok) - 0.4)
        ax2.set_ylabel("after - before (points)")
        ax2.set_title("Paired difference, 95% CI")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_report(
    run_dir: str | Path,
    *,
    summary: dict[str, Any],
    metrics: list[dict[str, Any]],
    config: dict[str, Any] | None = None,
    notes: list[str] | None = None,
) -> Path:
    """Write ``report.md`` (+ ``reward.png``, ``resolved_before_after.png``) into ``run_dir``."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    before, after = summary["before"], summary["after"]
    plots = []
    if metrics:
        plots.append(plot_reward(metrics, run_dir / "reward.png").name)
    paired = [p for p in (summary.get("paired_at_1"), summary.get("paired")) if p]
    frontier = summary.get("frontier") or {}
    if frontier.get("paired", {}).get("diff") is not None:
        paired.append(frontier["paired"])
    rl_set = (frontier["before"], frontier["after"]) if frontier.get("before") is not None else None
    plots.append(plot_before_after(before, after, run_dir / "resolved_before_after.png", paired or None, rl_set).name)
    lines = [
        "# swetrain run report",
        "",
        f"- recipe: `{(config or {}).get('recipe', summary.get('recipe', '?'))}`, RL steps: {summary.get('steps')}",
        f"- base checkpoint: `{summary.get('base_checkpoint')}`",
        f"- trained checkpoint: `{summary.get('trained_checkpoint')}`",
        f"- held-out tasks: {summary.get('eval_tasks', '?')} x {summary.get('eval_chains', '?')} chain(s), "
        "up to 2 attempts (attempt 2 sees the failed patch + verifier diagnostics)",
        "",
        "| metric | before | after | change |",
        "|---|---:|---:|---:|",
    ]
    for key, label in (("resolved_at_1", "Resolved@1"), ("resolved_at_2", "Resolved@2"), ("conditional_recovery", "Conditional recovery")):
        b, a = before.get(key), after.get(key)
        delta = "" if b is None or a is None else f"{100 * (a - b):+.1f} pp"
        lines.append(f"| {label} | {_pct(b)} | {_pct(a)} | {delta} |")
    for tier, t in (summary.get("per_tier") or {}).items():
        lines.append(f"| Resolved@2, {tier} tier ({t['n_tasks']} tasks) | {_pct(t['before']['resolved_at_2'])} | "
                     f"{_pct(t['after']['resolved_at_2'])} | {100 * (t['after']['resolved_at_2'] - t['before']['resolved_at_2']):+.1f} pp |")
    if frontier.get("before") is not None:
        lines.append(f"| RL set success (train, {len(frontier['tasks'])} tasks x {frontier['samples']} fresh attempts) | "
                     f"{_pct(frontier['before'])} | {_pct(frontier['after'])} | {100 * (frontier['after'] - frontier['before']):+.1f} pp |")
    for p in paired:
        if p.get("diff") is not None:
            # the RL set's figures pair (task, sample) attempts; the held-out ones pair tasks
            unit = "pairs" if p.get("n_pairs") else "tasks"
            over = f"{p['n_tasks']} tasks" + (f" ({p['n_pairs']} same-seed pairs)" if p.get("n_pairs") else "")
            lines.append(f"\nPaired {_metric_label(p['metric'])} after - before over {over}: "
                         f"{100 * p['diff']:+.1f} points, 95% bootstrap interval [{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}]"
                         f" ({p.get('improved', '?')} {unit} improved, {p.get('regressed', '?')} regressed).")
    lines += ["", "## Training", ""]
    if metrics:
        lines += ["| step | reward | first attempt (rollout R@1) | within 2 attempts (rollout R@2) | loss | grad norm | step time (s) |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for m in metrics:
            lines.append(
                f"| {m['step']} | {m.get('reward/mean', 0.0) or 0.0:.3f} | {m.get('rollout/resolved@1', 0.0) or 0.0:.3f} | "
                f"{m.get('rollout/resolved@2', 0.0) or 0.0:.3f} | "
                f"{m.get('loss', 0.0) or 0.0:.4f} | {m.get('grad_norm', 0.0) or 0.0:.3f} | {m.get('time/step_s', 0.0) or 0.0:.1f} |"
            )
    lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    if config:
        lines += ["", "## Config", "", "```json", json.dumps(config, indent=2), "```"]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
