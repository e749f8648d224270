"""The learning check: RL's CartPole for a SWE agent (issue 32).

A seeded run of a few minutes that shows the RL plumbing *learns*: success on the tasks it trains
on rises, through the real workspace, tools, verifier and trainer. It is a regression test for the
whole loop (sampling, token bookkeeping, verifier rewards, advantages, loss mask, optimizer, weight
sync), not a benchmark of the agent: its task family is built so the tiny base is in the regime.

**Task family** (:func:`make_tasks`). Each task is its own git repository, ``flags.py`` holding a
handful of feature flags, one of them ``False`` that a test needs ``True``; the issue names the
flag. The fix is one ``str_replace`` of ``False`` (the only ``False`` in the file), then ``finish``.

**Base** (:func:`build_base`). The shipped ``tiny-sft`` fine-tuned for a few seconds on real
episodes of this family played by a scripted policy (real workspace, real observations) whose edit
writes one of :data:`CHOICES` chosen uniformly: ``True`` (right) or ``None``/``0`` (wrong, the test
asks ``is True``). The base therefore solves about one attempt in three: a frontier by construction.

**RL** (:func:`run`). FC-SWE steps (the ``fcswe`` recipe, temperature 1) on the train tasks, then
the same tasks are evaluated again with fresh decoding seeds. The summary holds success before and
after (single attempts), their paired bootstrap interval, the per-step reward and the trainer's
``update/logprob_abs_diff`` (learner vs rollout log-probs on the loss mask, before the update moves
the weights: ~0 when the mask and log-probs line up token for token).

    python -m swetrain.recipes.tiny.learning_check --out runs/learning-check [--steps 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    from swetrain.policy.base import Policy

# the scripted base's edit: new_str "= True" fixes the task, the others do not (the test asks ``is True``)
CHOICES = ("True", "None", "0")
RIGHT = "True"

FLAGS = (
    "retry_on_timeout", "verbose_errors", "cache_responses", "strict_parsing", "follow_redirects",
    "compress_logs", "validate_schema", "audit_writes", "prefetch_pages", "dedupe_events",
    "sign_requests", "trim_whitespace",
)

FLAG_DOCS = {
    "retry_on_timeout": "requests that time out are not retried",
    "verbose_errors": "error pages omit the request id",
    "cache_responses": "every call goes to the backend again",
    "strict_parsing": "malformed headers are silently accepted",
    "follow_redirects": "a 301 ends the request instead of following it",
    "compress_logs": "rotated logs are written uncompressed",
    "validate_schema": "payloads are stored without being checked",
    "audit_writes": "writes leave no audit record",
    "prefetch_pages": "the next page is only fetched on demand",
    "dedupe_events": "duplicate events are delivered twice",
    "sign_requests": "outgoing requests carry no signature",
    "trim_whitespace": "values keep their surrounding spaces",
}

# Episode limits of the check: an edit and a finish (a third turn for a stray action)
LIMITS = dict(max_turns=3, max_new_tokens=96, max_context_tokens=2048)


def make_tasks(folder: str | Path, n: int, *, seed: int = 0) -> list[Any]:
    """``n`` tasks of the family (distinct flags; ``n`` at most ``len(FLAGS)``), each a real git
    repository under ``folder``, with gold patch, FAIL_TO_PASS and PASS_TO_PASS."""
    from swetrain.env.gitutil import git, init_snapshot
    from swetrain.tasks.record import Task

    if not 1 <= n <= len(FLAGS):
        raise ValueError(f"n must be in 1..{len(FLAGS)}, got {n}")
    folder = Path(folder)
    rng = random.Random(seed)
    tasks = []
    for i, flag in enumerate(rng.sample(FLAGS, n)):
        others = [f for f in FLAGS if f != flag]
        rng.shuffle(others)
        names = sorted([flag, *others[:3]])
        body = '"""Feature flags of the service (True = on)."""\n\n' + "".join(
            f"{name.upper()} = {'False' if name == flag else 'True'}\n" for name in names)
        tests = "import flags\n\n" + "".join(
            f"\ndef test_{name}():\n    assert flags.{name.upper()} is True\n\n" for name in names)
        root = folder / f"task{i:02d}"
        work = root / "src-tree"
        (work / "tests").mkdir(parents=True, exist_ok=True)
        (work / "flags.py").write_text(body)
        (work / "tests" / "test_flags.py").write_text(tests)
        (work / "conftest.py").write_text("")
        (work / ".gitignore").write_text("__pycache__/\n")
        repo = root / "repo"
        base = init_snapshot(work, repo, message="flags")
        (repo / "flags.py").write_text(body.replace(f"{flag.upper()} = False", f"{flag.upper()} = True"))
        gold = git(repo, "diff").stdout.decode()
        git(repo, "checkout", "-q", "--", ".")
        tasks.append(Task(
            instance_id=f"flags__{flag}",
            repo="swetrain-check/flags",
            base_commit=base,
            problem_statement=(f"## `{flag.upper()}` is off\n\n`{flag.upper()}` in `flags.py` must be enabled: "
                               f"{FLAG_DOCS[flag]}.\n\nFailing test: `tests/test_flags.py::test_{flag}`."),
            patch=gold,
            FAIL_TO_PASS=[f"tests/test_flags.py::test_{flag}"],
            PASS_TO_PASS=[f"tests/test_flags.py::test_{name}" for name in names if name != flag],
            source="repo",
            split="train",
        ).with_base_dir(root))
    return tasks


def _script(state: Any) -> str:
    """The scripted base: edit with a uniformly chosen value (seeded per attempt), then finish."""
    from swetrain.agent.format import tool_call_text

    if state.turn == 0:
        value = random.Random(state.seed).choice(CHOICES)
        return tool_call_text("file_editor", {"command": "str_replace", "path": "flags.py",
                                              "old_str": "= False", "new_str": f"= {value}"})
    return tool_call_text("finish", {"command": "submit"})


def demonstrations(tasks: list[Any], tokenizer_dir: str | Path, out_dir: str | Path, *, chains: int, seed: int) -> list[Any]:
    """Real episodes of the scripted base on ``tasks`` (``chains`` chains of up to 2 attempts each):
    the workspace runs the edit, the verifier scores it; returns the trajectories."""
    from transformers import AutoTokenizer

    from swetrain.agent.scripted import ScriptedPolicy
    from swetrain.rollout.engine import run_local

    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    policy = ScriptedPolicy(tok, _script)
    # two attempts in feedback mode: a failed edit's retry sees FC-SWE's failure context, as in RL
    _, trajs = run_local(policy, tasks, out_dir, chains=chains, attempts=2, seed=seed, workers=4,
                         batch_generation=False, **LIMITS)
    return trajs


def build_base(out: str | Path, tasks: list[Any], *, seed: int = 0, chains: int = 8, epochs: int = 1,
               start: str = "tiny-sft") -> Path:
    """Fine-tune ``start`` on the scripted base's episodes of ``tasks``; returns the model folder."""
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft

    out = Path(out)
    start_path = resolve_policy_path(start)
    t0 = time.monotonic()
    trajs = demonstrations(tasks, start_path, out / "demos", chains=chains, seed=seed)
    print(f"learning check: {len(trajs)} scripted episodes in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    samples = [sample_for_sft(t) for t in trajs]
    trainer = SFTTrainer.from_pretrained(start_path, SFTConfig(epochs=epochs, lr=1e-3, warmup_steps=2, batch_tokens=2560,
                                                               micro_batch_tokens=8192, seed=seed))
    t0 = time.monotonic()
    trainer.train(samples)
    print(f"learning check: base SFT on {len(samples)} episodes in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return trainer.save(out / "base")


def evaluate(policy: Policy, tasks: list[Any], out_dir: str | Path, *, samples: int, seed: int) -> Any:
    """``samples`` single attempts (temperature 1) per task: an :class:`~swetrain.eval.evaluate.EvalResult`
    whose per-task success is :func:`~swetrain.recipes.tiny.quickstart.task_scores` at k = 1."""
    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.rollout.sampling import SamplingConfig

    return evaluate_policy(policy, tasks, out_dir, sampling=SamplingConfig(temperature=1.0, **LIMITS), chains=samples,
                           attempts=1, seed=seed, workers=8)


def run(out: str | Path, *, n_tasks: int = 6, steps: int = 3, samples: int = 6, seed: int = 0,
        lr: float = 3e-4, overrides: tuple[str, ...] = (), base: Path | None = None,
        recipe: str = "fcswe") -> dict[str, Any]:
    """Base -> success before -> ``steps`` FC-SWE steps on the same tasks -> success after (fresh
    seeds). Writes ``summary.json`` into ``out`` and returns it."""
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.recipes.tiny.quickstart import paired_difference, task_scores
    from swetrain.train.config import load_config
    from swetrain.train.metrics import read_metrics
    from swetrain.train.rl import RLTrainer

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    configure_torch_threads()
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    tasks = make_tasks(out / "tasks", n_tasks, seed=seed)
    base = Path(base) if base else build_base(out / "sft", tasks, seed=seed)
    timings["base_s"] = time.monotonic() - t0

    t0 = time.monotonic()
    before = evaluate(HFPolicy(base), tasks, out / "eval_before", samples=samples, seed=seed + 1000)
    timings["eval_before_s"] = time.monotonic() - t0

    config = load_config(recipe, overrides=[
        f"train.steps={steps}", f"train.save_every={steps}", f"seed={seed}", "rollout.tasks_per_step=4",
        "rollout.group=4", f"rollout.max_turns={LIMITS['max_turns']}",
        f"rollout.max_new_tokens={LIMITS['max_new_tokens']}", f"rollout.max_context_tokens={LIMITS['max_context_tokens']}",
        "rollout.temperature=1.0", "rollout.workers=8", "rollout.batch_generation=true", f"optim.lr={lr}",
        # two clipped epochs per batch at a small lr: at 1e-3 or more with one epoch, the first Adam
        # steps (which move every weight by ~lr) made the tiny model write " True" in every field
        # and reward collapsed to 0 (measured, docs/training.md)
        "optim.epochs=2",
        "logging.progress=false", "logging.tensorboard=false", *overrides,
    ])
    config.policy = str(base)
    t0 = time.monotonic()
    trainer = RLTrainer(config, out / "rl", tasks=tasks, policy_path=base)
    trainer.train()
    timings["rl_s"] = time.monotonic() - t0

    t0 = time.monotonic()
    after = evaluate(trainer.policy, tasks, out / "eval_after", samples=samples, seed=seed + 2000)
    timings["eval_after_s"] = time.monotonic() - t0

    b_scores, a_scores = task_scores(before, 1), task_scores(after, 1)
    ids = sorted(set(b_scores) & set(a_scores))
    metrics = read_metrics(out / "rl")
    summary = {
        "recipe": recipe, "tasks": len(ids), "samples": samples, "steps": steps, "seed": seed, "lr": lr,
        # verified attempts the RL steps executed (the budget to hold equal when comparing recipes)
        "executed_attempts": int(sum(m.get("rollout/trajectories", 0) for m in metrics)),
        "before": sum(b_scores[i] for i in ids) / len(ids), "after": sum(a_scores[i] for i in ids) / len(ids),
        "paired": paired_difference(before, after, 1, seed=seed),
        "reward": [m.get("reward/mean") for m in metrics],
        "logprob_abs_diff": [m.get("update/logprob_abs_diff") for m in metrics],
        "per_task": {i: {"before": b_scores[i], "after": a_scores[i]} for i in ids},
        "timings": timings,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--samples", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--recipe", default="fcswe", help="fcswe (default) or grpo, e.g. with --set rollout.group=6")
    ap.add_argument("--base", type=Path, default=None, help="a base built by an earlier run (its sft/base folder)")
    ap.add_argument("--set", action="append", default=[], help="a recipe override (KEY=VALUE), repeatable")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    summary = run(args.out, n_tasks=args.tasks, steps=args.steps, samples=args.samples, seed=args.seed, lr=args.lr,
                  overrides=tuple(args.set), base=args.base, recipe=args.recipe)
    if args.json:
        print(json.dumps({k: v for k, v in summary.items() if k != "per_task"}))
    else:
        print(f"success {summary['before']:.2f} -> {summary['after']:.2f} "
              f"(paired {summary['paired']['diff']:+.2f} [{summary['paired']['ci_low']:+.2f}, {summary['paired']['ci_high']:+.2f}]); "
              f"reward per step {summary['reward']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
