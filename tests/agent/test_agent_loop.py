"""run_episode on a real workspace (bubblewrap sandbox when available) with a ScriptedPolicy."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from swetrain.agent.format import ChatFormat
from swetrain.agent.loop import EpisodeLimits, run_episode
from swetrain.agent.scripted import FINISH_CALL, ScriptedPolicy, TurnScript, _call, bash_call, replace_call
from swetrain.agent.trajectory import Trajectory
from swetrain.env.demo import build_demo_task
from swetrain.env.workspace import Workspace

GOLDEN = Path(__file__).parent / "golden" / "demo_invalid_middle.txt"

FIX_SCRIPT = [
    "<think>Read the module first.</think>\n" + _call("file_editor", {"command": "view", "path": "calc/__init__.py"}),
    '<tool_call>{"name": "execute_bash", "arguments": {</tool_call>',  # invalid: malformed JSON
    replace_call("calc/__init__.py", "return a + b  # bug: should multiply", "return a * b"),
    FINISH_CALL,
]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return build_demo_task(tmp_path_factory.mktemp("demo"))


@pytest.fixture()
def workspace(task):
    ws = Workspace.create(task)
    yield ws
    ws.close()


def run(task, ws, tok, turns, **kw):
    policy = ScriptedPolicy(tok, TurnScript(turns), tokenization=kw.pop("tokenization", "canonical"))
    limits = kw.pop("limits", EpisodeLimits(max_turns=8))
    return policy, run_episode(task, ws, policy, None, limits, seed=kw.pop("seed", 7), **kw)


def test_golden_trajectory_with_invalid_call_in_the_middle(task, workspace, tiny_tokenizer):
    policy, traj = run(task, workspace, tiny_tokenizer, FIX_SCRIPT)
    assert traj.stop_reason == "submitted" and traj.num_turns == 4
    assert traj.invalid == [False, True, False, False]
    assert traj.invalid_reasons[1] == ["malformed_json"]
    assert "-    return a + b  # bug: should multiply\n+    return a * b" in traj.patch
    roles = [(m["role"], m.get("invalid", m.get("error", False))) for m in traj.messages]
    assert roles == [
        ("system", False), ("user", False),
        ("assistant", False), ("tool", False),
        ("assistant", True), ("tool", True),  # the error observation; the episode went on
        ("assistant", False), ("tool", False),
        ("assistant", False), ("tool", False),
    ]
    # token ids == the chat template's own rendering of the same conversation (canonical script)
    fmt = ChatFormat(tiny_tokenizer)
    msgs = [{"role": m["role"], "content": m["content"]} for m in traj.messages[:-1]]  # last obs never rendered
    expected = fmt.encode(fmt.render(msgs[:-1], add_generation_prompt=True)) + policy.history[-1]
    assert traj.token_ids == expected
    # invalid-token mask covers exactly turn 2's ids
    bad = [i for i, v in enumerate(traj.invalid_token_mask) if v]
    assert [traj.token_ids[i] for i in bad] == policy.history[1]
    text = tiny_tokenizer.decode(traj.token_ids[traj.prompt_len :], skip_special_tokens=False)
    text = text.replace(workspace.agent_root, "/testbed")  # unisolated workspaces show host paths
    if os.environ.get("SWETRAIN_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "golden trajectory changed (SWETRAIN_UPDATE_GOLDEN=1 to accept)"


def test_mask_covers_exactly_generated_ids(task, workspace, tiny_tokenizer):
    policy, traj = run(task, workspace, tiny_tokenizer, FIX_SCRIPT)
    generated = list(policy.history)
    assert sum(traj.assistant_mask) == sum(len(g) for g in generated) == traj.output_tokens
    for turn, ids in enumerate(generated, start=1):
        positions = [i for i, s in enumerate(traj.segment_ids) if s == turn]
        assert positions == list(range(positions[0], positions[0] + len(ids)))  # contiguous
        assert [traj.token_ids[i] for i in positions] == ids
        assert all(traj.assistant_mask[i] == 1 for i in positions)
    assert all(m == 0 for m, s in zip(traj.assistant_mask, traj.segment_ids) if s == 0)
    assert traj.assistant_mask[: traj.prompt_len] == [0] * traj.prompt_len
    assert len(traj.behavior_logprobs) == len(traj.token_ids)


def test_retokenising_stored_text_never_replaces_stored_ids(task, workspace, tiny_tokenizer):
    """Character-level ids differ from the canonical encoding; the trajectory keeps them verbatim."""
    policy, traj = run(task, workspace, tiny_tokenizer, FIX_SCRIPT, tokenization="chars")
    assert traj.invalid == [False, True, False, False]  # parsing works on decoded text
    differs = 0
    for turn, ids in enumerate(policy.history, start=1):
        stored = traj.generated_ids(turn)
        assert stored == ids
        text = tiny_tokenizer.decode(ids[:-1], skip_special_tokens=False)
        canonical = tiny_tokenizer.encode(text, add_special_tokens=False) + [ids[-1]]
        differs += canonical != stored
    assert differs == len(policy.history)  # the check has teeth: re-tokenising would change ids
    # the stored row round-trips the exact ids through Parquet-style rows
    back = Trajectory.from_row(json.loads(json.dumps(traj.to_row())))
    assert back.token_ids == traj.token_ids and back.segment_ids == traj.segment_ids
    assert back.invalid == traj.invalid and back.messages == traj.messages


def test_max_turns_ends_with_current_patch(task, workspace, tiny_tokenizer):
    turns = [bash_call("echo x >> calc/__init__.py")] * 10
    _, traj = run(task, workspace, tiny_tokenizer, turns, limits=EpisodeLimits(max_turns=3))
    assert traj.stop_reason == "turns" and traj.num_turns == 3
    assert traj.patch.count("+x") == 3


def test_context_limit(task, workspace, tiny_tokenizer):
    fmt = ChatFormat(tiny_tokenizer)
    prompt = len(fmt.prompt_ids(fmt.initial_messages("x")))
    limits = EpisodeLimits(max_turns=50, max_context_tokens=prompt + 400, max_tokens_per_call=64)
    _, traj = run(task, workspace, tiny_tokenizer, [bash_call("seq 1 200")] * 50, limits=limits)
    assert traj.stop_reason == "context"
    assert len(traj.token_ids) <= limits.max_context_tokens
    assert traj.num_turns < 50


def test_cut_by_length_is_invalid_and_episode_continues(task, workspace, tiny_tokenizer):
    long_call = bash_call("echo " + "word " * 200)
    _, traj = run(task, workspace, tiny_tokenizer, [long_call], limits=EpisodeLimits(max_turns=5, max_tokens_per_call=40))
    assert traj.messages[2]["finish_reason"] == "length"
    assert traj.invalid[0] and traj.num_turns == 2 and traj.stop_reason == "submitted"
    assert traj.behavior_logprobs[traj.prompt_len] == 0.0
