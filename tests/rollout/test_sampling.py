"""One sampling config: train, experts, eval and curriculum share :class:`SamplingConfig` (its one
home, :mod:`swetrain.rollout.sampling`), and none of them grows its own sampling defaults again."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import swetrain
from swetrain.config import ConfigError
from swetrain.rollout.sampling import DEFAULTS, SAMPLING_KEYS, SamplingConfig, sampling_defaults

PACKAGES = ("swetrain.train", "swetrain.experts", "swetrain.eval", "swetrain.curriculum")


def _modules():
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, pkg_name + "."):
            yield importlib.import_module(info.name)


def test_every_consumer_exposes_the_one_sampling_type():
    from swetrain.curriculum.mastery import estimate_mastery
    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.eval.protocol import EvalProtocol
    from swetrain.experts.config import ExpertsConfig
    from swetrain.train.config import TrainConfig

    assert issubclass(TrainConfig.model_fields["rollout"].annotation, SamplingConfig)
    assert issubclass(ExpertsConfig.model_fields["sampling"].annotation, SamplingConfig)
    assert issubclass(EvalProtocol, SamplingConfig)
    for fn in (estimate_mastery, evaluate_policy):
        assert "sampling" in inspect.signature(fn).parameters, fn.__name__


def test_no_consumer_declares_its_own_sampling_fields():
    """A class of train/experts/eval/curriculum that declares ``temperature`` (or another sampling
    field) itself would carry a second default: it must extend SamplingConfig instead."""
    offenders = []
    for mod in _modules():
        for name, cls in vars(mod).items():
            if not inspect.isclass(cls) or cls.__module__ != mod.__name__:
                continue
            own = set(cls.__dict__.get("__annotations__", {}))
            if dataclasses.is_dataclass(cls) or hasattr(cls, "model_fields"):
                offenders += [f"{mod.__name__}.{name}.{k}" for k in own & set(SAMPLING_KEYS)]
    assert not offenders, f"sampling fields outside SamplingConfig: {offenders}"


def test_no_consumer_function_has_a_sampling_default():
    """A function (or CLI command) of train/experts/eval/curriculum may take a sampling setting only
    as 'not given' (None): its default comes from swetrain.rollout.sampling.DEFAULTS."""
    offenders = []
    for mod in _modules():
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if fn.__module__ != mod.__name__:
                continue
            for p in inspect.signature(fn).parameters.values():
                default = getattr(p.default, "default", p.default)  # typer.Option(None, ...) -> None
                if p.name in SAMPLING_KEYS and p.default is not p.empty and default is not None:
                    offenders.append(f"{mod.__name__}.{name}({p.name}={default!r})")
    assert not offenders, f"sampling defaults outside swetrain.rollout.sampling: {offenders}"


def test_no_consumer_module_writes_a_sampling_literal_of_its_own():
    """No ``temperature=0.5``-style keyword with a literal number in the consumers (a call that
    picks its own sampling value), except in the named presets of eval and experts."""
    import pathlib

    allowed = {"PAPER_PRESET", "PAPER", "SMOKE"}  # named presets of eval and experts
    offenders = []
    for mod in _modules():
        path = pathlib.Path(mod.__file__)
        tree = ast.parse(path.read_text())
        presets = [n for n in ast.walk(tree)
                   if isinstance(n, ast.Assign) and any(getattr(t, "id", None) in allowed for t in n.targets)]
        skip = {id(n) for preset in presets for n in ast.walk(preset)}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.keyword) and node.arg in SAMPLING_KEYS and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, (int, float)) and not isinstance(node.value.value, bool):
                offenders.append(f"{path.name}:{node.value.lineno}: {node.arg}={node.value.value}")
    assert not offenders, offenders


def test_defaults_are_documented_in_one_table():
    assert SamplingConfig() == DEFAULTS["train"]
    # the entry points that kept other defaults: a change here changes what users get
    assert sampling_defaults("eval").model_dump() == {"temperature": 0.5, "top_p": 1.0, "top_k": 0, "max_new_tokens": 192,
                                                     "max_context_tokens": 8192, "max_turns": 8}
    assert sampling_defaults("mastery").model_dump() == {"temperature": 0.5, "top_p": 1.0, "top_k": 0,
                                                        "max_new_tokens": 192, "max_context_tokens": 3072, "max_turns": 8}
    with pytest.raises(KeyError, match="eval"):
        sampling_defaults("nope")


def test_consumers_start_from_the_table():
    from swetrain.eval.protocol import EvalProtocol
    from swetrain.experts.config import ExpertsConfig
    from swetrain.train.config import TrainConfig

    assert TrainConfig().rollout.sampling() == DEFAULTS["train"]
    assert ExpertsConfig().sampling.sampling() == DEFAULTS["train"]
    assert EvalProtocol().sampling() == DEFAULTS["eval"]
    assert EvalProtocol.build().sampling() == DEFAULTS["eval"]


def test_override_validates_and_names_the_key():
    s = sampling_defaults("mastery").override(top_k=20, temperature=None)
    assert (s.top_k, s.temperature) == (20, 0.5)
    with pytest.raises(ConfigError, match="top_p"):
        SamplingConfig().override(top_p=1.5)
    with pytest.raises(ConfigError, match="max_tokens: unknown key"):
        SamplingConfig().override(max_tokens=5)


def test_engine_config_from_sampling_carries_every_setting():
    from swetrain.rollout import chain_job
    from swetrain.rollout.chain_job import ChainJobConfig

    s = SamplingConfig(temperature=0.7, top_p=0.9, top_k=5, max_new_tokens=33, max_context_tokens=999, max_turns=4)
    cfg = ChainJobConfig.from_sampling(s, extra_limits={"max_wall_s": 12.0}, group=2, attempts=1)
    assert (cfg.temperature, cfg.top_p, cfg.top_k) == (0.7, 0.9, 5)
    assert (cfg.limits.max_tokens_per_call, cfg.limits.max_context_tokens, cfg.limits.max_turns) == (33, 999, 4)
    assert cfg.limits.max_wall_s == 12.0 and (cfg.group, cfg.attempts) == (2, 1)
    g = cfg.gen_config()
    assert (g.max_new_tokens, g.temperature, g.top_p, g.top_k) == (33, 0.7, 0.9, 5)
    # the engine's config and the training recipe's section no longer share a name
    from swetrain.train.config import RolloutConfig as TrainRollout

    assert ChainJobConfig.__name__ == "ChainJobConfig" and not hasattr(chain_job, "RolloutConfig")
    assert TrainRollout is not ChainJobConfig and TrainRollout.__name__ == "RolloutConfig"


def test_training_sampling_refuses_greedy_and_keeps_the_users_keys():
    from swetrain.experts.config import load_experts_config
    from swetrain.train.config import load_config

    with pytest.raises(ConfigError, match="rollout.temperature"):
        load_config("fcswe", overrides=["rollout.temperature=0"])
    with pytest.raises(ConfigError, match="sampling.temperature"):
        load_experts_config(preset="smoke", overrides=["sampling.temperature=0"])
    assert load_config("fcswe", overrides=["rollout.top_k=7"]).rollout.sampling().top_k == 7
    paper = load_experts_config(preset="paper").sampling.sampling()
    assert (paper.top_p, paper.top_k, paper.max_turns) == (0.95, 20, 150)


def test_the_package_has_one_sampling_model():
    """No other module of swetrain defines a model with the sampling fields (a copy would drift)."""
    copies = []
    for info in pkgutil.walk_packages(swetrain.__path__, "swetrain."):
        if not info.name.startswith(("swetrain.rollout", "swetrain.agent", "swetrain.tasks", *PACKAGES)):
            continue
        try:
            mod = importlib.import_module(info.name)
        except ImportError:  # optional backends (ray) may be missing
            continue
        for name, cls in vars(mod).items():
            if inspect.isclass(cls) and cls.__module__ == mod.__name__ and hasattr(cls, "model_fields") \
                    and not issubclass(cls, SamplingConfig):
                if {"temperature", "max_new_tokens"} <= set(cls.model_fields):
                    copies.append(f"{mod.__name__}.{name}")
    assert not copies, copies
