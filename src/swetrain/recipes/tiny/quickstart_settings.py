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
)


def suite_tasks(split: str, tasks_file: Path | None) -> list[Any]:
    """The ``split`` tasks of the built-in suite (or of ``tasks_file``), by instance id."""
    from swetrain.tasks.builtin import load_builtin

    kwargs = {"path": tasks_file} if tasks_file else {}
    return sorted(load_builtin(split=split, **kwargs), key=lambda t: t.instance_id)
