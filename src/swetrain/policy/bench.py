"""Throughput of a policy on this machine: generated tokens/s and scored tokens/s.

Baseline in the same run: transformers' own ``model.generate`` (greedy, KV cache) on the same
prompts, so the cost of our exact-log-prob sampling loop is visible.
"""

from __future__ import annotations

import time
from typing import Any


def measure(spec: str, *, batch: int = 4, new_tokens: int = 64, prompt_words: int = 40) -> dict[str, Any]:
    import torch

    from swetrain.policy.base import GenerationConfig
    from swetrain.policy.load import load_policy

    policy = load_policy(spec, device="cpu", dtype="float32")
    tok = policy.tokenizer
    prompts = []
    for i in range(batch):
        text = f"Task {i}: " + "explain the failing test and fix the bug " * (prompt_words // 8 + i)
        rendered = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True)
        prompts.append(list(rendered["input_ids"] if hasattr(rendered, "keys") else rendered))
    # no stop tokens: every row generates exactly new_tokens
    never = GenerationConfig(max_new_tokens=new_tokens, temperature=1.0, seed=0)
    policy.eos_ids, saved = set(), policy.eos_ids
    policy.generate(prompts[:1], GenerationConfig(max_new_tokens=4, seed=0))  # warm-up
    t0 = time.perf_counter()
    gens = policy.generate(prompts, never)
    gen_s = time.perf_counter() - t0
    policy.eos_ids = saved
    n_gen = sum(len(g.token_ids) for g in gens)

    ids, mask, _ = _left(prompts, policy.pad_id)
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = policy.model.generate(
            input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
            do_sample=False, pad_token_id=policy.pad_id,
        )
    base_s = time.perf_counter() - t0
    n_base = int((out.shape[1] - ids.shape[1]) * out.shape[0])

    seqs = [p + g.token_ids for p, g in zip(prompts, gens)]
    t0 = time.perf_counter()
    policy.score(seqs, [1] * len(seqs))
    score_s = time.perf_counter() - t0
    n_scored = sum(len(s) - 1 for s in seqs)
    n_params = sum(p.numel() for p in policy.model.parameters())
    return {
        "model": spec,
        "parameters": n_params,
        "torch_threads": torch.get_num_threads(),
        "batch": batch,
        "prompt_tokens_mean": sum(map(len, prompts)) / len(prompts),
        "generate_tokens_per_s": n_gen / gen_s,
        "hf_generate_greedy_tokens_per_s": n_base / base_s,
        "score_tokens_per_s": n_scored / score_s,
    }


def _left(prompts: list[list[int]], pad: int):
    from swetrain.policy.hf import left_pad

    return left_pad(prompts, pad, "cpu")


def render(f: dict[str, Any]) -> str:
    rows = [
        ("model", f["model"]),
        ("parameters", f"{f['parameters']:,}"),
        ("torch threads", f["torch_threads"]),
        ("batch x prompt tokens", f"{f['batch']} x {f['prompt_tokens_mean']:.0f}"),
        ("generate (ours, sampled, exact logprobs)", f"{f['generate_tokens_per_s']:.0f} tok/s"),
        ("baseline: transformers model.generate (greedy)", f"{f['hf_generate_greedy_tokens_per_s']:.0f} tok/s"),
        ("score (teacher-forced log-probs)", f"{f['score_tokens_per_s']:.0f} tok/s"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
