"""The scripted repair agent finds fixes without the gold patch; SFT on its demos learns them."""

from __future__ import annotations

import pytest
import torch

from swetrain.agent.scripted_repair import TEST_CMD, demonstrate, find_fix
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
        plan = find_fix(ws)
        assert plan is not None and plan.path == "lib.py" and plan.function == "clamp"
        assert plan.old.strip() == "if x <= hi:" and plan.new.strip() == "if x > hi:"
        assert ws.diff() == ""
    finally:
        ws.close()


def test_demonstrations_are_resolved_agent_trajectories(demos):
    for demo in demos:
        assert demo.reason == "ok", demo.reason
        traj = demo.trajectory
        assert traj.resolved and traj.verdict is not None and traj.verdict.resolved
        assert traj.num_turns == 5 and not any(traj.invalid) and traj.stop_reason == "finish"
        traj.check()
        first = traj.messages[2]["content"]
        assert TEST_CMD in first  # turn 1 runs the tests
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
