"""Run reports: Markdown with the headline numbers and PNG plots (matplotlib, Agg backend)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def plot_reward(metrics: list[dict[str, Any]], path: Path) -> Path:
    """Reward (mean verifier reward of the step's attempts) and Resolved@1 of rollouts per step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [m["step"] for m in metrics]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, [m.get("reward/mean", 0.0) or 0.0 for m in metrics], marker="o", label="mean reward")
    if any("rollout/resolved@1" in m for m in metrics):
        ax.plot(steps, [m.get("rollout/resolved@1") or 0.0 for m in metrics], marker="s", label="rollout Resolved@1")
    ax.set_xlabel("RL step")
    ax.set_ylabel("fraction")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Training reward per step")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_before_after(before: dict[str, float], after: dict[str, float], path: Path) -> Path:
    """Grouped bars: Resolved@1, Resolved@2, conditional recovery before vs after training."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["resolved_at_1", "resolved_at_2", "conditional_recovery"]
    labels = ["Resolved@1", "Resolved@2", "Cond. recovery"]
    x = range(len(keys))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar([i - 0.2 for i in x], [before[k] for k in keys], width=0.4, label="before")
    ax.bar([i + 0.2 for i in x], [after[k] for k in keys], width=0.4, label="after")
    ax.set_xticks(list(x), labels)
    ax.set_ylim(0, 1)
    ax.set_ylabel("fraction of held-out tasks")
    ax.set_title("Held-out evaluation before vs after RL")
    ax.legend()
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
    plots.append(plot_before_after(before, after, run_dir / "resolved_before_after.png").name)
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
    lines += ["", "## Training", ""]
    if metrics:
        lines += ["| step | reward | rollout R@1 | loss | grad norm | step time (s) |", "|---:|---:|---:|---:|---:|---:|"]
        for m in metrics:
            lines.append(
                f"| {m['step']} | {m.get('reward/mean', 0.0) or 0.0:.3f} | {m.get('rollout/resolved@1', 0.0) or 0.0:.3f} | "
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
