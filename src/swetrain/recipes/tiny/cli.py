"""``swetrain warmstart`` (build/ship the SFT warm start of a base policy) and the main job
``swetrain quickstart`` (base policy -> held-out eval -> FC-SWE RL -> held-out eval -> report)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("warmstart")(warmstart)
    app.command("quickstart")(quickstart)

from swetrain.recipes.tiny.shipped_adapter import DEFAULT_RANK

# what a build took here (docs/training.md, docs/agent.md)
BUILD_TIME = {"tiny": "about 45 min", "small": "about 2 h", "smollm2": "about 55-80 min", "smollm2-easy": "about 30 min"}


def warmstart(
    base: str = typer.Option("tiny", "--base", help="tiny | small | smollm2 | smollm2-easy"),
    force: bool = typer.Option(False, "--force", help="rebuild even when cached"),
    ship: bool = typer.Option(False, "--ship", help="also copy the result into the package (what `tiny-sft` / `small-sft` load; "
                              "smollm2-easy: as a low-rank adapter over the base)"),
    rank: int = typer.Option(DEFAULT_RANK, "--rank", min=1, help="adapter rank of a shipped pretrained-base warm start (smollm2-easy)"),
) -> None:
    """Build (or show) the cached SFT warm start of a base policy from scripted repair demos."""
    import json

    from swetrain.recipes.tiny.shipped_adapter import SHIPPED_ADAPTERS, ship_adapter
    from swetrain.recipes.tiny.warmstart import PRESET_CONFIGS, SHIPPED, ensure_warm_start, ship_warm_start, shipped_warm_start

    if base not in PRESET_CONFIGS:
        raise typer.BadParameter(f"{base!r} is not a warm-start base; choose one of {', '.join(PRESET_CONFIGS)}", param_hint="--base")
    if ship and base not in SHIPPED and base not in SHIPPED_ADAPTERS:
        raise typer.BadParameter(f"only the {', '.join([*SHIPPED, *SHIPPED_ADAPTERS])} warm starts are shipped", param_hint="--ship")
    shipped = shipped_warm_start(SHIPPED[base]) if base in SHIPPED else None
    if shipped is not None and not force and not ship:  # `tiny-sft` ships: nothing to build
        info = json.loads((shipped / "warmstart.json").read_text())
        typer.echo(f"the {base} warm start ships with swetrain (policy '{base}-sft'): {shipped}\n"
                   f"{info.get('demonstrations', '?')} demonstrations, NLL {info.get('nll_before', float('nan')):.3f} -> "
                   f"{info.get('nll_after', float('nan')):.3f}; pass --force to rebuild it (about 45 min for tiny, "
                   "2 h for small on 2 cores)")
        return
    typer.echo(f"building the {base} warm start ({BUILD_TIME.get(base, 'tens of minutes')} on 2 cores, unless cached; "
               "Ctrl-C leaves nothing behind)", err=True)
    path = ensure_warm_start(base, progress=True, force=force)
    if ship and base in SHIPPED_ADAPTERS:
        typer.echo(f"shipped as a rank-{rank} adapter to {ship_adapter(path, base, rank)}")
    elif ship:
        typer.echo(f"shipped to {ship_warm_start(path, SHIPPED[base])}")
    info = json.loads((path / "warmstart.json").read_text())
    typer.echo(f"{path}\n{info['demonstrations']} demonstrations, NLL {info['nll_before']:.3f} -> {info['nll_after']:.3f}, "
               f"built in {info['total_seconds']} s")


def quickstart(
    out: Path = typer.Option(Path("runs/quickstart"), "--out", help="run directory (replaced if it holds a previous quickstart)"),
    policy: str = typer.Option(None, "--policy", help="the base: tiny-sft (the default profile's) | smollm2-easy-sft | smollm2-sft | tiny | smollm2 | a model folder"),
    profile: str = typer.Option("default", "--profile", help="default (the main job: tiny-sft, every tier) | smoke (~3 min, every phase small; CI) | "
                                "smollm2-easy (the SmolLM2 warm start on the crash tier; ~24 min on 2 cores with bf16 arithmetic)"),
    steps: int = typer.Option(None, "--steps", help="FC-SWE RL steps [6]"),
    seed: int = typer.Option(0, "--seed", help="seed of the held-out sample, the curriculum probe, RL and decoding"),
    eval_tasks: int = typer.Option(None, "--eval-tasks", help="held-out tasks evaluated before and after [60]"),
    tasks_per_step: int = typer.Option(None, "--tasks-per-step", help="training tasks per RL step [2]"),
    group: int = typer.Option(None, "--group", help="FC-SWE chains per task (G) [4]"),
    probe_tasks: int = typer.Option(None, "--probe-tasks", help="train tasks probed for the base's mastery (0: no curriculum) [24]"),
    probe_rollouts: int = typer.Option(None, "--probe-rollouts", help="single-attempt rollouts per probed task [2]"),
    rl_tasks: int = typer.Option(None, "--rl-tasks", help="size of the RL set chosen from the mastery frontier [8]"),
    frontier_samples: int = typer.Option(None, "--frontier-samples", help="single attempts per RL-set task before and after RL, fresh seeds (0: skip) [16]"),
    tasks: Path = typer.Option(None, "--tasks", help="a built-in-format tasks.jsonl instead of the shipped suite"),
    tier: str = typer.Option(None, "--tier", help="only tasks of this difficulty tier, train and held-out: easy (crash bugs) | standard [the profile's; default: all]"),
    prior_mastery: str = typer.Option("shipped", "--prior-mastery",
                                      help="the base's offline mastery over train tasks, probed first: shipped (ships for tiny-sft and smollm2-easy-sft) | none | a prior file"),
    overrides: list[str] = typer.Argument(None, help="extra fcswe recipe overrides key=value"),
    sandbox: str = typer.Option("local", "--sandbox", help="workspace backend: local (bubblewrap) or docker (--tasks from `swetrain env build-image`)"),
) -> None:
    """The main job: base policy -> held-out eval -> curriculum -> FC-SWE RL -> held-out eval -> report."""
    from rich.console import Console

    from swetrain.env.cli import use_sandbox
    from swetrain.recipes.tiny.quickstart import PROFILES, QuickstartError, QuickstartOptions, run_quickstart
    from swetrain.rollout.errors import NoTrajectoryError

    if profile not in PROFILES:
        raise typer.BadParameter(f"{profile!r} is not one of {', '.join(PROFILES)}", param_hint="--profile")
    given = dict(policy=policy, tier=tier, steps=steps, eval_tasks=eval_tasks, tasks_per_step=tasks_per_step, group=group,
                 probe_tasks=probe_tasks, probe_rollouts=probe_rollouts, rl_tasks=rl_tasks, frontier_samples=frontier_samples)
    sizes = {**PROFILES[profile], **{k: v for k, v in given.items() if v is not None}}
    console = Console()
    try:
        checked = []
        if tasks is not None:
            from swetrain.tasks.record import TaskLoadError, load_tasks

            try:
                checked = load_tasks(tasks)
            except (TaskLoadError, OSError):
                checked = []  # run_quickstart says what is wrong with the file, in one line
        use_sandbox(sandbox, checked)  # every task environment runs its tests, before anything is written
        summary = run_quickstart(
            QuickstartOptions(
                out=out, seed=seed, tasks_file=tasks, prior_mastery=prior_mastery, **sizes,
                overrides=(f"rollout.sandbox={sandbox}", *(overrides or ())),
            ),
            console,
        )
    except (QuickstartError, FileExistsError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except NoTrajectoryError as exc:  # mostly infrastructure failures, or nothing stored: one line
        typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
        raise typer.Exit(1) from None
    b, a, p = summary["before"], summary["after"], summary["paired"]
    console.print(
        f"Resolved@1 {100 * b['resolved_at_1']:.1f}% -> {100 * a['resolved_at_1']:.1f}%  |  "
        f"Resolved@2 {100 * b['resolved_at_2']:.1f}% -> {100 * a['resolved_at_2']:.1f}%  |  "
        f"conditional recovery {100 * b['conditional_recovery']:.1f}% -> {100 * a['conditional_recovery']:.1f}%"
    )
    if p["diff"] is not None:
        console.print(f"paired Resolved@2 after - before: {100 * p['diff']:+.1f} points, "
                      f"95% interval [{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}] over {p['n_tasks']} tasks")
    fr = summary.get("frontier")
    if fr and fr["paired"].get("diff") is not None:
        fp = fr["paired"]
        console.print(f"RL set (train, fresh seeds) success {100 * fr['before']:.1f}% -> {100 * fr['after']:.1f}%: paired "
                      f"{100 * fp['diff']:+.1f} points, 95% interval [{100 * fp['ci_low']:+.1f}, {100 * fp['ci_high']:+.1f}]")
    console.print(f"report: {out / 'report.md'}   summary: {out / 'summary.json'}   ({summary['total_s']:.0f} s)")
