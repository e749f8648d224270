"""The quickstart's rollout settings and task lists, shared by the quickstart and its mastery prior."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Rollout/eval settings that fit the scripted-repair demonstrations the base policy imitates (a
# ~1,100-token prompt + five turns ~2,100 tokens; a str_replace call up to ~150 tokens) and sample
# it at a lower temperature (the trainer recomputes old log-probs itself, so the clipped FC-SWE
# ratio stays consistent). Command-line overrides come after these and win.
QUICKSTART_ROLLOUT = (
    # a demonstration takes 5 turns (run the tests, grep, edit, run the tests, finish); the 8-turn
    # default let 81 of 120 failed base episodes run 3 more turns of ~55 tokens for nothing
    "rollout.max_turns=6",
    "rollout.max_new_tokens=192",
    "rollout.max_context_tokens=3072",
    "rollout.temperature=0.5",
    # eight episodes in flight: their turns share one continuously batched decode
    # (swetrain.policy.wrappers.continuous) while the others' sandboxes run tests
    "rollout.workers=8",
    "rollout.batch_generation=true",
    # str_replace tolerates imprecise copies (env/edit_match.py; exact when old_str is verbatim):
    # a small base's near-copies apply instead of failing "not found verbatim" (issue 31)
    "env.edit_match=tolerant",
    # the built-in suite's test runs take ~1-3 s here (a verifier run at most 3.1 s, an episode's
    # tools at most 6 s over 277 quickstart attempts); a patch that makes them hang cost 11 minutes
    # of one RL step at the defaults (120 s per agent command, 60 s per hanging test, 300 s per run)
    "env.command_timeout_s=30",
    "env.test_timeout_s=10",
)

# The optimizer for the tiny bases (a 2.7M-parameter model): 1 epoch at the recipe's lr 5e-5 barely
# moves it in the quickstart's few steps. lr 3e-4 with 2 clipped epochs per batch is the learning
# check's setting (docs/training.md: 0.28 -> 0.86 in 3 steps; 1e-3 and above collapse it) and, in the
# quickstart, took the RL set from 45.8% to 75.0% (stop 48).
TINY_BASES = ("tiny", "tiny-sft", "tiny-sft-build", "small-sft")
TINY_OPTIM = ("optim.lr=3e-4", "optim.epochs=2")

# The SmolLM2-135M bases (docs/training.md, "RL step levers for a SmolLM2-sized base"): bf16 weights
# for generation and bf16 autocast for the update where the CPU computes bf16 (AMX / AVX-512 BF16;
# float32 elsewhere, where bf16 is several times slower), the update on the top 8 of 30 blocks
# (6.3x faster than float32 on every layer), and a pretrained model's lr.
SMOLLM2_BASES = ("smollm2", "smollm2-sft", "smollm2-easy-sft", "smollm2-easy-sft-build")
SMOLLM2_SETTINGS = ("rollout.hf_dtype=bf16-native", "train.precision=bf16-native", "train.trainable_layers=8",
                    "optim.lr=3e-5")


def base_overrides(policy: str) -> tuple[str, ...]:
    """The quickstart's per-base overrides for ``policy`` (a spec): :data:`TINY_OPTIM` for the tiny
    bases, :data:`SMOLLM2_SETTINGS` for the SmolLM2 ones, none for others (a model folder keeps the
    fcswe recipe's settings; pass overrides on the command line)."""
    if policy in TINY_BASES or policy.startswith("tiny:"):
        return TINY_OPTIM
    if policy in SMOLLM2_BASES:
        return SMOLLM2_SETTINGS
    return ()


#: the built-in suite's difficulty tiers (``swetrain.tasks.record.task_tier``)
TIERS = ("easy", "standard")


def suite_tasks(split: str, tasks_file: Path | None, tier: str | None = None) -> list[Any]:
    """The ``split`` tasks of the built-in suite (or of ``tasks_file``), by instance id; only those of
    difficulty ``tier`` (``easy`` | ``standard``, :func:`swetrain.tasks.record.task_tier`) when given."""
    from swetrain.tasks.builtin import load_builtin
    from swetrain.tasks.record import task_tier

    kwargs = {"path": tasks_file} if tasks_file else {}
    tasks = sorted(load_builtin(split=split, **kwargs), key=lambda t: t.instance_id)
    return [t for t in tasks if tier is None or task_tier(t) == tier]
