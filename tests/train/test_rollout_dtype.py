"""``rollout.hf_dtype=bfloat16``: on a single CPU process the rollouts come from a bf16 copy of the
trained module, synced (cast) after every update, and the trained module stays float32."""

from __future__ import annotations

import pytest
import torch

from swetrain.train.config import ConfigError, load_config


def test_hf_dtype_is_validated():
    assert load_config("fcswe").rollout.hf_dtype == "auto"
    with pytest.raises(ConfigError, match=r"rollout\.hf_dtype"):
        load_config("fcswe", overrides=["rollout.hf_dtype=int8"])


@pytest.mark.slow
def test_bf16_rollouts_come_from_a_synced_copy(tmp_path, tiny_path):
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.tasks.builtin import load_builtin
    from swetrain.train.rl import RLTrainer

    cfg = load_config("fcswe", overrides=[
        "rollout.hf_dtype=bfloat16", "train.steps=1", "rollout.tasks_per_step=1", "rollout.group=2",
        "rollout.max_turns=1", "rollout.max_new_tokens=16", "logging.tensorboard=false", "logging.progress=false",
        "optim.weight_decay=0.5", "optim.lr=0.01",  # the weights move even when every advantage is 0
    ])
    tasks = list(load_builtin(split="train"))[:1]
    trainer = RLTrainer(cfg, tmp_path / "run", tasks=tasks, policy_path=tiny_path)
    learner = trainer._unwrapped()
    assert trainer.policy.model is not learner
    assert {p.dtype for p in trainer.policy.model.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in learner.parameters()} == {torch.float32}
    before = {k: v.clone() for k, v in learner.state_dict().items()}
    version = trainer.policy.version
    trainer.train()
    rows = TrajectoryStore(tmp_path / "run").read_all()
    assert rows and all(r.policy_version == version for r in rows)  # generated before the update
    after = learner.state_dict()
    moved = [k for k in after if after[k].is_floating_point() and not torch.equal(after[k], before[k])]
    assert moved and trainer.policy.version > version
    gen = trainer.policy.model.state_dict()
    assert all(torch.equal(gen[k], after[k].to(torch.bfloat16)) for k in moved)


@pytest.mark.parametrize("native", ["0", "1"])
def test_bf16_native_shares_the_module_unless_the_cpu_computes_bf16(tmp_path, tiny_path, monkeypatch, native):
    from swetrain.policy import cpu_features
    from swetrain.tasks.builtin import load_builtin
    from swetrain.train.rl import RLTrainer

    monkeypatch.setenv(cpu_features.ENV_VAR, native)
    cpu_features.native_bf16.cache_clear()
    try:
        cfg = load_config("fcswe", overrides=["rollout.hf_dtype=bf16-native", "train.steps=1", "logging.tensorboard=false",
                                               "logging.progress=false"])
        trainer = RLTrainer(cfg, tmp_path / "run", tasks=list(load_builtin(split="train"))[:1], policy_path=tiny_path)
        learner = trainer._unwrapped()
        if native == "1":  # a bf16 copy, synced after updates
            assert trainer.policy.model is not learner
            assert {p.dtype for p in trainer.policy.model.parameters()} == {torch.bfloat16}
        else:  # float32: the very module being trained
            assert trainer.policy.model is learner
        assert {p.dtype for p in learner.parameters()} == {torch.float32}
    finally:
        cpu_features.native_bf16.cache_clear()
