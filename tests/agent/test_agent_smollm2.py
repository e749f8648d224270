"""The agent loop with a real pretrained chat model (SmolLM2-135M-Instruct) and its own template."""

from __future__ import annotations

import pytest

from swetrain.policy import smollm2

OK, WHY = smollm2.available()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not OK, reason=f"SmolLM2 unavailable: {WHY}")]


def test_episode_with_smollm2_own_template(tmp_path):
    from swetrain.agent.loop import EpisodeLimits, run_episode
    from swetrain.env.demo import build_demo_task
    from swetrain.env.tools import TOOL_SPECS
    from swetrain.env.workspace import Workspace
    from swetrain.policy.base import GenerationConfig
    from swetrain.policy.hf import HFPolicy

    policy = HFPolicy(smollm2.ensure_smollm2(), device="cpu", dtype="float32")
    task = build_demo_task(tmp_path)
    with Workspace.create(task) as ws:
        traj = run_episode(
            task, ws, policy, None, EpisodeLimits(max_turns=2, max_tokens_per_call=32),
            gen_config=GenerationConfig(temperature=0.0), seed=0,
        )
    tok = policy.tokenizer
    prompt_text = tok.decode(traj.token_ids[: traj.prompt_len])
    # SmolLM2's template ignores tools=: the loop lists them in the system prompt itself
    assert prompt_text.startswith("<|im_start|>system")
    assert all(spec["function"]["name"] in prompt_text for spec in TOOL_SPECS)
    assert traj.num_turns == 2 and len(traj.invalid) == 2
    assert sum(traj.assistant_mask) == traj.output_tokens > 0
    # the stored ids are exactly what was generated: re-scoring reproduces the behaviour log-probs
    scored = policy.score([traj.token_ids], [traj.prompt_len])[0]
    for t in range(traj.prompt_len, len(traj.token_ids)):
        if traj.assistant_mask[t]:
            assert abs(scored[t - traj.prompt_len] - traj.behavior_logprobs[t]) < 1e-3
    # every observation turn is framed by the model's own ChatML markers
    assert tok.decode(traj.token_ids).count("<|im_start|>assistant") >= traj.num_turns
