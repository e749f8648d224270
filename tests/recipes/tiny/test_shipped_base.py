"""The shipped tiny warm start (what `tiny-sft` loads) is a working agent policy, not just weights."""

from __future__ import annotations

import json

import pytest

from swetrain.recipes.tiny.warmstart import SHIPPED_TINY, shipped_warm_start

pytestmark = pytest.mark.skipif(shipped_warm_start() is None, reason="no shipped tiny-sft checkpoint in this checkout")


def test_tiny_sft_resolves_to_the_shipped_checkpoint():
    from swetrain.policy.spec import resolve_policy_path

    assert resolve_policy_path("tiny-sft") == SHIPPED_TINY
    info = json.loads((SHIPPED_TINY / "warmstart.json").read_text())
    assert info["base"] == "tiny" and info["demonstrations"] > 0 and info["nll_after"] < info["nll_before"]


@pytest.mark.slow
def test_shipped_policy_starts_like_the_demonstrations():
    """Greedy first turn on a held-out task: a well-formed call of the test command."""
    from swetrain.agent.format import ChatFormat
    from swetrain.agent.parse import parse_message
    from swetrain.policy.base import GenerationConfig
    from swetrain.agent.scripted_repair import TEST_CMD
    from swetrain.policy.hf import HFPolicy
    from swetrain.tasks.builtin import load_builtin

    task = sorted(load_builtin(split="heldout"), key=lambda t: t.instance_id)[0]
    policy = HFPolicy(SHIPPED_TINY)
    fmt = ChatFormat(policy.tokenizer)
    prompt = fmt.prompt_ids(fmt.initial_messages(task.problem_statement))
    out = policy.generate([prompt], GenerationConfig(max_new_tokens=64, temperature=0.0, stop_token_ids=fmt.stop_token_ids))[0]
    msg = parse_message(policy.tokenizer.decode(out.token_ids[:-1]))
    assert not msg.invalid, msg.errors
    assert [(c.name, c.arguments) for c in msg.tool_calls] == [("execute_bash", {"cmd": TEST_CMD})]


def test_shipped_policy_copies_from_its_context():
    """The shipped warm start was copy-pretrained (swetrain.recipes.tiny.copy_pretrain): it has an induction
    head, which the same recipe without copy pretraining never formed (induction 0.000)."""
    import torch
    from transformers import AutoModelForCausalLM

    from swetrain.recipes.tiny.copy_skill import induction_accuracy

    info = json.loads((SHIPPED_TINY / "warmstart.json").read_text())
    assert info["config"]["copy_steps"] > 0
    model = AutoModelForCausalLM.from_pretrained(SHIPPED_TINY, dtype=torch.float32).eval()
    assert induction_accuracy(model, n=8) > 0.3
