"""ContinuousBatchingPolicy: rows join and leave one running batch; each row equals its unbatched call."""

from __future__ import annotations

import pytest

from swetrain.policy.base import GenerationConfig
from swetrain.policy.wrappers.continuous import ContinuousBatchingPolicy, supports_continuous


@pytest.fixture(scope="module")
def hf_policy(tiny_path):
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(tiny_path, device="cpu", dtype="float32")


def _prompts(tokenizer):
    texts = ["def add(a, b):", "Resolve the issue in calc/__init__.py, please.", "x",
             "import os\nprint(os.getcwd())", "class Stack:\n    def push(self, item):"]
    return [tokenizer(t)["input_ids"] for t in texts]


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_rows_that_join_at_different_steps_equal_their_unbatched_calls(hf_policy, tokenizer, temperature, run_threads):
    prompts = _prompts(tokenizer)
    configs = [GenerationConfig(max_new_tokens=6 + 5 * i, temperature=temperature, seed=31 * i + 5)
               for i in range(len(prompts))]
    # rows of one batch share their settings: give every call the same budget, except the last
    configs = [GenerationConfig(max_new_tokens=20, temperature=temperature, seed=c.seed) for c in configs[:-1]] + \
              [GenerationConfig(max_new_tokens=7, temperature=temperature, seed=configs[-1].seed)]
    hf_policy.prefix_cache.clear()
    alone = [hf_policy.generate([p], c)[0] for p, c in zip(prompts, configs)]
    hf_policy.prefix_cache.clear()
    policy = ContinuousBatchingPolicy(hf_policy, max_batch=3)
    results, errors = run_threads(policy.generate, [([p], c) for p, c in zip(prompts, configs)],
                                 [0.0, 0.0, 0.01, 0.03, 0.0])
    assert errors == [None] * len(prompts)
    for one, [batched] in zip(alone, results):
        assert batched.token_ids == one.token_ids
        assert batched.finish_reason == one.finish_reason and batched.text == one.text
        assert batched.logprobs == pytest.approx(one.logprobs, abs=1e-4)
    assert 2 <= policy.stats["max_rows"] <= 3  # rows shared steps, never more than max_batch
    assert policy.stats["joins"] == len(prompts) and policy.stats["calls"] == len(prompts)


def test_a_multi_prompt_call_keeps_its_seeds_and_the_next_turn_reuses_the_cache(hf_policy, tokenizer):
    prompts = [p * 4 for p in _prompts(tokenizer)[:3]]  # longer than the prefix cache's minimum
    config = GenerationConfig(max_new_tokens=10, temperature=1.0, seed=7)
    hf_policy.prefix_cache.clear()
    alone = [hf_policy.generate([p], GenerationConfig(max_new_tokens=10, temperature=1.0, seed=7 + i))[0]
             for i, p in enumerate(prompts)]
    hf_policy.prefix_cache.clear()
    follow_config = GenerationConfig(max_new_tokens=5, seed=3)
    follow = prompts[0] + alone[0].token_ids + tokenizer(" ok")["input_ids"]
    fresh = hf_policy.generate([follow], follow_config)[0]  # nothing cached: the whole prompt encoded
    hf_policy.prefix_cache.clear()
    policy = ContinuousBatchingPolicy(hf_policy, max_batch=8)
    batched = policy.generate(prompts, config)
    assert [g.token_ids for g in batched] == [g.token_ids for g in alone]
    # each ended row was stored: the next turn of the first conversation encodes only its new tokens
    hits, reused = hf_policy.prefix_cache.hits, hf_policy.prefix_cache.reused_tokens
    again = policy.generate([follow], follow_config)[0]
    assert hf_policy.prefix_cache.hits == hits + 1
    assert hf_policy.prefix_cache.reused_tokens - reused == len(prompts[0]) + len(batched[0].token_ids) - 1
    assert again.token_ids == fresh.token_ids
    assert again.logprobs == pytest.approx(fresh.logprobs, abs=1e-4)


def test_score_and_sync_run_alone_and_errors_reach_every_row(hf_policy, tokenizer, run_threads):
    policy = ContinuousBatchingPolicy(hf_policy, max_batch=4)
    seq = tokenizer("def f(x): return x")["input_ids"]
    assert policy.score([seq])[0] == pytest.approx(hf_policy.score([seq])[0], abs=1e-5)
    assert policy.generate([], GenerationConfig()) == []
    with pytest.raises(ValueError, match="vocabulary|prompts"):
        policy.generate([[hf_policy.vocab_size + 5]], GenerationConfig())
    version = hf_policy.version
    policy.sync_weights(hf_policy.model.state_dict())
    assert policy.version == version + 1
    with pytest.raises(ValueError, match="max_batch"):
        ContinuousBatchingPolicy(hf_policy, max_batch=0)
    assert supports_continuous(hf_policy) and not supports_continuous(object())

    original = hf_policy.model.forward

    def broken(*args, **kwargs):
        raise RuntimeError("model exploded")

    hf_policy.model.forward = broken
    try:
        _, errors = run_threads(policy.generate, [([seq], GenerationConfig(seed=0)), ([seq[:3]], GenerationConfig(seed=1))],
                               [0.0, 0.0])
    finally:
        hf_policy.model.forward = original
    assert all(isinstance(e, RuntimeError) and "model exploded" in str(e) for e in errors)
    # the batch was cleared: the policy works again
    assert policy.generate([seq], GenerationConfig(max_new_tokens=3, seed=0))[0].token_ids
