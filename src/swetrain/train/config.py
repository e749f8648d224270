"""Training recipes: pydantic-validated configs loaded from YAML, with ``key=value`` overrides.

A recipe is a YAML file (``swetrain/train/recipes/<name>.yaml`` ships ``grpo``, ``fcswe`` and
``minirl``) validated into :class:`TrainConfig`. Every section forbids unknown keys, so a typo is a
clear error naming the dotted key. Command-line overrides use dotted keys, e.g.
``algo.reward_scheme=broadcast rollout.group=4 optim.lr=1e-4``; values are parsed as YAML scalars.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

# the config-loading helper (re-exported: callers import ConfigError and friends from here)
from swetrain.env.interface import COMMAND_TIMEOUT_S, TEST_TIMEOUT_S
from swetrain.config import (  # noqa: F401
    ConfigError,
    Section,
    apply_overrides,
    deep_merge,
    format_validation_error,
    load_layers,
    parse_override,
    read_yaml,
    validate_as,
)
from swetrain.rollout.sampling import TrainingSamplingConfig

if TYPE_CHECKING:
    from swetrain.algos.losses import PolicyLossSpec

RECIPES = ("grpo", "fcswe", "minirl")


class TasksConfig(Section):
    """Which tasks the policy trains on."""

    source: str = "builtin"  # "builtin" (the built-in suite) or a path to a tasks file
    split: str = "train"
    limit: int | None = Field(default=None, ge=1)  # use only the first N tasks (after filtering)
    shuffle: bool = True  # shuffle the task order once per pass (seeded)


#: rollout.generator values: what generates the rollouts of a training step
GENERATORS = ("hf", "vllm")


class VLLMGeneratorConfig(Section):
    """The in-process vLLM engine of ``rollout.generator=vllm``
    (:class:`swetrain.policy.vllm_backend.VLLMPolicy`, built from the policy's model folder)."""

    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"  # auto: the checkpoint's dtype
    kv_cache_mb: int | None = Field(default=None, ge=16)  # KV cache size (None: 512 MiB on CPU, a memory share on GPU)
    gpu_memory_utilization: float = Field(default=0.5, gt=0.0, le=1.0)  # GPU share when kv_cache_mb is None
    max_model_len: int | None = Field(default=None, ge=64)  # engine window (None: the model's)

    def policy_kwargs(self, seed: int) -> dict[str, Any]:
        """Keyword arguments of ``VLLMPolicy`` for this section."""
        kwargs: dict[str, Any] = {"dtype": self.dtype, "gpu_memory_utilization": self.gpu_memory_utilization, "seed": seed}
        if self.kv_cache_mb is not None:
            kwargs["kv_cache_memory_bytes"] = int(self.kv_cache_mb) << 20
        if self.max_model_len is not None:
            kwargs["max_model_len"] = self.max_model_len
        return kwargs


class RolloutConfig(TrainingSamplingConfig):
    """How trajectories are sampled each step (FC-SWE: G chains x R attempts). The decoding and
    attempt limits (``temperature``, ``top_p``, ``top_k``, ``max_new_tokens``,
    ``max_context_tokens``, ``max_turns``) are :class:`~swetrain.rollout.sampling.SamplingConfig`'s."""

    tasks_per_step: int = Field(default=4, ge=1)
    group: int = Field(default=4, ge=1)  # G: independent chains per task
    attempts: int = Field(default=1, ge=1)  # R: attempts per chain (R=2 for FC-SWE)
    context_variant: Literal["patch+verifier", "patch-only", "none"] = "patch+verifier"
    context_budget_tokens: int = Field(default=384, ge=16)  # failure context budget
    workers: int = Field(default=1, ge=1)
    backend: Literal["local", "ray"] = "local"  # ray: chains in Ray actors, weights synced each step
    ray_address: str | None = None  # a running Ray cluster (None: start one on this machine)
    ray_num_cpus: int = Field(default=2, ge=1)  # CPUs of a locally started Ray
    sandbox: Literal["local", "docker"] = "local"  # workspace backend (env.backend): bubblewrap or the task's image
    max_wall_s: float = Field(default=900.0, gt=0.0)  # wall-clock limit of one attempt
    max_output_tokens: int | None = Field(default=None, ge=1)  # generated tokens per attempt (None: no limit)
    max_infra_retries: int = Field(default=2, ge=0)  # re-runs of an attempt lost to an infrastructure failure
    # a step whose tries are mostly lost to infrastructure failures stops (InfraFailureError); 1.0: never
    max_infra_fraction: float = Field(default=0.5, gt=0.0, le=1.0)
    verify_timeout_s: float = Field(default=300.0, gt=0.0)
    # what generates the rollouts: hf = transformers (HFPolicy; on CPU the very module being
    # trained), vllm = an in-process vLLM engine that gets the trainer's weights after each update
    generator: str = "hf"
    # generator=hf: the rollout model's dtype. auto/float32 on a single CPU process = the very module
    # being trained; bfloat16 = a bf16 copy synced after every update (AMX CPUs: ~3x prefill, ~2x
    # batched decode; the behaviour log-probs are the copy's and truncated IS corrects the gap:
    # docs/policy.md "bf16 generation on CPU")
    # bf16-native: bfloat16 where the device computes it natively (CUDA; AMX / AVX-512 BF16 / Arm BF16
    # CPUs), float32 (the shared module) elsewhere -- bf16 on an AVX2-only CPU is several times slower
    hf_dtype: Literal["auto", "float32", "bfloat16", "bf16-native"] = "auto"
    # workers > 1 (local backend): the chains' concurrent generate calls share the model -- with
    # hf one continuously batched decode (swetrain.policy.wrappers.continuous: rows join and leave at every
    # step, each keeps its prefix cache), with vllm batched calls (swetrain.policy.wrappers.BatchingPolicy;
    # the oldest waiting call starts a batch after batch_wait_ms). auto = on (measured: vllm ~2x
    # at 2-4 chains, hf 1.4x+ in real episodes: bench/eval_batching_bench.py, docs/policy.md)
    batch_generation: bool | Literal["auto"] = "auto"
    batch_wait_ms: float = Field(default=5.0, ge=0.0)
    vllm: VLLMGeneratorConfig = Field(default_factory=VLLMGeneratorConfig)  # used by generator=vllm

    @field_validator("generator")
    @classmethod
    def _known_generator(cls, value: str) -> str:
        if value == "openai" or value.startswith("openai:"):
            raise ValueError(
                "not supported in training: the trainer pushes its weights to the generator after "
                "every update, which an OpenAI-compatible (vLLM/SGLang) server cannot take; use "
                "generator=vllm (in-process engine) or hf"
            )
        if value not in GENERATORS:
            raise ValueError(f"unknown generator {value!r}; choose one of {', '.join(GENERATORS)}")
        return value

    @model_validator(mode="after")
    def _generator_rules(self) -> RolloutConfig:
        if self.generator == "vllm":
            if self.backend == "ray":
                raise ValueError("rollout.generator=vllm: not supported with rollout.backend=ray "
                                 "(Ray actors build their own transformers policy)")
            if self.top_p < 1.0 or self.top_k > 0:
                # vLLM's processed_logprobs are taken after top-p/top-k truncation (renormalised),
                # the transformers generator reports the untruncated tempered log-prob: the
                # behaviour log-probs the trainer reads would change meaning with the generator
                raise ValueError(
                    f"rollout.generator=vllm needs rollout.top_p=1 and rollout.top_k=0 (got top_p={self.top_p:g}, "
                    f"top_k={self.top_k}): vLLM reports behaviour log-probs after truncation, the trainer's "
                    "convention is the untruncated tempered distribution"
                )
        return self

    def batches_generation(self) -> bool:
        """``batch_generation`` resolved: ``auto`` is on (records do not change, only throughput)."""
        if self.batch_generation == "auto":
            return True
        return bool(self.batch_generation)

    def engine_config(self, seed: int, edit_match: str = "exact", command_timeout_s: float = COMMAND_TIMEOUT_S,
                      test_timeout_s: float = TEST_TIMEOUT_S) -> Any:
        """The rollout engine's :class:`swetrain.rollout.chain_job.ChainJobConfig` for this section:
        the one place where the training recipe's rollout keys map onto the engine's (a test checks
        that every engine field is mapped, so a new engine knob cannot be silently dropped).
        ``edit_match`` and the timeouts come from the ``env`` section (:meth:`EnvConfig.run_kwargs`)."""
        from swetrain.rollout.chain_job import ChainJobConfig

        return ChainJobConfig.from_sampling(
            self,
            extra_limits={"max_wall_s": self.max_wall_s, "max_output_tokens": self.max_output_tokens},
            group=self.group,
            attempts=self.attempts,
            context_variant=self.context_variant,
            context_budget_tokens=self.context_budget_tokens,
            seed=seed,
            max_infra_retries=self.max_infra_retries,
            max_infra_fraction=self.max_infra_fraction,
            verify_timeout_s=self.verify_timeout_s,
            sandbox=self.sandbox,
            batch_generation=self.batches_generation(),
            batch_wait_ms=self.batch_wait_ms,
            edit_match=edit_match,
            command_timeout_s=command_timeout_s,
            test_timeout_s=test_timeout_s,
        )


class EnvConfig(Section):
    """The agent's environment. ``edit_match``: how ``file_editor str_replace`` finds ``old_str``;
    ``exact`` = R2E-Gym (verbatim, unique), ``tolerant`` = the same when verbatim, else layered
    matching that carries the edit over (``swetrain.env.edit_match``, docs/agent.md)."""

    edit_match: Literal["exact", "tolerant"] = "exact"
    # wall-clock limit of one agent command (e.g. a test run the agent's edit made hang)
    command_timeout_s: float = Field(default=COMMAND_TIMEOUT_S, gt=0.0)
    # the verifier's per-test limit: a test that runs longer FAILS with a message saying it hung
    test_timeout_s: float = Field(default=TEST_TIMEOUT_S, gt=0.0)

    def run_kwargs(self) -> dict[str, Any]:
        """This section as keyword arguments of the rollout engine's entry points (``run_local``,
        ``evaluate_policy``, ``estimate_mastery``, :meth:`RolloutConfig.engine_config`)."""
        return {"edit_match": self.edit_match, "command_timeout_s": self.command_timeout_s,
                "test_timeout_s": self.test_timeout_s}


class MopdConfig(Section):
    """Parameters of the ``mopd`` policy loss (seed 000, eqs. 25-26: MOPD with ExOPD).

    ``teachers`` maps a route (a task's ``route``) to the frozen expert's model folder; every
    student trajectory is scored by its route's teacher and by the frozen reference (the student's
    initial weights), i.e. K + 1 frozen forwards over a batch with K routes."""

    lam: float = Field(default=1.25, ge=1.0)  # λ: ExOPD extrapolation (1.0 = plain on-policy distillation)
    gate: bool = True  # ReLU gate on the teacher-reference gap
    clip: float = Field(default=5.0, gt=0.0)  # c_a: advantage clip
    teachers: dict[str, str] = Field(default_factory=dict)  # route -> model folder


def _loss_spec(name: str) -> PolicyLossSpec:
    """The registry spec of policy loss ``name`` (swetrain.algos, imported on first use)."""
    from swetrain.algos.losses import get_loss_spec

    return get_loss_spec(name)


def register_loss_params(name: str):
    """Class decorator attaching the ``algo.params`` model of the registered policy loss ``name``
    (the same as ``register_policy_loss(name, params=Model)``, which is the way to declare one)."""

    def deco(model: type[BaseModel]) -> type[BaseModel]:
        from swetrain.algos.losses import set_loss_params

        set_loss_params(name, model)
        return model

    return deco


def loss_params(algo: Any) -> dict[str, Any]:
    """Keyword arguments of ``algo.policy_loss`` besides the tensors (validated by its spec)."""
    return _loss_spec(algo.policy_loss).params_of(algo)


def __getattr__(name: str) -> Any:
    """``LOSS_PARAMS`` (loss name -> ``algo.params`` model) and ``BUILTIN_LOSS_KEYS`` (loss name ->
    its built-in ``algo`` keys): views of the algos registry, imported on first use."""
    if name == "LOSS_PARAMS":
        from swetrain.algos.losses import LossParamModels

        return LossParamModels()
    if name == "BUILTIN_LOSS_KEYS":
        from swetrain.algos.losses import builtin_loss_keys

        return builtin_loss_keys()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _registry_names(kind: str) -> list[str]:
    import swetrain.algos as algos

    if kind == "advantage":
        return algos.list_advantage_estimators()
    if kind == "policy_loss":
        return algos.list_policy_losses()
    if kind == "loss_agg":
        return list(algos.AGG_MODES)
    return list(algos.REWARD_SCHEMES)


class AlgoConfig(Section):
    """Rewards, advantages and the policy loss (swetrain.algos).

    ``reward_scheme``, ``advantage``, ``policy_loss`` and ``loss_agg`` accept exactly the names
    registered in :mod:`swetrain.algos` (a newly decorated estimator or loss is accepted as is)."""

    reward_scheme: str = "local"
    advantage: str = "grpo"
    policy_loss: str = "clipped"
    loss_agg: str = "token-mean"
    clip_low: float = Field(default=0.2, ge=0.0)
    clip_high: float = Field(default=0.28, ge=0.0)
    runtime_penalty: bool = True  # overwrite advantages of invalid assistant messages
    invalid_penalty: float = -5.0
    # Agentic-miniRL (seed 000)
    kl_beta: float = Field(default=0.0, ge=0.0)  # K1 coefficient in the reward path
    gamma: float = Field(default=1.0, ge=0.0, le=1.0)  # discount of the return-to-go
    use_return_to_go: bool = False  # token-level returns (eq. 14) instead of a broadcast scalar
    tis_cap: float = Field(default=2.0, gt=0.0)
    eps_low: float = Field(default=0.2, ge=0.0)
    eps_high: float = Field(default=0.28, ge=0.0)
    adv_eps: float = Field(default=1e-6, gt=0.0)
    mopd: MopdConfig = Field(default_factory=MopdConfig)  # parameters of policy_loss=mopd
    params: dict[str, Any] = Field(default_factory=dict)  # parameters of a loss registered with params=Model

    @model_validator(mode="after")
    def _params_of_the_loss(self) -> AlgoConfig:
        """The loss's parameters validate against its spec's model (``algo.params``, or the
        built-in ``algo`` keys of ``clipped``/``minirl``); errors name the dotted key."""
        spec = _loss_spec(self.policy_loss)
        try:
            spec.params_of(self)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(x) for x in err["loc"])
            what = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            section = "algo" if spec.algo_keys else "algo.params"
            raise ValueError(f"{section}.{key}: {what} (policy loss {self.policy_loss!r})") from None
        return self

    @field_validator("reward_scheme", "advantage", "policy_loss", "loss_agg")
    @classmethod
    def _registered(cls, value: Any, info: Any) -> Any:
        names = _registry_names(info.field_name)
        if value not in names:
            raise ValueError(f"unknown {info.field_name.replace('_', ' ')} {value!r}; registered: {', '.join(names)}")
        return value


class OptimConfig(Section):
    """AdamW + cosine schedule with warmup + gradient clipping."""

    lr: float = Field(default=1e-4, gt=0.0)
    min_lr_ratio: float = Field(default=0.1, ge=0.0, le=1.0)
    weight_decay: float = Field(default=0.0, ge=0.0)
    betas: tuple[float, float] = (0.9, 0.999)
    warmup_steps: int = Field(default=0, ge=0)  # in optimizer steps
    grad_clip: float = Field(default=1.0, gt=0.0)
    epochs: int = Field(default=1, ge=1)  # policy epochs over each step's rollouts
    mini_batches: int = Field(default=1, ge=1)  # optimizer steps per epoch
    micro_batch_tokens: int = Field(default=4096, ge=16)  # padded tokens per forward pass
    # rows whose token advantages are all 0 add nothing to the gradient (every policy loss is
    # linear in A_t): count them in the loss normaliser but run no forward/backward on them
    skip_zero_advantage: bool = True
    # one epoch of one mini-batch is exactly on-policy: the old log-probs are the training
    # forward's own, detached, so the no-grad scoring forward is skipped (PolicyUpdater.on_policy_shortcut
    # lists the other conditions); false: always score them in a separate forward
    on_policy_shortcut: bool = True


class TrainLoopConfig(Section):
    """Length of the run, checkpointing, precision and the distributed path."""

    steps: int = Field(default=10, ge=0)
    save_every: int = Field(default=5, ge=1)
    keep_checkpoints: int = Field(default=2, ge=1)
    # auto: bf16 autocast on CUDA, fp32 on CPU; bf16-native: bf16 where the device computes it
    # natively (a bf16 GPU; a CPU with AMX / AVX-512 BF16 / Arm BF16), fp32 elsewhere
    precision: Literal["auto", "fp32", "bf16", "bf16-native"] = "auto"
    # train only the top N decoder blocks (+ final norm); null = every parameter (train/freeze.py)
    trainable_layers: int | None = Field(default=None, ge=1)
    fsdp: Literal["auto", "off", "on"] = "auto"  # auto: FSDP only when torch.distributed has >1 rank
    device: str = "auto"  # auto: cuda if available else cpu

    @field_validator("fsdp", mode="before")
    @classmethod
    def _yaml_on_off(cls, value: Any) -> Any:
        """YAML 1.1 reads ``on``/``off`` as booleans; ``train.fsdp=on`` means the string."""
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value


class LoggingConfig(Section):
    tensorboard: bool = True
    wandb: bool = False
    wandb_project: str = "swetrain"
    progress: bool = True


class TrainConfig(BaseModel):
    """A full RL training recipe."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    recipe: str = "custom"
    description: str = ""
    seed: int = 0
    policy: str = "tiny"  # policy spec for swetrain.policy.load_policy (a path, "tiny", "smollm2")
    tasks: TasksConfig = Field(default_factory=TasksConfig)
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    env: EnvConfig = Field(default_factory=EnvConfig)
    algo: AlgoConfig = Field(default_factory=AlgoConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    train: TrainLoopConfig = Field(default_factory=TrainLoopConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)

    @model_validator(mode="after")
    def _recipe_rules(self) -> TrainConfig:
        if self.algo.advantage == "active_set" and self.rollout.attempts < 2 and self.recipe == "fcswe":
            raise ValueError("recipe fcswe needs rollout.attempts >= 2 (recovery chains)")
        if _loss_spec(self.algo.policy_loss).needs_teachers and not self.algo.mopd.teachers:
            raise ValueError(f"algo.policy_loss={self.algo.policy_loss} needs algo.mopd.teachers "
                             "(route -> expert model folder)")
        if self.algo.kl_beta > 0 and not self.algo.use_return_to_go:
            raise ValueError("algo.kl_beta > 0 puts K1 in the reward path: set algo.use_return_to_go=true")
        return self

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


# ----------------------------------------------------------------------------------------------
# loading


def recipe_path(name: str) -> Path:
    """Path of a built-in recipe YAML."""
    if name not in RECIPES:
        raise ConfigError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return Path(str(resources.files("swetrain.train") / "recipes" / f"{name}.yaml"))


def validate_config(data: dict[str, Any], origin: str = "config") -> TrainConfig:
    return validate_as(TrainConfig, data, origin, "training config")


def load_config(
    recipe: str | None = None,
    config_file: str | Path | None = None,
    overrides: list[str] | None = None,
) -> TrainConfig:
    """Recipe YAML, then ``config_file`` merged on top, then ``key=value`` overrides; validated."""
    layers = [(f"recipe {recipe}", read_yaml(recipe_path(recipe)))] if recipe else []
    return load_layers(TrainConfig, layers, config_file=config_file, overrides=overrides, what="training config")
