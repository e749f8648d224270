"""Episodes that outgrow the context end with a termination reason and are scored like any other.

The window comes from a real (tiny, random-weights) model whose ``max_position_embeddings`` is set
small, on a real workspace with the real verifier: without the effective limit the policy raises
``ValueError: prompts: a prompt of N tokens leaves no room in the model's context``.
"""

from __future__ import annotations

import json

import pytest

from swetrain.agent.chains import RecoveryChain
from swetrain.agent.format import ChatFormat, user_message
from swetrain.agent.loop import EpisodeLimits, effective_context_limit, generation_budget, run_episode
from swetrain.agent.scripted import ScriptedPolicy, TurnScript, bash_call
from swetrain.agent.trajectory import TERMINATION_REASONS, Trajectory
from swetrain.env.demo import build_demo_task
from swetrain.env.verifier import Verifier
from swetrain.env.workspace import Workspace
from swetrain.policy.base import GenerationConfig


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return build_demo_task(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def verifier():
    return Verifier(timeout_s=120)


@pytest.fixture(scope="module")
def prompt_len(task, tiny_tokenizer):
    fmt = ChatFormat(tiny_tokenizer)
    return len(fmt.prompt_ids(fmt.initial_messages(user_message(task, None))))


def windowed_policy(tokenizer, window: int):
    """The tiny model with a context window of ``window`` tokens."""
    from transformers import AutoModelForCausalLM

    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.tiny import ensure_tiny

    model = AutoModelForCausalLM.from_pretrained(ensure_tiny(), max_position_embeddings=window)
    return HFPolicy(model=model, tokenizer=tokenizer, device="cpu", dtype="float32")


def test_effective_context_limit_is_the_smaller_of_configured_and_window_minus_generation():
    assert effective_context_limit(16384, None, 512) == 16384  # window unknown: configured only
    assert effective_context_limit(16384, 8192, 512) == 8192 - 512
    assert effective_context_limit(4096, 8192, 512) == 4096
    assert effective_context_limit(4096, 300, 512) < 0  # a window smaller than one generation
    limits = EpisodeLimits(max_tokens_per_call=512)
    assert generation_budget(limits) == 512
    assert generation_budget(limits, GenerationConfig(max_new_tokens=64)) == 64
    assert generation_budget(limits, GenerationConfig(max_new_tokens=4096)) == 512
    with pytest.raises(ValueError, match="max_output_tokens"):
        EpisodeLimits(max_output_tokens=0)


def test_prompt_that_does_not_fit_ends_at_once_and_is_scored(task, verifier, tiny_tokenizer, prompt_len):
    policy = windowed_policy(tiny_tokenizer, prompt_len // 2)
    assert policy.max_context == prompt_len // 2
    with Workspace.create(task) as ws:
        traj = run_episode(task, ws, policy, None, EpisodeLimits(max_tokens_per_call=32), verifier=verifier, seed=3)
    assert traj.stop_reason == "context" and traj.num_turns == 0 and traj.output_tokens == 0
    assert traj.patch == "" and traj.verdict is not None and not traj.verdict.infra_failure
    assert not traj.resolved and traj.reward == 0.0
    assert traj.prompt_len == len(traj.token_ids) == prompt_len and not any(traj.assistant_mask)
    row = json.loads(json.dumps(traj.to_row()))
    assert row["stop_reason"] == "context" and row["reward"] == 0.0
    # the check has teeth: the policy itself refuses this prompt
    with pytest.raises(ValueError, match="leaves no room"):
        policy.generate([traj.token_ids], GenerationConfig(max_new_tokens=8))


def test_later_turn_that_would_overflow_ends_with_context(task, verifier, tiny_tokenizer, prompt_len):
    per_call = 32
    window = prompt_len + per_call + 120  # room for a turn or two of the random model, not thirty
    policy = windowed_policy(tiny_tokenizer, window)
    limits = EpisodeLimits(max_turns=30, max_context_tokens=16384, max_tokens_per_call=per_call)
    with Workspace.create(task) as ws:
        traj = run_episode(task, ws, policy, None, limits, verifier=verifier, gen_config=GenerationConfig(), seed=3)
    assert traj.stop_reason == "context" and 1 <= traj.num_turns < 30
    assert len(traj.token_ids) <= effective_context_limit(16384, window, per_call) == window - per_call
    assert traj.verdict is not None and not traj.resolved
    traj.check()


def test_turns_tokens_and_wall_limits_name_their_reason(task, tiny_tokenizer):
    script = TurnScript([bash_call("echo hi")] * 20)
    cases = [
        (EpisodeLimits(max_turns=2), "turns"),
        (EpisodeLimits(max_turns=20, max_output_tokens=40), "tokens"),
        (EpisodeLimits(max_turns=20, max_wall_s=1e-9), "wall"),
    ]
    for limits, reason in cases:
        policy = ScriptedPolicy(tiny_tokenizer, script)
        with Workspace.create(task) as ws:
            traj = run_episode(task, ws, policy, None, limits, seed=1)
        assert traj.stop_reason == reason, (limits, traj.stop_reason)
        assert reason in TERMINATION_REASONS
        if reason == "tokens":
            assert 0 < traj.output_tokens <= 40


def test_scripted_window_is_respected_by_every_call(task, tiny_tokenizer, prompt_len):
    """A ScriptedPolicy with a window raises on any call that would not fit: the loop never makes one."""
    per_call = 48
    policy = ScriptedPolicy(tiny_tokenizer, TurnScript([bash_call("seq 1 30")] * 30), max_context=prompt_len + 400)
    with Workspace.create(task) as ws:
        traj = run_episode(task, ws, policy, None, EpisodeLimits(max_turns=30, max_tokens_per_call=per_call), seed=1)
    assert traj.stop_reason == "context" and traj.num_turns >= 1
    assert len(traj.token_ids) <= prompt_len + 400 - per_call


def test_recovery_chain_of_overflowing_attempts_stores_every_attempt(task, verifier, tiny_tokenizer, prompt_len):
    policy = windowed_policy(tiny_tokenizer, prompt_len // 2)
    chain = RecoveryChain(max_attempts=2, limits=EpisodeLimits(max_tokens_per_call=32))
    with Workspace.create(task) as ws:
        trajs = chain.run(task, ws, policy, verifier, chain=0, seed=5)
    assert [t.attempt for t in trajs] == [1, 2]
    assert all(t.stop_reason == "context" and t.reward == 0.0 for t in trajs)
    assert trajs[1].context  # attempt 2 got the failure context of attempt 1


def test_rows_written_with_earlier_names_read_back_in_the_current_vocabulary():
    for old, new in (("finish", "submitted"), ("context_limit", "context"), ("max_turns", "turns"), ("wall_time", "wall")):
        assert Trajectory.from_row({"instance_id": "x", "stop_reason": old}).stop_reason == new
