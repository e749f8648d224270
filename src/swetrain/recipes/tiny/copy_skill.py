"""Copy-skill probes: can a policy copy from its context at all?

Every scripted repair demonstration needs two copies the policy cannot memorise: the function and
file it greps (named by the issue or a traceback frame) and the line it edits (shown by the grep).
A policy without *content-based* copying (an induction head: find the earlier occurrence of the
current token, predict what followed it) cannot imitate them however many demonstrations it sees.
These probes measure that directly, without a sandbox:

* :func:`induction_accuracy` (defined in :mod:`swetrain.recipes.tiny.copy_pretrain`, whose
  result it measures; re-exported here): top-1 accuracy of predicting the second occurrence of a random token
  span, with a random gap between the two occurrences (a fixed offset could be solved by position
  alone, so the gap varies).
* :func:`edit_probe`: greedy final turn of unseen ``edit`` drills (:mod:`swetrain.recipes.tiny.drills`):
  is it a valid tool call, and do ``path``, ``old_str`` and ``new_str`` equal the drill's answer.
"""

from __future__ import annotations

import json
import random
from typing import Any

import torch

from swetrain.recipes.tiny.copy_pretrain import induction_accuracy  # defined with the copy pretraining it measures

EDIT_KEYS = ("valid", "path", "old_str", "new_str")


def _call_arguments(text: str) -> dict | None:
    if "<tool_call>" not in text or "</tool_call>" not in text:
        return None
    try:
        call = json.loads(text.split("<tool_call>", 1)[1].split("</tool_call>", 1)[0])
    except json.JSONDecodeError:
        return None
    args = call.get("arguments") if isinstance(call, dict) else None
    return args if isinstance(args, dict) else None


@torch.no_grad()
def edit_probe(model: Any, tokenizer: Any, *, n: int = 30, seed: int = 12345, max_new_tokens: int = 160,
               system_prompt: bool = True) -> dict[str, float]:
    """Fractions of ``n`` unseen edit drills whose greedy final turn is a valid tool call / has the
    drill's ``path`` / ``old_str`` / ``new_str`` (the drills of the shipped warm start use seed 0).

    ``system_prompt``: render the drill as a real episode (any agent policy is in distribution);
    False renders it as the drills are trained (no system prompt)."""
    from swetrain.agent.format import ChatFormat
    from swetrain.recipes.tiny.drills import drill_sample, drill_sources, make_drill
    from swetrain.recipes.tiny.warmstart import demo_sample

    fmt = ChatFormat(tokenizer)
    sources, blocked = drill_sources()
    rng = random.Random(seed)
    device = next(model.parameters()).device
    counts = dict.fromkeys(EDIT_KEYS, 0)
    done = 0
    while done < n:
        drill = make_drill(rng, sources, blocked, "edit")
        if drill is None:
            continue
        done += 1
        # rendered like a demonstration (system prompt, the agent loop's turn deltas) or like a drill
        sample = demo_sample({"messages": drill}, fmt) if system_prompt else drill_sample(drill, fmt)
        start = sample.segment_ids.index(max(sample.segment_ids))  # the last assistant turn
        prefix = sample.token_ids[:start]
        want = _call_arguments(drill[-1]["content"])
        prompt = torch.tensor([prefix], device=device)
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=max_new_tokens,
                             do_sample=False, eos_token_id=fmt.eot_id, pad_token_id=tokenizer.pad_token_id or 0)
        got = _call_arguments(tokenizer.decode(out[0, start:], skip_special_tokens=False))
        if got is None:
            continue
        counts["valid"] += 1
        for key in ("path", "old_str", "new_str"):
            counts[key] += got.get(key) == want[key]
    return {k: v / n for k, v in counts.items()}


def copy_skill(model: Any, tokenizer: Any, *, drills: int = 30, seed: int = 0) -> dict[str, float]:
    """Both probes as one flat dict (``induction`` plus ``edit_<key>``)."""
    model.eval()
    out = {"induction": induction_accuracy(model, seed=seed)}
    out.update({f"edit_{k}": v for k, v in edit_probe(model, tokenizer, n=drills, seed=12345 + seed).items()})
    return out
