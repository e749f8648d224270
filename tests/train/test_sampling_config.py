"""Decoding settings of the trainer's rollouts reach the sampler (``rollout.top_k``, ``rollout.top_p``)."""

from __future__ import annotations

import pytest

from swetrain.train.config import load_config
from train_helpers import make_bug_task

BASE = ["train.steps=1", "rollout.tasks_per_step=1", "rollout.group=3", "rollout.max_turns=1",
        "rollout.max_new_tokens=12", "rollout.temperature=1.5", "logging.progress=false", "logging.tensorboard=false"]


def first_step_outputs(tmp_path, tiny_path, extra: list[str]) -> list[list[int]]:
    from swetrain.train.rl import RLTrainer

    task = make_bug_task(tmp_path / "bug", "index")
    trainer = RLTrainer(load_config("grpo", None, [*BASE, *extra]), tmp_path / "run",
                        tasks=[task], policy_path=tiny_path)
    trainer.train_step()
    trajs = trainer._store().read_all()
    assert len(trajs) == 3
    return [t.token_ids[t.prompt_len:] for t in trajs]


@pytest.mark.slow
def test_top_k_one_makes_every_chain_greedy(tmp_path, tiny_path):
    outs = first_step_outputs(tmp_path / "k1", tiny_path, ["rollout.top_k=1"])
    assert outs[0] == outs[1] == outs[2]  # three chain seeds, one answer: only the argmax survives the cut
    free = first_step_outputs(tmp_path / "k0", tiny_path, [])
    assert len({tuple(o) for o in free}) > 1  # without the cut, T=1.5 differs across chain seeds


def test_top_k_is_validated():
    with pytest.raises(Exception, match="top_k"):
        load_config("fcswe", None, ["rollout.top_k=-1"])
