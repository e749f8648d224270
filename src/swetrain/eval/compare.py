"""``swetrain report compare`` and ``swetrain report train``: Markdown + PNG reports of eval runs and
of a trainer's metrics (paper 001, Figures 4a, 4b, 5a, 5b and the first/second-attempt split).

Files are written to a temporary folder next to ``out`` and moved into place only when every file
is done, so a failed report leaves nothing half-written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from swetrain.eval.protocol import EvalError, load_eval, matrices, record_samples


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def _staged(out: Path) -> Iterator[Path]:
    """A fresh folder that becomes ``out`` (replacing it) only if the block succeeds."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        old = out.with_name(f".{out.name}.old.{os.getpid()}")
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)


def _label(run: dict[str, Any], i: int) -> str:
    return f"{run.get('_name') or (chr(65 + i) if i < 26 else i)}: {run['policy']} {run['mode']}/{run['context']}"


def _name_runs(runs: list[dict[str, Any]]) -> None:
    """Call each run by its folder's name when those are distinct and short, else by its position (A, B, ...)."""
    names = [Path(r["_path"]).parent.name for r in runs]
    if len(set(names)) == len(names) and all(0 < len(n) <= 24 and ":" not in n for n in names):
        for r, n in zip(runs, names):
            r["_name"] = n


def paired_differences(a: dict[str, Any], b: dict[str, Any], *, n: int = 10_000, seed: int = 0) -> list[dict[str, Any]]:
    """Paired-bootstrap 95% intervals of ``a − b`` for Resolved@1, @2 (the first retry) and @K (K shared by both)
    over the tasks both runs scored in every shared seed (seed 000, Table 14's paired bootstrap)."""
    from swetrain.eval.metrics import paired_bootstrap

    if sorted(a["tasks"]) != sorted(b["tasks"]):
        only_a = sorted(set(a["tasks"]) - set(b["tasks"]))[:3]
        only_b = sorted(set(b["tasks"]) - set(a["tasks"]))[:3]
        raise EvalError(f"runs {a['_path']} and {b['_path']} do not share their tasks "
                        f"(only in the first: {only_a}..., only in the second: {only_b}...)")
    keys_a, keys_b = record_samples(a), record_samples(b)
    seeds = [s for s in keys_a if s in keys_b]
    if not seeds:
        raise EvalError(f"runs {a['_path']} and {b['_path']} share no decoding seed ({keys_a} vs {keys_b})")
    ya, _, exa = matrices(a)
    yb, _, exb = matrices(b)
    ia = [keys_a.index(s) for s in seeds]
    ib = [keys_b.index(s) for s in seeds]
    order_b = [b["tasks"].index(t) for t in a["tasks"]]
    ya, exa = ya[ia], exa[ia]
    yb, exb = yb[ib][:, order_b], exb[ib][:, order_b]
    keep = ~(exa.any(axis=0) | exb.any(axis=0))
    if not keep.any():
        raise EvalError("no task was scored by both runs in every shared seed")
    K = min(ya.shape[2], yb.shape[2])
    out = []
    for k in sorted({1, min(2, K), K}):
        sa = (ya[:, keep, :k] == 1).any(axis=2).astype(float)
        sb = (yb[:, keep, :k] == 1).any(axis=2).astype(float)
        ci = paired_bootstrap(sa, sb, n=n, seed=seed)
        out.append({"k": k, "mean_diff": ci.mean_diff, "low": ci.low, "high": ci.high, "tasks": int(keep.sum()),
                    "seeds": [s if ":" in s else int(s) for s in seeds]})
    return out


@contextmanager
def _figure(path: Path, title: str, ylabel: str, xlabel: str | None = None, grid: bool = False):
    """One 6x3.8 in. plot: yields its axes, then adds the legend and writes ``path``."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    try:
        yield ax
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if grid:
            ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)


def _grouped_bars(ax, runs: list[dict[str, Any]], labels: list[str], values, errors=None) -> None:
    """Bars of ``values(run)`` per group label, one bar per run, side by side."""
    width = 0.8 / len(runs)
    for i, r in enumerate(runs):
        xs = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(labels))]
        kwargs = {"yerr": errors(r), "capsize": 2} if errors else {}
        ax.bar(xs, values(r), width=width, label=_label(r, i), **kwargs)
    ax.set_xticks(list(range(len(labels))), labels)


def _plot_curves(runs: list[dict[str, Any]], path: Path) -> None:
    with _figure(path, "Resolved@K (mean ± std over seeds; cf. FC-SWE Fig. 5a)", "Resolved@K",
                 "attempt budget K", grid=True) as ax:
        for i, r in enumerate(runs):
            ks = list(range(1, len(r["resolved_at"]) + 1))
            ax.errorbar(ks, r["resolved_at"], yerr=r["resolved_at_std"], marker="o", capsize=3, label=_label(r, i))


def _plot_bars(runs: list[dict[str, Any]], path: Path, title: str) -> None:
    K = min(len(r["resolved_at"]) for r in runs)
    with _figure(path, title, "resolve rate") as ax:
        _grouped_bars(ax, runs, [f"R@{k + 1}" for k in range(K)], lambda r: r["resolved_at"][:K],
                      lambda r: r["resolved_at_std"][:K])


def _plot_tokens(runs: list[dict[str, Any]], path: Path) -> None:
    with _figure(path, "Resolve rate vs inference tokens (cf. FC-SWE Fig. 5b)", "Resolved@K",
                 "mean cumulative tokens per task (prompt + generated)", grid=True) as ax:
        for i, r in enumerate(runs):
            ax.plot(r["cumulative_tokens"], r["resolved_at"], marker="o", label=_label(r, i))


def _plot_routes(runs: list[dict[str, Any]], path: Path) -> None:
    routes = sorted({k for r in runs for k in r.get("by_route", {})})
    with _figure(path, "Resolved@K per route", "Resolved@K") as ax:
        _grouped_bars(ax, runs, routes,
                      lambda r: [r["by_route"].get(rt, {}).get("resolved_at", [0.0])[-1] for rt in routes])


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}"


def compare_runs(paths: list[str | Path], out: str | Path, *, n_boot: int = 10_000) -> Path:
    """Write ``out/compare.md`` and its plots for eval runs over the same tasks; returns the Markdown path."""
    if not paths:
        raise EvalError("compare needs at least one eval run")
    runs = [load_eval(p) for p in paths]
    _name_runs(runs)
    base = runs[0]
    for r in runs[1:]:
        if sorted(r["tasks"]) != sorted(base["tasks"]):
            paired_differences(base, r)  # raises the named error
    diffs = [(i, paired_differences(base, r, n=n_boot)) for i, r in enumerate(runs) if i > 0]
    with _staged(Path(out)) as tmp:
        plots = ["resolved_at_k.png", "tokens.png"]
        _plot_curves(runs, tmp / "resolved_at_k.png")
        _plot_tokens(runs, tmp / "tokens.png")
        modes = {r["mode"] for r in runs}
        if modes == {"feedback", "resample"}:
            _plot_bars(runs, tmp / "feedback_vs_resample.png", "Feedback retries vs independent resampling (cf. Fig. 4a)")
            plots.append("feedback_vs_resample.png")
        if len({r["context"] for r in runs if r["mode"] == "feedback"}) > 1:
            _plot_bars([r for r in runs if r["mode"] == "feedback"], tmp / "context_ablation.png",
                       "Failure-context ablation (cf. Fig. 4b)")
            plots.append("context_ablation.png")
        if any(r.get("by_route") for r in runs):
            _plot_routes(runs, tmp / "routes.png")
            plots.append("routes.png")
        lines = ["# swetrain eval comparison", "",
                 f"{len(base['tasks'])} tasks; R@k in %, mean ± std over seeds; tokens = prompt + generated per task.", "",
                 "| run | policy | mode | context | seeds | " + " | ".join(f"R@{k}" for k in range(1, base["attempts"] + 1))
                 + " | cond. recovery | tokens/task at K | infra failures | eval.json |",
                 "|---|---|---|---|---|" + "---:|" * base["attempts"] + "---:|---:|---:|---|"]
        for i, r in enumerate(runs):
            cells = [f"{_pct(m)} ± {_pct(s)}" for m, s in zip(r["resolved_at"], r["resolved_at_std"])]
            cells += [""] * (base["attempts"] - len(cells))
            lines.append(f"| {_label(r, i).split(':')[0]} | `{r['policy']}` | {r['mode']} | {r['context']} | "
                         f"{','.join(map(str, r['seeds']))} | " + " | ".join(cells[: base["attempts"]])
                         + f" | {_pct(r['conditional_recovery'])} | {r['cumulative_tokens'][-1]:.0f} | "
                         f"{sum(len(v) for v in r.get('infra_failures', {}).values())} | `{r['_path']}` |")
        lines += ["", "## Tokens to reach a resolve rate (cf. Fig. 5b)", "",
                  "| run | " + " | ".join(base["tokens_to_reach"]) + " |", "|---|" + "---:|" * len(base["tokens_to_reach"])]
        for i, r in enumerate(runs):
            cells = [("—" if v is None else f"K={v['k']}: {v['tokens_per_task']:.0f}") for v in r["tokens_to_reach"].values()]
            lines.append(f"| {_label(r, i).split(':')[0]} | " + " | ".join(cells) + " |")
        if diffs:
            first = _label(base, 0).split(":")[0]
            lines += ["", f"## Paired differences vs run {first} (bootstrap over tasks, {n_boot} resamples, 95% interval)", "",
                      f"| run | k | {first} − run (pp) | 95% interval (pp) | tasks | seeds |", "|---|---:|---:|---|---:|---|"]
            for i, ds in diffs:
                for d in ds:
                    lines.append(f"| {_label(runs[i], i).split(':')[0]} | {d['k']} | {100 * d['mean_diff']:+.1f} | "
                                 f"[{100 * d['low']:+.1f}, {100 * d['high']:+.1f}] | {d['tasks']} | {d['seeds']} |")
        if any(r.get("by_route") for r in runs):
            lines += ["", "## Per route (Resolved@K, %)", "", "| run | " + " | ".join(sorted(base.get("by_route", {}))) + " |",
                      "|---|" + "---:|" * len(base.get("by_route", {}))]
            for i, r in enumerate(runs):
                lines.append(f"| {_label(r, i).split(':')[0]} | " + " | ".join(
                    f"{_pct(r['by_route'].get(rt, {}).get('resolved_at', [None])[-1])} (n={r['by_route'].get(rt, {}).get('tasks', 0)})"
                    for rt in sorted(base.get("by_route", {}))) + " |")
        lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
        (tmp / "compare.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (tmp / "compare.json").write_text(json.dumps({"runs": [r["_path"] for r in runs], "differences": dict(
            (runs[i]["_path"], ds) for i, ds in diffs)}, indent=2) + "\n")
    return Path(out) / "compare.md"


def train_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Plot reward, first-attempt success and the second attempt's extra contribution per RL step
    from ``run_dir/metrics.jsonl``; writes ``train_report.md`` + ``train_dynamics.png`` into ``out``
    (default ``run_dir/report``)."""
    run_dir = Path(run_dir)
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        raise EvalError(f"{path}: no such file (a run folder of `swetrain train` holds metrics.jsonl)")
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        metrics = [m for m in rows if isinstance(m, dict) and "step" in m]
    except (ValueError, json.JSONDecodeError) as exc:
        raise EvalError(f"{path}: unreadable ({exc})") from None
    if not metrics:
        raise EvalError(f"{path}: no step metrics")
    steps = [m["step"] for m in metrics]
    reward = [m.get("reward/mean") for m in metrics]
    r1 = [m.get("rollout/resolved@1") for m in metrics]
    r2 = [m.get("rollout/resolved@2") for m in metrics]
    extra = [None if a is None or b is None else b - a for a, b in zip(r1, r2)]
    with _staged(Path(out) if out else run_dir / "report") as tmp:
        with _figure(tmp / "train_dynamics.png", "Training dynamics (cf. FC-SWE's first- vs second-attempt contribution)",
                     "fraction of rollouts", "RL step", grid=True) as ax:
            for ys, label in ((reward, "mean reward"), (r1, "first-attempt success (R@1)"), (extra, "second attempt's extra (R@2 − R@1)")):
                pts = [(s, y) for s, y in zip(steps, ys) if y is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        f = lambda v: "" if v is None else f"{v:.3f}"  # noqa: E731
        lines = ["# swetrain training dynamics", "", f"run: `{run_dir}`", "",
                 "| step | reward | R@1 | R@2 | second attempt's extra |", "|---:|---:|---:|---:|---:|"]
        lines += [f"| {s} | {f(a)} | {f(b)} | {f(c)} | {f(d)} |" for s, a, b, c, d in zip(steps, reward, r1, r2, extra)]
        lines += ["", "![train_dynamics.png](train_dynamics.png)"]
        (tmp / "train_report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return (Path(out) if out else run_dir / "report") / "train_report.md"
