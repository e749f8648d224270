"""How an agent samples, in one model: decoding (temperature, top-p, top-k) and the limits of an
attempt (tokens per call, context, turns).

:class:`SamplingConfig` is the one home of these settings. The training recipe's ``rollout``
section, the experts pipeline's ``sampling`` section and the evaluation protocol extend it (their
keys stay flat: ``rollout.temperature=0.7``, ``sampling.top_k=20``, ``--temperature 0.7``), and
mastery estimation takes one. The engine's :class:`~swetrain.rollout.chain_job.ChainJobConfig` is
built from it (:meth:`SamplingConfig.episode_limits`; ``sampling().model_dump()`` gives the
keyword arguments of :func:`swetrain.rollout.engine.run_local`).

Decoding seeds are not sampling settings: a run's seed is the caller's (``seed`` of a training
recipe or of the experts pipeline, ``--seeds`` of ``swetrain eval``) and every attempt's generation
seed derives from it (:func:`swetrain.agent.loop.attempt_seed`).

Defaults: the model's defaults are the training recipes' (T 1.0, no top-p/top-k cut, 96 tokens per
call, a 2048-token context, 8 turns). Two entry points have kept other defaults since before the
settings were gathered here; :data:`DEFAULTS` lists them, so a difference is visible in one place.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from swetrain.config import Section, load_layers


class SamplingConfig(Section):
    """Decoding and the limits of one attempt (see the module docstring for the defaults)."""

    temperature: float = Field(default=1.0, ge=0.0)  # 0 = greedy
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)  # nucleus mass (1.0 = no cut)
    top_k: int = Field(default=0, ge=0)  # sample among the k most likely tokens (0 = no cut; paper eval: 20)
    max_new_tokens: int = Field(default=96, ge=1)  # tokens per generation call
    max_context_tokens: int = Field(default=2048, ge=64)  # context tokens of an attempt
    max_turns: int = Field(default=8, ge=1)  # agent turns (actions) per attempt

    def sampling(self) -> SamplingConfig:
        """The plain settings (of a section that extends this model)."""
        return SamplingConfig(**{k: getattr(self, k) for k in SAMPLING_KEYS})

    def override(self, **values: Any) -> SamplingConfig:
        """A validated copy with ``values`` replaced (``None`` = not given, keeps the current value);
        a :class:`~swetrain.config.ConfigError` names a bad or unknown key."""
        given = {k: v for k, v in values.items() if v is not None}
        return load_layers(SamplingConfig, [("settings", self.sampling().model_dump()), ("given", given)],
                           what="sampling settings")

    def episode_limits(self, **extra: Any) -> Any:
        """The agent's :class:`~swetrain.agent.loop.EpisodeLimits` of these settings (``extra``:
        the limits that are not sampling settings, e.g. ``max_wall_s``)."""
        from swetrain.agent.loop import EpisodeLimits

        return EpisodeLimits(max_turns=self.max_turns, max_context_tokens=self.max_context_tokens,
                             max_tokens_per_call=self.max_new_tokens, **extra)


#: the field names of :class:`SamplingConfig`
SAMPLING_KEYS: tuple[str, ...] = tuple(SamplingConfig.model_fields)


class TrainingSamplingConfig(SamplingConfig):
    """Sampling of rollouts that are trained on: a positive temperature (the trainer's log-probs
    are those of the tempered distribution; greedy groups would be identical)."""

    @field_validator("temperature")
    @classmethod
    def _sampled(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("must be > 0 for rollouts that are trained on (0 = greedy)")
        return value


#: Effective defaults of each entry point. ``train`` (the model's own) is also the experts
#: pipeline's; ``eval`` is ``swetrain eval``'s and :func:`swetrain.eval.evaluate.evaluate_policy`'s
#: (an evaluation samples colder and longer); ``mastery`` is ``swetrain curriculum mastery``'s and
#: :func:`swetrain.curriculum.mastery.estimate_mastery`'s.
DEFAULTS: dict[str, SamplingConfig] = {
    "train": SamplingConfig(),
    "eval": SamplingConfig(temperature=0.5, max_new_tokens=192, max_context_tokens=8192),
    "mastery": SamplingConfig(temperature=0.5, max_new_tokens=192, max_context_tokens=3072),
}


def sampling_defaults(entry: str) -> SamplingConfig:
    """The default sampling of entry point ``entry`` (a key of :data:`DEFAULTS`), as a fresh copy."""
    if entry not in DEFAULTS:
        raise KeyError(f"no sampling defaults for {entry!r}; known: {', '.join(DEFAULTS)}")
    return DEFAULTS[entry].model_copy()
