"""The one config-loading helper (:mod:`swetrain.config`): layers in order, then a YAML file, then
dotted overrides; errors name the key and where the values came from. Train, experts and eval load
through it."""

from __future__ import annotations

import inspect

import pytest
from pydantic import Field

from swetrain.config import ConfigError, Section, load_layers, preset_layer


class Inner(Section):
    lr: float = Field(default=1e-3, gt=0)
    steps: int = 1


class Outer(Section):
    name: str = "x"
    inner: Inner = Field(default_factory=Inner)


def test_layers_file_and_overrides_apply_in_order(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("inner:\n  steps: 3\n")
    cfg = load_layers(Outer, [("preset a", {"name": "a", "inner": {"lr": 0.5, "steps": 2}}), ("b", {"name": "b"})],
                      config_file=f, overrides=["inner.lr=0.25"])
    assert (cfg.name, cfg.inner.lr, cfg.inner.steps) == ("b", 0.25, 3)  # later layers win, mappings merge
    assert load_layers(Outer) == Outer()


def test_errors_name_the_key_and_the_layers(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_layers(Outer, [("preset a", {"inner": {"lr": -1}})], overrides=["inner.typo=1"], what="demo config")
    text = str(info.value)
    assert "invalid demo config (preset a, overrides inner.typo=1)" in text
    assert "inner.lr:" in text and "inner.typo: unknown key" in text
    with pytest.raises(ConfigError, match="does not exist"):
        load_layers(Outer, config_file=tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="inner is a value"):
        load_layers(Outer, [("l", {"inner": 3})], overrides=["inner.lr=1"])


def test_presets_name_the_flag_and_the_choices():
    assert preset_layer({"p": {"name": "p"}}, "p") == ("preset p", {"name": "p"})

    class Mine(ConfigError):
        pass

    with pytest.raises(Mine, match="--mode: unknown preset 'q'; choose one of p"):
        preset_layer({"p": {}}, "q", "--mode", Mine)


def test_train_experts_and_eval_load_through_it():
    import swetrain.eval.protocol as protocol
    import swetrain.experts.config as experts
    import swetrain.train.config as train
    from swetrain.eval.protocol import EvalError, EvalProtocol

    for mod, fn in ((train, train.load_config), (experts, experts.load_experts_config),
                    (protocol, EvalProtocol.build)):
        assert "load_layers(" in inspect.getsource(fn), mod.__name__
    with pytest.raises(EvalError, match="preset: unknown preset 'fast'"):
        EvalProtocol.build(preset="fast")
    with pytest.raises(ConfigError, match="--preset: unknown preset 'nope'"):
        experts.load_experts_config(preset="nope")
    assert issubclass(EvalError, ConfigError) and train.ConfigError is ConfigError
