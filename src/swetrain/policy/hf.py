"""The ``hf`` backend: any transformers causal LM from a local folder, on CPU or CUDA.

Generation is our own batched sampling loop over the model's KV cache (left padding, explicit
attention mask and position ids) so that the ids returned are exactly the ids sampled and their
behaviour log-probs are computed from the very logits that were sampled from. Single-prompt calls
(one agent turn) reuse the KV states of the conversation's earlier turns through a
:class:`~swetrain.policy.prefix_cache.PrefixCache`, so a turn encodes only its new tokens.

Log-prob convention (the same in ``generate``, ``score`` and the OpenAI-compatible server):

    behaviour logprob_t = log_softmax(logits_t / T)[token_t]          (T = temperature; T=1 if greedy)

i.e. the temperature-scaled model distribution, *before* top-p truncation (vLLM's
``logprobs_mode="processed_logprobs"`` without top-p/top-k). ``score(..., temperature=T)`` recomputes
exactly this quantity, so ``generate`` with ``temperature=T`` and ``score`` with the same ``T``
agree up to float error. With ``top_p < 1`` the tokens are sampled from the renormalised nucleus but
the log-probs stay those of the untruncated tempered distribution.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from swetrain.policy.base import Generation, GenerationConfig
from swetrain.policy.kv_growth import fill_cache, grow_in_place, growing_layer_class
from swetrain.policy.prefix_cache import PrefixCache

log = logging.getLogger(__name__)


def resolve_device(device: str | None):
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def resolve_dtype(dtype: Any, device) -> Any:
    """``None``/"auto" -> float32 on CPU, bfloat16 on CUDA; "bf16-native" -> bfloat16 where the
    device computes it natively (a bf16 GPU; a CPU with AMX / AVX-512 BF16 / Arm BF16), else float32;
    strings like "float32" are accepted. bfloat16 asked for on a CPU without bf16 arithmetic is
    kept, with a warning (it runs several times slower than float32 there)."""
    import torch

    from swetrain.policy.cpu_features import device_computes_bf16, warn_slow_cpu_bf16

    if dtype is None or dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if dtype == "bf16-native":
        return torch.bfloat16 if device_computes_bf16(device) else torch.float32
    if isinstance(dtype, torch.dtype):
        value = dtype
    else:
        value = getattr(torch, str(dtype).removeprefix("torch."), None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"dtype={dtype!r}: not a torch dtype (try 'float32', 'bfloat16', 'bf16-native', 'float16')")
    if value == torch.bfloat16 and device.type == "cpu":
        warn_slow_cpu_bf16("dtype bfloat16")
    return value


def validate_config(config: GenerationConfig) -> None:
    if not isinstance(config.max_new_tokens, int) or config.max_new_tokens < 1:
        raise ValueError(f"GenerationConfig.max_new_tokens={config.max_new_tokens!r}: must be an int >= 1")
    if config.temperature < 0:
        raise ValueError(f"GenerationConfig.temperature={config.temperature!r}: must be >= 0 (0 = greedy)")
    if not 0 < config.top_p <= 1:
        raise ValueError(f"GenerationConfig.top_p={config.top_p!r}: must be in (0, 1]")
    if not isinstance(config.top_k, int) or config.top_k < 0:
        raise ValueError(f"GenerationConfig.top_k={config.top_k!r}: must be an int >= 0 (0 = no top-k cut)")


def validate_ids(sequences: list[list[int]], vocab_size: int, what: str) -> None:
    if not isinstance(sequences, list):
        raise TypeError(f"{what}: expected a list of token-id lists, got {type(sequences).__name__}")
    for i, seq in enumerate(sequences):
        if not isinstance(seq, (list, tuple)) or not seq:
            raise ValueError(f"{what}[{i}]: expected a non-empty list of token ids, got {seq!r:.80}")
        for tok in seq:
            if not isinstance(tok, int) or isinstance(tok, bool) or not 0 <= tok < vocab_size:
                raise ValueError(f"{what}[{i}]: token id {tok!r} is not an int in [0, {vocab_size})")


def eos_token_ids(model: Any, tokenizer: Any) -> set[int]:
    """EOS ids from the generation config, the model config and the tokenizer."""
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), getattr(model, "config", None), tokenizer):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if value is None:
            continue
        ids.update([value] if isinstance(value, int) else list(value))
    return ids


def sample_next(logits, temperature: float, top_p: float, generators: list, top_k: int = 0) -> tuple[Any, Any]:
    """Pick one token per row and its behaviour log-prob.

    logits: [B, V] float32. Returns (tokens [B] long, logprobs [B] float32) where
    logprobs = log_softmax(logits / T)[token] (T=1 when greedy, ``temperature == 0``). ``top_k > 0``
    samples among the k most likely tokens (applied before ``top_p``, as vLLM does); like ``top_p`` it
    renormalises the sampling distribution but not the reported log-prob.
    """
    import torch

    if temperature == 0:
        logp = torch.log_softmax(logits, dim=-1)
        tokens = logits.argmax(dim=-1)
        return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)
    logp = torch.log_softmax(logits / temperature, dim=-1)
    probs = logp.exp()
    if 0 < top_k < probs.shape[-1]:
        kth = probs.topk(top_k, dim=-1).values[:, -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    if top_p < 1.0:
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        before = sorted_probs.cumsum(dim=-1) - sorted_probs  # mass strictly above each token
        sorted_probs = sorted_probs.masked_fill(before >= top_p, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    tokens = torch.empty(logits.shape[0], dtype=torch.long, device=logits.device)
    for row, generator in enumerate(generators):
        tokens[row] = torch.multinomial(probs[row], 1, generator=generator)[0]
    return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)


def kv_cache_of(output: Any) -> Any:
    """The KV cache of a transformers forward output (``cache`` or, in older versions, ``past_key_values``)."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def left_pad(sequences: list[list[int]], pad_id: int, device):
    """[B, L] ids, attention mask and position ids for left-padded sequences."""
    import torch

    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
        mask[row, width - len(seq) :] = 1
    positions = (mask.cumsum(dim=-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), positions.to(device)


def sequence_logprobs(
    model: Any,
    sequences: list[list[int]],
    starts: list[int],
    *,
    temperature: float = 1.0,
    pad_id: int = 0,
    max_batch_tokens: int = 16384,
) -> list[Any]:
    """log_softmax(logits/T)[seq[t]] for t in [start, len) for each sequence, batched.

    Returns one 1-D float32 tensor per sequence (length ``len - start``). Gradients flow when called
    outside ``torch.no_grad`` (the trainer can use it on ``HFPolicy.model``). Sequences are grouped
    by length into left-padded micro-batches of at most ``max_batch_tokens`` padded tokens, and only
    the logits of the last ``max(len - start) + 1`` columns are materialised.
    """
    import torch

    device = next(model.parameters()).device
    scale = 1.0 if temperature == 0 else temperature
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    results: list[Any] = [None] * len(sequences)
    batch: list[int] = []

    def flush() -> None:
        if not batch:
            return
        seqs = [sequences[i] for i in batch]
        ids, mask, positions = left_pad(seqs, pad_id, device)
        keep = max(len(sequences[i]) - starts[i] for i in batch) + 1
        try:
            logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False, logits_to_keep=keep).logits
        except TypeError:  # model without logits_to_keep
            logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits[:, -keep:]
        logp = torch.log_softmax(logits.float() / scale, dim=-1)  # [B, keep, V]
        for row, i in enumerate(batch):
            n = len(sequences[i]) - starts[i]
            targets = ids[row, ids.shape[1] - n :]  # the last n tokens
            rows = logp[row, keep - 1 - n : keep - 1]  # logits predicting them
            results[i] = rows.gather(-1, targets[:, None]).squeeze(-1)
        batch.clear()

    for i in order:
        width = len(sequences[i])
        if batch and width * (len(batch) + 1) > max_batch_tokens:
            flush()
        batch.append(i)
    flush()
    return results


class HFPolicy:
    """A transformers causal LM as a swetrain ``Policy`` (generate / score / sync_weights)."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        device: str | None = None,
        dtype: Any = None,
        model: Any = None,
        tokenizer: Any = None,
        attn_implementation: str | None = "sdpa",
        prefix_cache_tokens: int = 32768,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from swetrain.policy.threads import configure_torch_threads

        configure_torch_threads()
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.path = Path(path) if path is not None else None
        if model is None:
            if self.path is None:
                raise ValueError("HFPolicy: give a model folder (path) or a loaded model")
            if not (self.path / "config.json").is_file():
                raise FileNotFoundError(f"HFPolicy path {self.path}: no config.json (not a transformers model folder)")
            kwargs: dict[str, Any] = {"dtype": self.dtype}
            if attn_implementation:
                kwargs["attn_implementation"] = attn_implementation
            model = AutoModelForCausalLM.from_pretrained(self.path, **kwargs)
        self.model = model.to(self.device).eval()
        if tokenizer is None:
            source = self.path or getattr(model, "name_or_path", None)
            if not source:
                raise ValueError("HFPolicy: give a tokenizer when the model has no path")
            tokenizer = AutoTokenizer.from_pretrained(source)
        self.tokenizer = tokenizer
        self.version = 0
        self.vocab_size = int(self.model.get_input_embeddings().weight.shape[0])
        self.eos_ids = eos_token_ids(self.model, tokenizer)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else min(self.eos_ids or {0})
        self.max_positions = int(getattr(self.model.config, "max_position_embeddings", 0) or 0) or None
        self.torch_module = torch
        # transformers >= 5.2x names the KV cache argument ``cache`` (``past_key_values`` before)
        params = inspect.signature(self.model.forward).parameters
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        # KV states of earlier single-prompt calls, reused by the next turn of the same conversation
        self.prefix_cache = PrefixCache(prefix_cache_tokens)
        self._row_caches: bool | None = None  # batched calls reuse per-row KV states (see rows_cacheable)

    @property
    def max_context(self) -> int | None:
        """The model's window: ``config.max_position_embeddings`` (None if the config has none)."""
        return self.max_positions

    # ------------------------------------------------------------------ generate
    def generate(
        self, prompts: list[list[int]], config: GenerationConfig | None = None, *, seeds: list[int | None] | None = None
    ) -> list[Generation]:
        """Sample one continuation per prompt (left-padded batch, KV cache).

        Row ``i`` samples with its own generator seeded ``config.seed + i`` (when a seed is given),
        so a fixed seed reproduces the batch exactly. Generation stops after a token in
        ``config.stop_token_ids`` or an EOS id (finish_reason "stop", the stop token is included in
        ``token_ids``) or after ``max_new_tokens`` (or the model's context) ("length").
        ``seeds`` (one per prompt) overrides the per-row seeds (the server batches requests with it).
        """
        torch = self.torch_module
        config = config or GenerationConfig()
        self.check_request(prompts, config)
        if not prompts:
            return []
        stops = self.stop_ids(config)
        if seeds is None:
            seeds = [None if config.seed is None else int(config.seed) + row for row in range(len(prompts))]
        elif len(seeds) != len(prompts):
            raise ValueError(f"seeds: {len(seeds)} values for {len(prompts)} prompts")
        generators = [self.generator(seed) for seed in seeds]

        batch = len(prompts)
        lengths = torch.tensor([len(p) for p in prompts], device=self.device)
        limits = [self.token_limit(p, config) for p in prompts]
        out_ids: list[list[int]] = [[] for _ in prompts]
        out_lps: list[list[float]] = [[] for _ in prompts]
        reasons: list[str | None] = [None] * batch
        single = batch == 1
        per_row = not single and self.rows_cacheable()  # each row reuses its own conversation's KV states
        with torch.inference_mode():
            reused, start = self.prefix_cache.take(prompts[0], self.version) if single else (None, 0)
            if per_row:
                ids, mask, positions, merged = self.batched_prompt(prompts)
                out = self.forward_prompt(ids, mask, positions, **({self.cache_arg: merged} if merged is not None else {}))
            elif reused is None:
                ids, mask, positions = left_pad(prompts, self.pad_id, self.device)
                out = self.forward_prompt(ids, mask, positions)
            else:  # encode only the tokens after the cached prefix
                ids = torch.tensor([prompts[0][start:]], device=self.device)
                mask = torch.ones((1, len(prompts[0])), dtype=torch.long, device=self.device)
                positions = torch.arange(start, len(prompts[0]), device=self.device)[None, :]
                out = self.forward_prompt(ids, mask, positions, **{self.cache_arg: reused})
            prompt_mask = mask
            cache = grow_in_place(kv_cache_of(out))  # decode steps append in place (policy/kv_growth.py)
            step = 0
            while True:
                logits = out.logits[:, -1, :].float()
                tokens, lps = sample_next(logits, config.temperature, config.top_p, generators, config.top_k)
                tok_list, lp_list = tokens.tolist(), lps.tolist()
                for row in range(batch):
                    if reasons[row] is not None:
                        continue
                    out_ids[row].append(tok_list[row])
                    out_lps[row].append(lp_list[row])
                    if tok_list[row] in stops:
                        reasons[row] = "stop"
                    elif len(out_ids[row]) >= limits[row]:
                        reasons[row] = "length"
                if all(r is not None for r in reasons):
                    break
                step += 1
                feed = torch.tensor(
                    [t if reasons[r] is None else self.pad_id for r, t in enumerate(tok_list)], device=self.device
                )[:, None]
                mask = torch.cat([mask, torch.ones((batch, 1), dtype=mask.dtype, device=self.device)], dim=1)
                positions = (lengths + step - 1)[:, None]
                out = self.model(
                    input_ids=feed, attention_mask=mask, position_ids=positions, use_cache=True, **{self.cache_arg: cache}
                )
                cache = kv_cache_of(out)
        if single:  # the cache now holds the prompt and every sampled token but the last
            self.prefix_cache.put(prompts[0] + out_ids[0][:-1], cache, self.version)
        elif per_row:
            self._put_rows(prompts, out_ids, prompt_mask, cache)
        return [self.to_generation(out_ids[r], out_lps[r], reasons[r] or "length") for r in range(batch)]

    # ------------------------------------------------------------------ request helpers
    def check_request(self, prompts: list[list[int]], config: GenerationConfig) -> None:
        """Raise ValueError for bad sampling settings, ids outside the vocabulary, or a prompt that
        leaves no room in the model's context."""
        validate_config(config)
        validate_ids(prompts, self.vocab_size, "prompts")
        if self.max_positions and prompts:
            longest = max(len(p) for p in prompts)
            if longest >= self.max_positions:
                raise ValueError(
                    f"prompts: a prompt of {longest} tokens leaves no room in the model's context of {self.max_positions}"
                )

    def stop_ids(self, config: GenerationConfig) -> set[int]:
        """Ids that end a row: the call's stop ids and the model's EOS ids."""
        return set(config.stop_token_ids) | self.eos_ids

    def token_limit(self, prompt: list[int], config: GenerationConfig) -> int:
        """New tokens a row may sample: the call's budget, cut to the model's context."""
        budget = config.max_new_tokens
        return budget if not self.max_positions else min(budget, self.max_positions - len(prompt))

    def generator(self, seed: int | None) -> Any:
        """A torch generator on the policy's device, seeded (or from OS entropy when ``seed`` is None)."""
        generator = self.torch_module.Generator(device=self.device)
        if seed is not None:
            generator.manual_seed(int(seed))
        else:
            generator.seed()
        return generator

    def store_row(self, ids: list[int], cache: Any, row: int, row_mask: Any) -> None:
        """Put row ``row`` of a batched ``cache`` (its real positions: ``row_mask`` != 0) into the
        prefix cache as the KV states of ``ids``."""
        keep = row_mask.nonzero().flatten()
        layers = [(layer.keys[row : row + 1].index_select(2, keep), layer.values[row : row + 1].index_select(2, keep))
                  for layer in cache.layers]
        self.prefix_cache.put(ids, self.cache_from(layers), self.version)

    # ------------------------------------------------------------------ batched prefix reuse
    def rows_cacheable(self) -> bool:
        """Batched calls reuse and store per-row KV states when the prefix cache is on and the
        model's cache is a plain per-layer key/value cache (transformers' ``DynamicCache``)."""
        if self.prefix_cache.max_tokens == 0:
            return False
        if self._row_caches is None:
            from transformers import DynamicCache

            kinds = set(getattr(self.model.config, "layer_types", None) or ["full_attention"])
            self._row_caches = kinds == {"full_attention"} and hasattr(DynamicCache(), "layers")
        return self._row_caches

    def batched_prompt(self, prompts: list[list[int]]) -> tuple[Any, Any, Any, Any]:
        """ids, attention mask, positions and merged KV cache of a batched call whose rows may each
        continue a cached conversation.

        Row ``r`` reuses the KV states of ``prompts[r][:s_r]`` (``s_r`` = 0 without an entry). The
        merged cache is the rows' states left-padded to the longest ``s``; the new tokens are
        left-padded after it, so a row reads ``[pad][cached s_r][pad][new tokens]``. The attention
        mask hides both pads and positions count real tokens only, so each row computes what it
        would alone (within kernel numerics)."""
        torch = self.torch_module
        taken = [self.prefix_cache.take(p, self.version) for p in prompts]
        width = max(s for _, s in taken)
        suffix = [p[s:] for p, (_, s) in zip(prompts, taken)]
        new = max(len(t) for t in suffix)
        batch = len(prompts)
        ids = torch.full((batch, new), self.pad_id, dtype=torch.long)
        mask = torch.zeros((batch, width + new), dtype=torch.long)
        for row, ((_, s), tail) in enumerate(zip(taken, suffix)):
            mask[row, width - s : width] = 1
            ids[row, new - len(tail) :] = torch.tensor(tail, dtype=torch.long)
            mask[row, width + new - len(tail) :] = 1
        positions = (mask.cumsum(dim=-1) - 1).clamp(min=0)[:, width:]
        merged = None
        if width:
            layers = None
            for row, (cache, s) in enumerate(taken):
                if cache is None:
                    continue
                kvs = [(layer.keys, layer.values) for layer in cache.layers]  # each [1, heads, s, dim]
                if layers is None:  # [batch, heads, width, dim] zeros per layer, for keys and values
                    layers = [tuple(t.new_zeros((batch, t.shape[1], width, t.shape[3])) for t in kv) for kv in kvs]
                for (k_all, v_all), (k, v) in zip(layers, kvs):
                    k_all[row, :, width - s :] = k[0]
                    v_all[row, :, width - s :] = v[0]
            merged = self.cache_from(layers)
        return ids.to(self.device), mask.to(self.device), positions.to(self.device), merged

    def empty_cache(self) -> Any:
        """An empty transformers ``DynamicCache`` laid out for this model."""
        from transformers import DynamicCache

        return DynamicCache(config=self.model.config)

    def cache_from(self, layers: list[tuple[Any, Any]]) -> Any:
        """A model KV cache holding ``layers`` (one (keys, values) pair per layer; the tensors
        themselves, not copies: they are never written to)."""
        cache = self.empty_cache()
        growing = growing_layer_class()
        try:  # hold the tensors as they are (no copy); the first update copies into a buffer with room
            return fill_cache(cache, [growing.holding(keys, values) for keys, values in layers])
        except ValueError:  # another layer kind: transformers' own update
            for index, (keys, values) in enumerate(layers):
                cache.update(keys, values, index)
            return cache

    def _put_rows(self, prompts: list[list[int]], out_ids: list[list[int]], prompt_mask: Any, cache: Any) -> None:
        """Store each row's KV states (its prompt and every sampled token but the last) for its next turn."""
        torch = self.torch_module
        for row, (prompt, out) in enumerate(zip(prompts, out_ids)):
            sampled = torch.ones(len(out) - 1, dtype=prompt_mask.dtype, device=prompt_mask.device)
            self.store_row(prompt + out[:-1], cache, row, torch.cat([prompt_mask[row], sampled]))

    def forward_prompt(self, ids: Any, mask: Any, positions: Any, **cache: Any) -> Any:
        """One cached forward pass over prompt ids (logits of the last position only when the model allows)."""
        try:
            return self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1, **cache)
        except TypeError:  # model without logits_to_keep
            return self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **cache)

    def to_generation(self, ids: list[int], lps: list[float], reason: str) -> Generation:
        """The :class:`Generation` of sampled ``ids`` (its text without the stop token)."""
        shown = ids[:-1] if reason == "stop" else ids
        text = self.tokenizer.decode(shown, skip_special_tokens=False)
        return Generation(token_ids=ids, logprobs=lps, text=text, finish_reason=reason)

    # --------------------------------------------------------------------- score
    def score(
        self,
        sequences: list[list[int]],
        starts: list[int] | None = None,
        *,
        temperature: float = 1.0,
        max_batch_tokens: int = 16384,
    ) -> list[list[float]]:
        """log_softmax(logits/T)[seq[t]] for t in [start, len) (start >= 1, default 1), no grad."""
        validate_ids(sequences, self.vocab_size, "sequences")
        starts = check_starts(sequences, starts)
        if temperature < 0:
            raise ValueError(f"temperature={temperature!r}: must be >= 0")
        with self.torch_module.inference_mode():
            rows = sequence_logprobs(
                self.model, sequences, starts, temperature=temperature, pad_id=self.pad_id, max_batch_tokens=max_batch_tokens
            )
        return [row.tolist() for row in rows]

    # ----------------------------------------------------------------- weights
    def sync_weights(self, state_dict: Mapping[str, Any] | Iterable[tuple[str, Any]], *, strict: bool = True) -> None:
        """Copy trainer weights into the model (cast to its device/dtype) and bump ``version``.

        Every key must name a parameter or buffer of the model. With ``strict`` (default) every
        parameter must be given, except tied weights (e.g. ``lm_head.weight`` tied to the embeddings).
        """
        torch = self.torch_module
        items = dict(state_dict.items() if isinstance(state_dict, Mapping) else state_dict)
        own = self.model.state_dict()
        unknown = sorted(set(items) - set(own))
        if unknown:
            raise KeyError(f"sync_weights: {len(unknown)} unknown key(s), e.g. {unknown[:3]}")
        if strict:  # tied parameters share storage: giving either name covers both
            given = {own[k].data_ptr() for k in items}
            missing = [k for k, p in self.model.named_parameters() if p.data_ptr() not in given]
            if missing:
                raise KeyError(f"sync_weights: {len(missing)} parameter(s) missing, e.g. {missing[:3]} (strict=False to allow)")
        with torch.no_grad():
            for key, value in items.items():
                target = own[key]
                if tuple(value.shape) != tuple(target.shape):
                    raise ValueError(f"sync_weights: {key} has shape {tuple(value.shape)}, model expects {tuple(target.shape)}")
                target.copy_(value.detach().to(device=target.device, dtype=target.dtype))
        self.version += 1
        self.prefix_cache.clear()


def check_starts(sequences: list[list[int]], starts: list[int] | None) -> list[int]:
    if starts is None:
        return [1] * len(sequences)
    if len(starts) != len(sequences):
        raise ValueError(f"starts: {len(starts)} values for {len(sequences)} sequences")
    for i, (seq, start) in enumerate(zip(sequences, starts)):
        if not isinstance(start, int) or not 1 <= start <= len(seq):
            raise ValueError(f"starts[{i}]={start!r}: must be an int in [1, {len(seq)}] (len of sequences[{i}])")
    return list(starts)
