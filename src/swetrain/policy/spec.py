"""One policy-spec grammar for every command (``eval``, ``rollout``, ``train``, ``quickstart``,
``curriculum``, ``policy serve``).

A spec is one string:

* ``PATH`` or ``hf:PATH``: a transformers model folder (it must hold ``config.json``), e.g. the
  folder ``swetrain policy tiny --out tiny`` writes;
* ``tiny`` / ``tiny:PRESET``: the tiny default model (randomly initialised, built once);
* ``tiny-sft``, ``tiny-sft-build``, ``smollm2``, ``smollm2-sft``: the named checkpoints (the tiny
  warm start shipped with the package / built locally, SmolLM2-135M-Instruct and its warm start);
* ``openai:URL#model=NAME&tokenizer=PATH``: an OpenAI-compatible server;
* ``vllm:PATH``: in-process vLLM;
* ``scripted:NAME[:TOKENIZER_DIR]``: a zero-cost scripted policy (``finish``, ``explore``, ``invalid``);
* ``scripted-repair[:SEED]``: the scripted repair baseline (:mod:`swetrain.agent.scripted_repair_policy`).

:func:`parse_policy_spec` is pure (no file is built, nothing imported). Building is
:meth:`PolicySpec.build` (``swetrain.policy.load_policy``) and, for the commands that train or
serve weights, :meth:`PolicySpec.model_path`. The named warm starts and the scripted policies are
made by higher layers (the tiny recipe ``recipes.tiny``, ``agent``); this layer names them by import
string and imports them only when such a spec is built, so the layering holds at import time.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

SCHEMES = (
    "PATH (model folder)", "hf:PATH", "tiny", "tiny:<preset>", "tiny-sft", "tiny-sft-build", "small-sft", "smollm2",
    "smollm2-sft", "smollm2-easy-sft", "smollm2-easy-sft-build", "openai:URL#model=NAME&tokenizer=PATH", "vllm:PATH", "scripted:NAME[:TOKENIZER]",
    "scripted-repair[:SEED]",
)
#: Named local checkpoints -> "module:function(name, progress=...) -> Path" that builds/finds them.
NAMED = {
    "tiny-sft": "swetrain.recipes.tiny.policy_spec:named_checkpoint",
    "tiny-sft-build": "swetrain.recipes.tiny.policy_spec:named_checkpoint",
    "small-sft": "swetrain.recipes.tiny.policy_spec:named_checkpoint",
    "smollm2-sft": "swetrain.recipes.tiny.policy_spec:named_checkpoint",
    "smollm2-easy-sft": "swetrain.recipes.tiny.policy_spec:named_checkpoint",
    "smollm2-easy-sft-build": "swetrain.recipes.tiny.policy_spec:named_checkpoint",
}
KINDS = ("hf", "tiny", "smollm2", "named", "openai", "vllm", "scripted", "scripted-repair")
LOCAL_MODEL_KINDS = ("hf", "tiny", "smollm2", "named", "vllm")


class PolicySpecError(ValueError):
    """A policy spec string that names no backend or lacks a required part."""


def _bad(spec: str, why: str) -> PolicySpecError:
    return PolicySpecError(f"policy spec {spec!r}: {why}; expected one of {', '.join(SCHEMES)}")


def _model_dir(spec: str, raw: str) -> Path:
    if not raw:
        raise _bad(spec, "missing the model folder after the scheme")
    path = Path(raw).expanduser()
    if not (path / "config.json").is_file():
        found = _checkpoint_model(path)
        if found is None:
            raise _bad(spec, f"{path} is not a transformers model folder (no config.json), nor a training "
                             "checkpoint (step-N/) or run directory (checkpoints/) holding one")
        return found
    return path


def _checkpoint_model(path: Path) -> Path | None:
    """The model of a training checkpoint ``.../step-N`` (its ``model/``), of a run's ``checkpoints/``
    folder or of a run directory (the latest checkpoint, as ``checkpoints/latest.json`` names it)."""
    import json

    if (path / "model" / "config.json").is_file():
        return path / "model"
    ckpts = path / "checkpoints" if (path / "checkpoints").is_dir() else path
    latest = ckpts / "latest.json"
    steps = sorted(p for p in ckpts.glob("step-*") if (p / "model" / "config.json").is_file())
    if latest.is_file():
        try:
            named = ckpts / str(json.loads(latest.read_text()).get("path", ""))
        except (OSError, ValueError, AttributeError):
            named = None
        if named is not None and named != ckpts and (named / "model" / "config.json").is_file():
            return named / "model"
    return steps[-1] / "model" if steps else None


def _import(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class PolicySpec:
    """A parsed policy spec (see the module docstring)."""

    raw: str
    kind: str  # one of KINDS
    path: Path | None = None  # hf / vllm: the model folder
    name: str = ""  # tiny: preset; named: the checkpoint name; scripted: the script name
    url: str = ""  # openai
    options: dict[str, str] = field(default_factory=dict)  # openai: model, tokenizer; scripted: tokenizer
    seed: int = 0  # scripted-repair

    @property
    def is_local_model(self) -> bool:
        """Weights in a local transformers folder (what training, SFT and ``policy serve`` need)."""
        return self.kind in LOCAL_MODEL_KINDS

    def model_path(self, *, progress: Any = False) -> Path:
        """The local transformers folder of this spec, built on first use (tiny, warm starts)."""
        if self.kind in ("hf", "vllm"):
            assert self.path is not None
            return self.path
        if self.kind == "tiny":
            from swetrain.policy.tiny import ensure_tiny

            return Path(ensure_tiny(self.name))
        if self.kind == "smollm2":
            from swetrain.policy.smollm2 import ensure_smollm2

            return Path(ensure_smollm2())
        if self.kind == "named":
            return Path(_import(NAMED[self.name])(self.name, progress=progress))
        raise PolicySpecError(
            f"policy spec {self.raw!r}: a {self.kind} policy has no local model folder "
            "(this command needs weights: a model folder, tiny, tiny-sft, smollm2 or smollm2-sft)"
        )

    def build(self, **kwargs: Any) -> Any:
        """The policy object. ``kwargs`` (``device``, ``dtype``, ...) go to model backends."""
        if self.kind == "openai":
            from swetrain.policy.openai_client import OpenAIPolicy

            return OpenAIPolicy(self.url, self.options.get("model") or None, self.options["tokenizer"], **kwargs)
        if self.kind == "vllm":
            from swetrain.policy.vllm_backend import VLLMPolicy, vllm_available

            if not vllm_available():
                raise _bad(self.raw, "vLLM is not installed in this environment")
            return VLLMPolicy(self.model_path(), **kwargs)
        if self.kind == "scripted":
            return _import("swetrain.agent.scripted:load_scripted")(self.raw)
        if self.kind == "scripted-repair":
            return _import("swetrain.agent.scripted_repair_policy:ScriptedRepairPolicy").create(seed=self.seed)
        from swetrain.policy.hf import HFPolicy

        return HFPolicy(self.model_path(), **kwargs)


def parse_policy_spec(spec: Any) -> PolicySpec:
    """Parse ``spec`` (pure: checks folders exist, builds nothing). Raises :class:`PolicySpecError`."""
    if not isinstance(spec, str) or not spec.strip():
        raise PolicySpecError(f"policy spec {spec!r}: must be a non-empty string; expected one of {', '.join(SCHEMES)}")
    spec = spec.strip()
    scheme, sep, rest = spec.partition(":")
    if scheme == "tiny":
        from swetrain.policy.tiny import PRESETS

        preset = rest or "tiny"
        if preset not in PRESETS:
            raise _bad(spec, f"unknown tiny preset {preset!r} (presets: {sorted(PRESETS)})")
        return PolicySpec(spec, "tiny", name=preset)
    if scheme == "smollm2":
        if sep:
            raise _bad(spec, "smollm2 takes no argument")
        return PolicySpec(spec, "smollm2", name="smollm2")
    if spec in NAMED:
        return PolicySpec(spec, "named", name=spec)
    if scheme in ("hf", "vllm"):
        return PolicySpec(spec, scheme, path=_model_dir(spec, rest))
    if scheme == "openai":
        url, _, fragment = rest.partition("#")
        if not url.startswith(("http://", "https://")):
            raise _bad(spec, "the openai scheme needs an http(s):// URL")
        options = {k: v[-1] for k, v in parse_qs(fragment, keep_blank_values=True).items()}
        unknown = sorted(set(options) - {"model", "tokenizer"})
        if unknown:
            raise _bad(spec, f"unknown option(s) {unknown} after '#' (allowed: model, tokenizer)")
        if not options.get("tokenizer"):
            raise _bad(spec, "the openai scheme needs '#tokenizer=/path/to/tokenizer' (the served model's folder)")
        return PolicySpec(spec, "openai", url=url, options=options)
    if scheme == "scripted":
        name, _, tok = rest.partition(":")
        if not name:
            raise _bad(spec, "expected 'scripted:NAME[:TOKENIZER_DIR]'")
        return PolicySpec(spec, "scripted", name=name, options={"tokenizer": tok} if tok else {})
    if scheme == "scripted-repair":
        try:
            seed = int(rest) if sep else 0
        except ValueError:
            raise _bad(spec, f"the seed after 'scripted-repair:' must be an integer, got {rest!r}") from None
        return PolicySpec(spec, "scripted-repair", name="scripted-repair", seed=seed)
    path = Path(spec).expanduser()
    if path.is_dir():  # a plain model folder, as transformers users pass it
        return PolicySpec(spec, "hf", path=_model_dir(spec, spec).resolve())
    if not sep and ("/" in spec or spec.startswith(".")):
        raise _bad(spec, f"{path} is not a folder")
    raise _bad(spec, f"unknown scheme {scheme!r} (and not a model folder)")


def resolve_policy_path(spec: str, *, progress: Any = False) -> Path:
    """The local model folder of ``spec`` (any spec that has weights: a folder, ``hf:PATH``, ``tiny``,
    ``tiny-sft``, ``smollm2``, ...), built on first use. Raises :class:`PolicySpecError` (a
    ``ValueError``) naming the spec otherwise."""
    return parse_policy_spec(spec).model_path(progress=progress)


def untrained_warning(spec: str) -> str | None:
    """A warning for a spec that names an untrained model (``tiny``, ``tiny:<preset>``): its
    episodes end on the context limit with nothing resolved, which a first run should not mistake
    for a measurement."""
    if isinstance(spec, str) and (spec.strip() == "tiny" or spec.strip().startswith("tiny:")):
        return (f"warning: policy {spec!r} is an untrained, randomly initialised model: expect every episode to run to "
                "its limits and resolve nothing. For a meaningful first run use tiny-sft (the shipped warm start) or "
                "scripted-repair (a scripted agent, seconds per task).")
    return None

