"""Recipe loading, dotted overrides and validation errors that name the bad key."""

from __future__ import annotations

import pytest

from swetrain.train.config import ConfigError, load_config, parse_override


@pytest.mark.parametrize("name", ["grpo", "fcswe", "minirl"])
def test_builtin_recipes_validate(name: str) -> None:
    cfg = load_config(name)
    assert cfg.recipe == name


def test_recipes_encode_the_papers() -> None:
    fc = load_config("fcswe")
    assert (fc.rollout.attempts, fc.algo.reward_scheme, fc.algo.advantage) == (2, "local", "active_set")
    assert fc.algo.policy_loss == "clipped" and fc.algo.loss_agg == "token-mean"
    assert fc.algo.invalid_penalty == -5.0 and fc.rollout.context_variant == "patch+verifier"
    mini = load_config("minirl")
    assert mini.algo.advantage == "rloo" and mini.algo.policy_loss == "minirl"
    assert mini.algo.loss_agg == "seq-mean-segment-sum" and mini.algo.kl_beta > 0
    g = load_config("grpo")
    assert g.rollout.attempts == 1 and g.algo.advantage == "grpo"


def test_overrides_and_file_merge(tmp_path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text("rollout:\n  group: 3\noptim:\n  lr: 0.001\n")
    cfg = load_config(
        "fcswe",
        config_file=extra,
        overrides=["algo.reward_scheme=broadcast", "rollout.context_variant=none", "algo.runtime_penalty=false"],
    )
    assert cfg.rollout.group == 3 and cfg.optim.lr == pytest.approx(1e-3)
    assert cfg.algo.reward_scheme == "broadcast" and cfg.rollout.context_variant == "none"
    assert cfg.algo.runtime_penalty is False
    assert cfg.rollout.attempts == 2  # untouched keys keep the recipe's value


def test_unknown_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"algo\.reward_schem: unknown key"):
        load_config("fcswe", overrides=["algo.reward_schem=local"])


def test_bad_value_is_named() -> None:
    with pytest.raises(ConfigError) as info:
        load_config("grpo", overrides=["algo.reward_scheme=shared", "optim.lr=-1"])
    msg = str(info.value)
    assert "algo.reward_scheme" in msg and "'shared'" in msg
    assert "optim.lr" in msg and "greater than 0" in msg


def test_override_syntax_errors() -> None:
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_override("optim.lr")
    with pytest.raises(ConfigError, match="not a section"):
        load_config("grpo", overrides=["seed.x=1"])
    with pytest.raises(ConfigError, match="unknown recipe 'ppo'"):
        load_config("ppo")


def test_cross_field_rules() -> None:
    with pytest.raises(ConfigError, match="attempts >= 2"):
        load_config("fcswe", overrides=["rollout.attempts=1"])
    with pytest.raises(ConfigError, match="use_return_to_go"):
        load_config("minirl", overrides=["algo.use_return_to_go=false"])


def test_missing_and_malformed_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config("grpo", config_file=tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config("grpo", config_file=bad)


def test_fsdp_on_off_survive_yaml_booleans():
    """YAML 1.1 reads on/off as booleans; the documented `train.fsdp=on` must still mean "on"."""
    from swetrain.train.config import ConfigError, load_config

    assert load_config("fcswe", overrides=["train.fsdp=on"]).train.fsdp == "on"
    assert load_config("fcswe", overrides=["train.fsdp=off"]).train.fsdp == "off"
    with pytest.raises(ConfigError, match="train.fsdp"):
        load_config("fcswe", overrides=["train.fsdp=2"])
