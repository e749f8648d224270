"""The training recipe's ``rollout`` section is the one user-facing home of the rollout settings:
``engine_config`` maps every engine knob, and a new engine field fails here until it is mapped."""

from __future__ import annotations

import dataclasses

from swetrain.agent.loop import EpisodeLimits
from swetrain.rollout.engine import ChainJobConfig as EngineRolloutConfig
from swetrain.train.config import load_config

# engine fields and where they come from in the training section
MAPPED = {
    "group": "group", "attempts": "attempts", "context_variant": "context_variant",
    "context_budget_tokens": "context_budget_tokens", "temperature": "temperature", "top_p": "top_p",
    "top_k": "top_k", "max_infra_retries": "max_infra_retries", "max_infra_fraction": "max_infra_fraction",
    "verify_timeout_s": "verify_timeout_s",
    "sandbox": "sandbox", "batch_generation": "batch_generation", "batch_wait_ms": "batch_wait_ms",
    "seed": None, "limits": None,
    "edit_match": None,  # from the env section (TrainConfig.env.edit_match); tests/env/test_edit_match.py
    "command_timeout_s": None, "test_timeout_s": None,  # from the env section (EnvConfig.run_kwargs)
}
LIMITS = {"max_turns": "max_turns", "max_context_tokens": "max_context_tokens",
          "max_tokens_per_call": "max_new_tokens", "max_wall_s": "max_wall_s", "max_output_tokens": "max_output_tokens",
          # agent-internal guards, not recipe knobs
          "max_observation_chars": None, "min_tokens_per_call": None}


def test_every_engine_field_is_mapped():
    assert {f.name for f in dataclasses.fields(EngineRolloutConfig)} == set(MAPPED)
    assert {f.name for f in dataclasses.fields(EpisodeLimits)} == set(LIMITS)


def test_engine_config_carries_the_recipe_values():
    cfg = load_config("fcswe", overrides=[
        "rollout.group=3", "rollout.attempts=2", "rollout.top_k=7", "rollout.top_p=0.9", "rollout.temperature=0.5",
        "rollout.max_turns=5", "rollout.max_new_tokens=33", "rollout.max_context_tokens=1000",
        "rollout.max_wall_s=12", "rollout.max_output_tokens=99", "rollout.max_infra_retries=0", "rollout.max_infra_fraction=0.75",
        "rollout.verify_timeout_s=7", "rollout.context_budget_tokens=100",
        "rollout.batch_generation=true", "rollout.batch_wait_ms=2",
    ])
    eng = cfg.rollout.engine_config(seed=42)
    ro = cfg.rollout
    for name, src in MAPPED.items():
        if src is not None:
            assert getattr(eng, name) == getattr(ro, src), name
    for name, src in LIMITS.items():
        if src is not None:
            assert getattr(eng.limits, name) == getattr(ro, src), name
    assert eng.seed == 42


def test_batch_generation_auto_is_on_for_every_generator_and_can_be_turned_off():
    from swetrain.train.config import RolloutConfig

    assert RolloutConfig().batch_generation == "auto"
    assert RolloutConfig().engine_config(0).batch_generation is True  # hf: continuous batching
    assert RolloutConfig(batch_generation=False).engine_config(0).batch_generation is False
    assert RolloutConfig(generator="vllm").engine_config(0).batch_generation is True
    assert RolloutConfig(generator="vllm", batch_generation=False).engine_config(0).batch_generation is False
    assert RolloutConfig(batch_generation=True).engine_config(0).batch_generation is True
    cfg = load_config("fcswe", overrides=["rollout.batch_generation=auto", "rollout.batch_wait_ms=0"])
    assert cfg.rollout.engine_config(0).batch_wait_ms == 0.0
