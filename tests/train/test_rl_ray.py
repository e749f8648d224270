"""rollout.backend=ray in training: chains run in Ray actors that build the policy from the weights
the trainer publishes before each step (weight sync through the filesystem)."""

from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("ray")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SWETRAIN_TEST_RAY"), reason="starts Ray twice (~3 min on 2 cores): set SWETRAIN_TEST_RAY=1")
def test_ray_rollouts_use_the_synced_weights(tmp_path):
    from safetensors.torch import load_file

    from swetrain.policy.spec import parse_policy_spec
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.tasks.builtin import load_builtin
    from swetrain.train.config import load_config
    from swetrain.train.rl import RLTrainer

    base = parse_policy_spec("tiny-sft").model_path()
    cfg = load_config("grpo", overrides=[
        "rollout.backend=ray", "rollout.workers=1", "rollout.ray_num_cpus=1", "train.steps=2", "train.save_every=1",
        "train.keep_checkpoints=2", "rollout.tasks_per_step=1", "rollout.group=1", "rollout.max_turns=1",
        "rollout.max_new_tokens=16", "logging.tensorboard=false", "logging.progress=false",
        "optim.weight_decay=0.5", "optim.lr=0.01",  # the weights move even when every advantage is 0
    ])
    tasks = list(load_builtin(split="train"))[:2]
    run = tmp_path / "run"
    RLTrainer(cfg, run, tasks=tasks, policy_path=base).train()
    assert TrajectoryStore(run).count() == 2  # one chain per step, both from Ray actors
    synced = load_file(str(run / "policy-sync" / "model.safetensors"))  # published before step 2
    step1 = load_file(str(run / "checkpoints" / "step-00000001" / "model" / "model.safetensors"))
    initial = load_file(str(base / "model.safetensors"))
    key = next(k for k in synced if k in initial and synced[k].is_floating_point())
    assert all(torch.equal(synced[k], step1[k]) for k in synced if k in step1)
    assert not torch.equal(synced[key], initial[key])
