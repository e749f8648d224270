"""The main job: ``swetrain quickstart``.

Builds (or reuses) the built-in suite and the base policy (the tiny model with its SFT warm start
by default), then:

1. evaluates the base on ``eval_tasks`` held-out tasks (1 chain x 2 attempts: Resolved@1,
   Resolved@2, conditional recovery);
2. picks the RL tasks with the curriculum: the base's mastery on ``probe_tasks`` train tasks
   (``probe_rollouts`` single attempts each) and the frontier selection of
   :mod:`swetrain.curriculum.select` (0 < p̂ < 1 first), so steps are not spent on tasks that give
   every attempt the same reward (no signal for group-relative advantages);
3. runs FC-SWE RL on them, evaluates again on the same tasks and seeds;
4. writes ``summary.json`` (with the paired after - before difference and its bootstrap 95%
   interval), ``report.md`` and plots into the run directory.
"""

from __future__ import annotations

import json
import math
import logging
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swetrain.recipes.tiny.quickstart_settings import QUICKSTART_ROLLOUT, TIERS, base_overrides, suite_tasks
from swetrain.tasks.record import task_tier

log = logging.getLogger(__name__)


class QuickstartError(ValueError):
    """A bad quickstart input (one line naming the input); nothing was written to ``--out``."""


@dataclass
class QuickstartOptions:
    out: Path = Path("runs/quickstart")
    policy: str = "tiny-sft"
    steps: int = 6
    seed: int = 0
    eval_tasks: int = 60
    eval_chains: int = 1
    tasks_per_step: int = 2
    group: int = 4
    probe_tasks: int = 24  # train tasks whose base mastery picks the RL set (0: no curriculum)
    probe_rollouts: int = 2
    rl_tasks: int = 8  # size of the RL set chosen by the frontier selection
    frontier_samples: int = 16  # single attempts per RL-set task, before and after RL (fresh seeds; 0: skip)
    prior_mastery: str = "shipped"  # the base's offline mastery over train tasks: shipped | none | a file (mastery_prior.py)
    overrides: tuple[str, ...] = ()
    progress: bool = True
    tasks_file: Path | None = None  # a built-in-format tasks.jsonl instead of the shipped suite
    tier: str | None = None  # only tasks of this difficulty tier (easy | standard), train and held-out
    # torch intra-op threads of the in-process generator: 1 (swetrain's default: sandboxes share the
    # cores) or None for one per usable core (a big model whose episodes are ~98% generation);
    # SWETRAIN_TORCH_THREADS wins over both
    torch_threads: int | None = 1


# Named runs (``swetrain quickstart --profile NAME``): the base, the task tier and the run's size;
# options given explicitly win. ``smoke`` (~2-3 min on 2 cores) is what CI runs after a fresh
# install: every phase, small. ``smollm2-easy`` trains the shipped SmolLM2 warm start on the crash
# tier, the rung it earns held-out reward on (docs/agent.md): 24 min on 2 cores that compute bf16
# (AMX / AVX-512 BF16), about 3x that where they do not (docs/training.md).
PROFILES: dict[str, dict[str, Any]] = {
    "default": {"policy": "tiny-sft", "tier": None, "steps": 6, "eval_tasks": 60, "tasks_per_step": 2, "group": 4,
                "probe_tasks": 24, "probe_rollouts": 2, "rl_tasks": 8, "frontier_samples": 16},
    "smoke": {"policy": "tiny-sft", "tier": None, "steps": 1, "eval_tasks": 6, "tasks_per_step": 1, "group": 2,
              "probe_tasks": 4, "probe_rollouts": 1, "rl_tasks": 2, "frontier_samples": 1},
    "smollm2-easy": {"policy": "smollm2-easy-sft", "tier": "easy", "torch_threads": None, "steps": 4, "eval_tasks": 12, "tasks_per_step": 2,
                     "group": 4, "probe_tasks": 8, "probe_rollouts": 2, "rl_tasks": 4, "frontier_samples": 6},
}


def heldout_sample(n: int, seed: int, tasks_file: Path | None = None, tier: str | None = None) -> list[Any]:
    """The first ``n`` held-out tasks (of ``tier`` when given) of a seeded shuffle of the suite (or
    of ``tasks_file``)."""
    tasks = suite_tasks("heldout", tasks_file)
    random.Random(seed).shuffle(tasks)
    return [t for t in tasks if tier is None or task_tier(t) == tier][:n]


def _check_options(opts: QuickstartOptions) -> None:
    for name, value, low in (("--eval-tasks", opts.eval_tasks, 1), ("--steps", opts.steps, 1),
                             ("--tasks-per-step", opts.tasks_per_step, 1), ("--group", opts.group, 1),
                             ("--probe-tasks", opts.probe_tasks, 0), ("--probe-rollouts", opts.probe_rollouts, 1),
                             ("--rl-tasks", opts.rl_tasks, 1), ("--frontier-samples", opts.frontier_samples, 0)):
        if not isinstance(value, int) or value < low:
            raise QuickstartError(f"{name}: must be an integer >= {low} (got {value!r})")
    if opts.tasks_file is not None and not Path(opts.tasks_file).is_file():
        raise QuickstartError(f"--tasks {opts.tasks_file}: no such file")
    if opts.tier is not None and opts.tier not in TIERS:
        raise QuickstartError(f"--tier {opts.tier}: not one of {', '.join(TIERS)}")


def _check_out(out: Path) -> None:
    """Refuse an ``--out`` that is not a directory we may (re)create, before anything is written."""
    if out.exists() and not out.is_dir():
        raise QuickstartError(f"--out {out}: exists and is not a directory")
    if out.exists() and any(out.iterdir()):
        markers = ("summary.json", "config.yaml", "eval_before", "checkpoints")
        if not any((out / m).exists() for m in markers):
            raise QuickstartError(f"--out {out}: exists and does not look like a quickstart run; choose another folder")
    parent = out if out.exists() else next((p for p in out.parents if p.exists()), Path("."))
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise QuickstartError(f"--out {out}: {parent} is not writable")


def _prepare_out(out: Path) -> None:
    _check_out(out)
    if out.exists() and any(out.iterdir()):
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def task_scores(result: Any, k: int) -> dict[str, float]:
    """Per task: the fraction of its chains resolved within the first ``k`` attempts."""
    return {iid: sum(any(v == 1 for v in chain[:k]) for chain in chains) / len(chains)
            for iid, chains in result.per_task.items() if chains}


def paired_difference(before: Any, after: Any, k: int, seed: int = 0, only: Any = None) -> dict[str, Any]:
    """After - before Resolved@k over the tasks both evaluations scored (and in ``only`` when
    given), with a paired bootstrap 95% interval (:func:`swetrain.eval.metrics.paired_bootstrap`)."""
    from swetrain.eval.metrics import paired_bootstrap

    b, a = task_scores(before, k), task_scores(after, k)
    ids = sorted(set(a) & set(b) & (set(only) if only is not None else set(a)))
    if not ids:
        return {"metric": f"resolved_at_{k}", "n_tasks": 0, "diff": None, "ci_low": None, "ci_high": None}
    ci = paired_bootstrap([a[i] for i in ids], [b[i] for i in ids], seed=seed)
    return {"metric": f"resolved_at_{k}", "n_tasks": len(ids), "diff": ci.mean_diff, "ci_low": ci.low,
            "ci_high": ci.high, "level": ci.level,
            "improved": sum(a[i] > b[i] for i in ids), "regressed": sum(a[i] < b[i] for i in ids)}


def per_tier(before: Any, after: Any, tasks: list[Any], seed: int = 0) -> dict[str, dict[str, Any]]:
    """Held-out figures per difficulty tier (:func:`swetrain.tasks.record.task_tier`): the tier's
    Resolved@1/@2 before and after over the tasks both evaluations scored, and the paired
    differences with their intervals."""
    out: dict[str, dict[str, Any]] = {}
    for tier in sorted({task_tier(t) for t in tasks}):
        ids = {t.instance_id for t in tasks if task_tier(t) == tier}
        at1, at2 = (paired_difference(before, after, k, seed, only=ids) for k in (1, 2))
        if not at2["n_tasks"]:
            continue
        scored = sorted(ids & set(task_scores(before, 1)) & set(task_scores(after, 1)))

        def rates(result: Any) -> dict[str, float]:
            return {f"resolved_at_{k}": sum(task_scores(result, k)[i] for i in scored) / len(scored) for k in (1, 2)}

        out[tier] = {"n_tasks": len(scored), "before": rates(before), "after": rates(after), "paired": at2, "paired_at_1": at1}
    return out


def frontier_figures(before: Any, after: Any, record: dict[str, Any], samples: int, seed: int) -> dict[str, Any]:
    """The RL set's success rate (single attempts, the same fresh seeds before and after RL) and the
    paired after - before difference: the reward curve's endpoints, measured outside training.

    Sample ``c`` of a task has the same decoding seed before and after, so the pairs are (task,
    sample); the bootstrap resamples those pairs (samples of one task are not independent, so with
    few tasks the interval is optimistic: ``n_tasks`` says how many there were)."""
    from swetrain.eval.metrics import paired_bootstrap

    pairs = []
    for iid in sorted(set(before.per_task) & set(after.per_task)):
        for b, a in zip(before.per_task[iid], after.per_task[iid]):
            if b and a and not (math.isnan(b[0]) or math.isnan(a[0])):  # both scored (NaN: never executed)
                pairs.append((iid, float(b[0] == 1), float(a[0] == 1)))
    tasks = sorted({iid for iid, _, _ in pairs})
    paired: dict[str, Any] = {"metric": "frontier_success", "n_tasks": len(tasks), "n_pairs": len(pairs),
                              "diff": None, "ci_low": None, "ci_high": None}
    if pairs:
        ci = paired_bootstrap([a for _, _, a in pairs], [b for _, b, _ in pairs], seed=seed)
        paired.update(diff=ci.mean_diff, ci_low=ci.low, ci_high=ci.high, level=ci.level,
                      improved=sum(a > b for _, b, a in pairs), regressed=sum(a < b for _, b, a in pairs))
    mean = lambda k: sum(p[k] for p in pairs) / len(pairs) if pairs else None  # noqa: E731
    return {"tasks": tasks, "samples": samples, "fallback": bool(record.get("fallback")), "seed": seed,
            "before": mean(1), "after": mean(2), "paired": paired}


def select_rl_tasks(mastery: Any, probe: list[Any], rl_tasks: int, seed: int) -> tuple[list[Any], dict[str, Any]]:
    """The RL set: the frontier of the base's mastery on the probed train tasks (0 < p̂ < 1 first,
    never-solved tasks only as the selector's small evidence share). When the base solved none of
    them there is no frontier: the probed tasks are used as they are, and the record says so."""
    from swetrain.curriculum.select import FrontierConfig, select_frontier

    sel = select_frontier(mastery, [t.instance_id for t in probe], FrontierConfig(max_tasks=rl_tasks, seed=seed))
    chosen = set(sel.selected)
    picked = [t for t in probe if t.instance_id in chosen]
    record = {"probed": len(probe), "counts": sel.counts(), "frontier": sel.frontier, "evidence": sel.evidence,
              "p_hat": {t.instance_id: mastery.p_hat(t.instance_id) for t in probe}, "fallback": not picked}
    if not picked:
        picked = probe[:rl_tasks]
    record["rl_tasks"] = [t.instance_id for t in picked]
    return picked, record


def run_quickstart(opts: QuickstartOptions, console: Any = None) -> dict[str, Any]:
    """Run the quickstart; returns ``summary.json``'s content. Bad inputs raise
    :class:`QuickstartError` before anything is written to ``opts.out``."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.curriculum.mastery import MasteryError, MasteryMap, estimate_mastery
    from swetrain.recipes.tiny.mastery_prior import load_prior, probe_order, resolve_prior, seed_map
    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.policy.threads import configure_torch_threads, usable_cores
    from swetrain.train.config import load_config
    from swetrain.train.rl import RLTrainer

    console = console or Console()
    _check_options(opts)
    out = Path(opts.out)
    _check_out(out)
    try:
        heldout = heldout_sample(opts.eval_tasks, opts.seed, opts.tasks_file, opts.tier)
        train_tasks = suite_tasks("train", opts.tasks_file, opts.tier)
    except (OSError, ValueError) as exc:
        raise QuickstartError(f"--tasks {opts.tasks_file}: {exc}") from None
    where = (f"--tasks {opts.tasks_file}" if opts.tasks_file else "the built-in suite") + (f" (--tier {opts.tier})" if opts.tier else "")
    if opts.prior_mastery not in ("shipped", "none"):
        try:
            load_prior(opts.prior_mastery)
        except MasteryError as exc:
            raise QuickstartError(f"--prior-mastery: {exc} (give a prior file, 'shipped' or 'none')") from None
    if not heldout:
        raise QuickstartError(f"{where}: no held-out tasks (split 'heldout') to evaluate on")
    if not train_tasks:
        raise QuickstartError(f"{where}: no train tasks (split 'train') to train on")
    try:
        config = load_config("fcswe", overrides=[
            f"train.steps={opts.steps}", f"train.save_every={max(1, opts.steps // 2)}", f"seed={opts.seed}",
            f"rollout.tasks_per_step={opts.tasks_per_step}", f"rollout.group={opts.group}", "logging.progress=false",
            *QUICKSTART_ROLLOUT, *base_overrides(opts.policy), *opts.overrides,
        ])
    except ValueError as exc:
        raise QuickstartError(f"overrides: {exc}") from None
    configure_torch_threads(opts.torch_threads or usable_cores())
    started = time.monotonic()
    timings: dict[str, float] = {}
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, disable=not opts.progress,
    )
    with progress:
        t0 = time.monotonic()
        try:
            base_path = resolve_policy_path(opts.policy, progress=progress)
        except (ValueError, FileNotFoundError) as exc:
            raise QuickstartError(f"--policy {opts.policy}: {exc}") from None
        _prepare_out(out)
        timings["prepare_s"] = time.monotonic() - t0
        config.policy = str(base_path)
        # the training rollouts' sampling (decoding and limits) for the evaluations and the mastery probe
        run_kwargs = dict(sampling=config.rollout.sampling(), workers=config.rollout.workers,
                          **config.env.run_kwargs())
        eval_kwargs = dict(chains=opts.eval_chains, attempts=2, context_variant="patch+verifier",
                           seed=opts.seed + 12345, **run_kwargs)

        def bar(label: str, total: int):
            task = progress.add_task(label, total=total)
            return lambda result: progress.advance(task)

        t0 = time.monotonic()
        # the same weights' dtype as the RL rollouts (rollout.hf_dtype), so before and after compare like with like
        base_policy = HFPolicy(base_path, dtype=config.rollout.hf_dtype)
        before = evaluate_policy(base_policy, heldout, out / "eval_before",
                                 on_result=bar("evaluate base policy (held-out)", len(heldout) * opts.eval_chains), **eval_kwargs)
        timings["eval_before_s"] = time.monotonic() - t0

        t0 = time.monotonic()
        curriculum: dict[str, Any] = {"probed": 0, "fallback": True, "rl_tasks": None}
        rl_tasks = train_tasks
        if opts.probe_tasks:
            try:
                prior, prior_note = resolve_prior(opts.prior_mastery, opts.policy, base_path)
            except MasteryError as exc:
                raise QuickstartError(f"--prior-mastery {opts.prior_mastery}: {exc}") from None
            console.print(f"curriculum: {prior_note}")
            probe = probe_order(train_tasks, prior, opts.seed)[: opts.probe_tasks]
            mastery = MasteryMap(policy=str(base_path))
            seeded = seed_map(mastery, prior, [t.instance_id for t in probe])
            estimate_mastery(base_policy, probe, out / "curriculum", mastery, phase="base", rollouts=opts.probe_rollouts,
                             seed=opts.seed + 777, on_result=bar("curriculum: base mastery (train)", len(probe) * opts.probe_rollouts),
                             **run_kwargs)
            mastery.save(out / "curriculum" / "mastery.json")
            rl_tasks, curriculum = select_rl_tasks(mastery, probe, opts.rl_tasks, opts.seed)
            curriculum["prior"] = {"used": prior is not None, "note": prior_note, "probed_with_prior": seeded,
                                   **({"source": prior.source, "weights_sha256": prior.weights_sha256,
                                       "rollouts_per_task": prior.settings.get("rollouts")} if prior else {})}
            (out / "curriculum" / "selection.json").write_text(json.dumps(curriculum, indent=1) + "\n")
        timings["curriculum_s"] = time.monotonic() - t0

        # the RL set before training: single attempts with seeds neither the probe nor RL used
        frontier_kwargs = dict(chains=opts.frontier_samples, attempts=1, context_variant="none",
                               seed=opts.seed + 4242, **run_kwargs)
        frontier_before = None
        if opts.frontier_samples:
            t0 = time.monotonic()
            frontier_before = evaluate_policy(base_policy, rl_tasks, out / "frontier_before", on_result=bar(
                "RL set before RL (train, fresh seeds)", len(rl_tasks) * opts.frontier_samples), **frontier_kwargs)
            timings["frontier_before_s"] = time.monotonic() - t0
        del base_policy

        t0 = time.monotonic()
        rl_bar = progress.add_task(f"FC-SWE RL ({opts.steps} steps)", total=opts.steps)

        def on_step(step: int, metrics: dict[str, Any]) -> None:
            progress.update(rl_bar, completed=step,
                            description=f"FC-SWE RL step {step}/{opts.steps} reward {metrics.get('reward/mean', 0.0):.2f}")

        trainer = RLTrainer(config, out, tasks=rl_tasks, policy_path=base_path, on_step=on_step)
        trainer.train()
        timings["rl_s"] = time.monotonic() - t0

        t0 = time.monotonic()
        after = evaluate_policy(trainer.policy, heldout, out / "eval_after",
                                on_result=bar("evaluate trained policy (held-out)", len(heldout) * opts.eval_chains), **eval_kwargs)
        timings["eval_after_s"] = time.monotonic() - t0

        frontier = None
        if frontier_before is not None:
            t0 = time.monotonic()
            frontier_after = evaluate_policy(trainer.policy, rl_tasks, out / "frontier_after", on_result=bar(
                "RL set after RL (train, same fresh seeds)", len(rl_tasks) * opts.frontier_samples), **frontier_kwargs)
            timings["frontier_after_s"] = time.monotonic() - t0
            frontier = frontier_figures(frontier_before, frontier_after, curriculum, opts.frontier_samples, opts.seed)

    return _write_summary(opts, out, config, base_path, trainer, before, after, curriculum, timings, started,
                          frontier=frontier, tiers=per_tier(before, after, heldout, seed=opts.seed))


def _write_summary(opts: QuickstartOptions, out: Path, config: Any, base_path: Path, trainer: Any, before: Any, after: Any,
                   curriculum: dict[str, Any], timings: dict[str, float], started: float, *,
                   frontier: dict[str, Any] | None = None, tiers: dict[str, Any] | None = None) -> dict[str, Any]:
    from swetrain.eval.report import write_report
    from swetrain.policy.cpu_features import machine_record
    from swetrain.train.checkpoint import latest_checkpoint
    from swetrain.train.metrics import read_metrics

    ckpt = latest_checkpoint(out)
    paired = paired_difference(before, after, 2, seed=opts.seed)
    summary = {
        "before": before.headline(),
        "after": after.headline(),
        "paired": paired,
        "paired_at_1": paired_difference(before, after, 1, seed=opts.seed),
        "steps": trainer.step,
        "base_checkpoint": str(base_path),
        "trained_checkpoint": str(ckpt / "model") if ckpt else None,
        "policy": opts.policy,
        "tier": opts.tier,  # the difficulty tier of every task of the run (None: all tiers)
        "recipe": "fcswe",
        "seed": opts.seed,
        "eval_tasks": before.n_tasks,
        "eval_task_ids": sorted(before.per_task),
        "eval_chains": opts.eval_chains,
        "curriculum": {k: v for k, v in curriculum.items() if k != "p_hat"},
        # the RL set (train) before vs after RL with fresh seeds: target (a) of issue 32
        "frontier": frontier,
        # held-out figures per difficulty tier (easy = crash tier, standard)
        "per_tier": tiers or {},
        # infrastructure failures (never scored) apart from model failures (scored attempts, reward 0)
        "failures": {
            "eval_before": {"infra": before.infra_failures, "model": before.model_failures},
            "eval_after": {"infra": after.infra_failures, "model": after.model_failures},
            "rl": {"infra": int(sum(m.get("rollout/infra_failures", 0) for m in read_metrics(out)))},
        },
        "eval_before": before.to_dict(),
        "eval_after": after.to_dict(),
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "total_s": round(time.monotonic() - started, 1),
        # what the timings depend on (CPU, cores, threads, bf16 arithmetic, GPU)
        "machine": machine_record(),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_report(out, summary=summary, metrics=read_metrics(out), config=config.model_dump(mode="json"),
                 notes=_notes(summary))
    return summary


def _notes(summary: dict[str, Any]) -> list[str]:
    """Plain statements of what the run shows (whatever the result)."""
    p = summary["paired"]
    cur = summary["curriculum"]
    notes = [f"Total wall time {summary['total_s']:.0f} s "
             f"({', '.join(f'{k} {v:.0f}' for k, v in summary['timings_s'].items())})."]
    m = summary.get("machine")
    if m:
        notes.append(f"Machine: {m['cpu'] or 'unknown CPU'}, {m['cores']} cores, {m['torch_threads']} torch thread(s) "
                     f"per process, bf16 arithmetic on the CPU: {'yes' if m['cpu_native_bf16'] else 'no'}"
                     f"{', GPU ' + m['gpu'] if m['gpu'] else ''}.")
    if p["diff"] is None:
        notes.append("No task was scored both before and after: no paired comparison.")
    else:
        verdict = ("RL improved held-out Resolved@2: the 95% interval excludes 0." if p["ci_low"] > 0 else
                   "RL made held-out Resolved@2 worse: the 95% interval excludes 0." if p["ci_high"] < 0 else
                   "No significant change of held-out Resolved@2: the 95% interval includes 0.")
        notes.append(f"{verdict} After - before = {100 * p['diff']:+.1f} points "
                     f"[{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}] over {p['n_tasks']} tasks "
                     f"({p['improved']} improved, {p['regressed']} regressed).")
    tiers = summary.get("per_tier") or {}
    for tier, t in tiers.items():
        tp = t["paired"]
        notes.append(f"Held-out {tier} tier ({t['n_tasks']} tasks): Resolved@2 {100 * t['before']['resolved_at_2']:.1f}% -> "
                     f"{100 * t['after']['resolved_at_2']:.1f}%, paired {100 * tp['diff']:+.1f} points "
                     f"[{100 * tp['ci_low']:+.1f}, {100 * tp['ci_high']:+.1f}].")
    # issue 32's target (b): held-out Resolved@2 up >= 5 points with the interval above 0, overall or on the easy tier
    met = [name for name, q in (("overall", p), *((f"{k} tier", v["paired"]) for k, v in tiers.items() if k == "easy"))
           if q.get("diff") is not None and q["diff"] >= 0.05 and q["ci_low"] > 0]
    notes.append(f"Held-out target (Resolved@2 +5 points or more, interval above 0): "
                 f"{'met (' + ', '.join(met) + ')' if met else 'not met'}.")
    fr = summary.get("frontier")
    if fr and fr["paired"].get("diff") is not None:
        fp = fr["paired"]
        verdict = ("improved" if fp["ci_low"] > 0 else "got worse" if fp["ci_high"] < 0 else "did not change significantly")
        notes.append(f"RL set (train, {len(fr['tasks'])} tasks x {fr['samples']} fresh single attempts): success "
                     f"{100 * fr['before']:.1f}% -> {100 * fr['after']:.1f}%, paired {100 * fp['diff']:+.1f} points "
                     f"[{100 * fp['ci_low']:+.1f}, {100 * fp['ci_high']:+.1f}] over {fp['n_pairs']} same-seed pairs "
                     f"({fp['improved']} improved, {fp['regressed']} regressed): it {verdict}"
                     f"{' (no frontier: the base solved none of the probed tasks)' if fr['fallback'] else ''}.")
    if cur.get("probed"):
        if cur.get("fallback"):
            notes.append(f"Curriculum: the base solved none of the {cur['probed']} probed train tasks, so there was no "
                         "frontier; RL ran on probed tasks without reward signal.")
        else:
            c = cur.get("counts", {})
            frontier, evidence = c.get("frontier", 0), c.get("evidence", 0)
            notes.append(f"Curriculum: {frontier} frontier task{'s' * (frontier != 1)} (0 < p̂ < 1) and {evidence} "
                         f"evidence task{'s' * (evidence != 1)} of {cur['probed']} probed train tasks were trained on.")
    prior = cur.get("prior")
    if prior:
        notes.append(f"Curriculum prior: {prior['note']}"
                     + (f"; {prior['probed_with_prior']} of the probed tasks pooled its estimates with this run's probe."
                        if prior.get("used") else "."))
    f = summary.get("failures", {})
    if f:
        notes.append(f"Infrastructure failures (never scored): {f['eval_before']['infra']} before, {f['rl']['infra']} in RL, "
                     f"{f['eval_after']['infra']} after; model failures (scored, unresolved attempts): "
                     f"{f['eval_before']['model']} before, {f['eval_after']['model']} after.")
    if summary["before"]["resolved_at_1"] == 0:
        if (summary.get("frontier") or {}).get("before"):  # the base earned reward on its RL set
            notes.append("The base resolved no held-out task on the first attempt: held-out figures rise only if what "
                         "RL learned on the RL set's train tasks carries over to unseen tasks.")
        else:
            notes.append("The base resolved no held-out task on the first attempt: RL has little signal to work with.")
    return notes
