"""The agent loop with the real tiny model (random weights): token ids and behaviour log-probs."""

from __future__ import annotations

import pytest

from swetrain.agent.loop import EpisodeLimits, run_episode
from swetrain.env.demo import build_demo_task
from swetrain.env.workspace import Workspace
from swetrain.policy.base import GenerationConfig


@pytest.fixture(scope="module")
def hf_policy():
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.tiny import ensure_tiny

    return HFPolicy(ensure_tiny(), device="cpu", dtype="float32")


@pytest.mark.slow
def test_tiny_model_two_turns_end_to_end(tmp_path, hf_policy):
    task = build_demo_task(tmp_path)
    limits = EpisodeLimits(max_turns=2, max_tokens_per_call=24)
    runs = []
    for _ in range(2):
        with Workspace.create(task) as ws:
            runs.append(run_episode(task, ws, hf_policy, None, limits, gen_config=GenerationConfig(temperature=1.0), seed=11))
    traj, again = runs
    assert traj.token_ids == again.token_ids  # seeded sampling reproduces the trajectory
    assert traj.num_turns == 2 and len(traj.invalid) == 2
    assert traj.stop_reason in ("turns", "submitted")
    assert 0 < traj.output_tokens <= 48 and sum(traj.assistant_mask) == traj.output_tokens
    # behaviour log-probs are the model's log-probs of exactly the stored ids
    scored = hf_policy.score([traj.token_ids], [traj.prompt_len])[0]
    for t in range(traj.prompt_len, len(traj.token_ids)):
        if traj.assistant_mask[t]:
            assert abs(scored[t - traj.prompt_len] - traj.behavior_logprobs[t]) < 1e-3
        else:
            assert traj.behavior_logprobs[t] == 0.0
    assert traj.policy_version == hf_policy.version
