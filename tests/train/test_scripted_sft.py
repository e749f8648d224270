"""The scripted repair agent finds fixes without the gold patch; SFT on its demos learns them."""

from __future__ import annotations

import json

import pytest
import torch

from swetrain.agent.scripted_repair import TEST_CMD, demonstrate, find_fix, grep_cmd
from swetrain.env.workspace import Workspace
from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft
from train_helpers import make_bug_task

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demos(tmp_path_factory, tokenizer):
    from swetrain.env.verifier import Verifier

    root = tmp_path_factory.mktemp("bugs")
    out = []
    for bug in ("flip", "index"):
        task = make_bug_task(root / bug, bug)
        task.patch = ""  # the scripted agent must not need (or see) the gold patch
        out.append(demonstrate(task, tokenizer, verifier=Verifier()))
    return out


def test_find_fix_leaves_workspace_clean(tmp_path):
    task = make_bug_task(tmp_path / "flip", "flip")
    ws = Workspace.create(task)
    try:
        plan = find_fix(ws, issue=task.problem_statement)
        assert plan is not None and plan.path == "lib.py" and plan.function == "clamp"
        # the minimal unique edit of `if x <= hi:` -> `if x > hi:` (scripted_repair.minimal_edit)
        assert (plan.old, plan.new) == ("<=", ">")
        assert ws.diff() == ""
        # the assertion fails inside the test: without the issue naming `lib.clamp` nothing the
        # agent has seen points at lib.py, so no demonstration may be built from hidden knowledge
        assert find_fix(ws, issue="") is None
    finally:
        ws.close()


def test_demonstrations_are_resolved_agent_trajectories(demos):
    for demo in demos:
        assert demo.reason == "ok", demo.reason
        traj = demo.trajectory
        assert traj.resolved and traj.verdict is not None and traj.verdict.resolved
        assert traj.num_turns == 5 and not any(traj.invalid) and traj.stop_reason == "submitted"
        traj.check()
        first = traj.messages[2]["content"]
        assert TEST_CMD in first  # turn 1 runs the tests
        call = json.loads(traj.messages[4]["content"].split("<tool_call>")[1].split("</tool_call>")[0])
        assert call == {"name": "execute_bash", "arguments": {"cmd": grep_cmd(demo.plan.path, demo.plan.function)}}
        # the grep shows the line the edit replaces, so the edit copies what the agent has seen
        assert demo.plan.old.splitlines()[-1] in traj.messages[5]["content"]
        assert "str_replace" in traj.messages[6]["content"]


def test_sft_learns_the_demonstrations(demos, tiny_path):
    samples = [sample_for_sft(d.trajectory) for d in demos]
    trainer = SFTTrainer.from_pretrained(tiny_path, SFTConfig(epochs=8, lr=3e-3, warmup_steps=1, batch_tokens=4096))
    before = trainer.evaluate(samples)
    metrics = trainer.train(samples)
    after = trainer.evaluate(samples)
    assert after < before * 0.7, (before, after)
    assert metrics["loss"] > 0


def test_sft_rejects_empty():
    class Tok:
        pad_token_id = 0

    trainer = SFTTrainer(torch.nn.Linear(1, 1), Tok(), SFTConfig())
    with pytest.raises(ValueError, match="no example"):
        trainer.train([])


def test_demo_rows_retokenise_exactly_like_the_agent_loop(demos, tokenizer):
    """A shipped row (messages only) rendered through the chat format gives the loop's very ids."""
    from swetrain.agent.format import ChatFormat
    from swetrain.recipes.tiny.warmstart import demo_row, demo_sample

    fmt = ChatFormat(tokenizer)
    for demo in demos:
        task = type("T", (), {"instance_id": demo.instance_id, "repo": "swetrain-test/lib", "labels": {}})()
        row = demo_row(demo, task)
        assert row["messages"][0]["role"] == "user" and all(m["role"] != "system" for m in row["messages"])
        sample = demo_sample(row, fmt)
        traj = demo.trajectory
        assert sample.token_ids == list(traj.token_ids)
        assert sample.loss_mask == [int(m) for m in traj.assistant_mask]


@pytest.mark.parametrize("name", ["demos.jsonl", "demos_easy.jsonl"])
def test_shipped_demos_are_valid_train_split_demonstrations(tokenizer, name):
    """The package's demonstrations file: train-split or pool tasks of train repositories only
    (never a held-out task), five valid tool calls each whose grep and edit copy what the agent
    saw, ending with a passing test run and ``finish``; every row tokenises."""
    from swetrain.agent.format import ChatFormat
    from swetrain.agent.parse import parse_message
    from swetrain.tasks.builtin import shipped_tasks
    from swetrain.tasks.builtin.build import HELDOUT_REPOS
    from swetrain.recipes.tiny.warmstart import DEMOS_FILE, demo_sample, load_demos

    from swetrain.tasks.record import task_tier

    path = DEMOS_FILE.with_name(name)
    rows = load_demos(path)
    tasks = {t.instance_id: t for t in shipped_tasks()}
    splits = {i: t.split for i, t in tasks.items()}
    assert len(rows) >= (100 if name == "demos.jsonl" else 60)
    # the crash-tier file holds crash-tier tasks only (the standard file none of them)
    assert {task_tier(tasks[r["instance_id"]]) for r in rows if r["instance_id"] in tasks} == {"standard" if name == "demos.jsonl" else "easy"}
    assert len({r["instance_id"] for r in rows}) == len(rows)
    fmt = ChatFormat(tokenizer)
    for row in rows:
        assert splits.get(row["instance_id"], "train") == "train", row["instance_id"]
        assert row["repo"].rsplit("/", 1)[-1] not in HELDOUT_REPOS, row["instance_id"]
        assistant = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
        tools = [m["content"] for m in row["messages"] if m["role"] == "tool"]
        assert len(assistant) == 5
        calls = [parse_message(a, fmt.tools) for a in assistant]
        assert not any(c.invalid for c in calls), row["instance_id"]
        assert [c.tool_calls[0].name for c in calls] == ["execute_bash", "execute_bash", "file_editor", "execute_bash", "finish"]
        plan = row["plan"]
        assert calls[1].tool_calls[0].arguments["cmd"] == grep_cmd(plan["path"], plan["function"])
        edit = calls[2].tool_calls[0].arguments
        assert edit["old_str"] != edit["new_str"]
        assert edit["old_str"].splitlines()[-1] in tools[1], row["instance_id"]  # copied from the grep output
        assert "passed" in tools[3] and "failed" not in tools[3]
        sample = demo_sample(row, fmt)
        assert 0 < sample.n_trainable < len(sample.token_ids) <= 4096
    assert path.stat().st_size < 5_000_000
