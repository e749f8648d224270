"""The KV prefix cache of HFPolicy: multi-turn reuse gives the same tokens and log-probs as a full prefill."""

from __future__ import annotations

import pytest

from swetrain.policy.base import GenerationConfig
from swetrain.policy.hf import HFPolicy
from swetrain.policy.prefix_cache import PrefixCache, common_prefix_len
from swetrain.recipes.tiny.warmstart import SHIPPED_TINY


def test_common_prefix_len():
    assert common_prefix_len((1, 2, 3), (1, 2, 3, 4)) == 3
    assert common_prefix_len((1, 2, 3), (1, 9, 3)) == 1
    assert common_prefix_len((5,), (6,)) == 0
    assert common_prefix_len((), (1,)) == 0
    long = tuple(range(1000))
    assert common_prefix_len(long, long[:637] + (-1,) + long[638:]) == 637


def test_bad_sizes_are_named():
    with pytest.raises(ValueError, match="max_tokens"):
        PrefixCache(-1)
    with pytest.raises(ValueError, match="min_reuse"):
        PrefixCache(10, min_reuse=0)


@pytest.fixture(scope="module")
def policies():
    """The shipped tiny-sft (sharp distributions: greedy choices are not near ties), with and without the cache."""
    cached = HFPolicy(SHIPPED_TINY, device="cpu", dtype="float32")
    plain = HFPolicy(SHIPPED_TINY, device="cpu", dtype="float32", prefix_cache_tokens=0)
    return cached, plain


def _conversation(policy: HFPolicy, first: list[int], observations: list[list[int]], config: GenerationConfig):
    ids, gens = list(first), []
    for obs in observations:
        gen = policy.generate([ids], config)[0]
        gens.append(gen)
        ids += list(gen.token_ids) + obs
    return ids, gens


def test_multi_turn_reuse_matches_full_prefill(policies, chat_prompt):
    cached, plain = policies
    cached.prefix_cache.clear()
    hits0, reused0 = cached.prefix_cache.hits, cached.prefix_cache.reused_tokens
    tok = cached.tokenizer
    first = chat_prompt(tok, "Fix the failing test in calcium/parse.py: tokenize() drops the last number.")
    observations = [tok.encode("\n<|im_start|>user\n" + text + "<|im_end|>\n<|im_start|>assistant\n")
                    for text in ("[exit code: 1] FAILED tests/test_parse.py::test_tokens", "def tokenize(s):\n    return s.split()", "ok")]
    config = GenerationConfig(max_new_tokens=24, temperature=0.7, seed=11)
    ids_c, gens_c = _conversation(cached, first, observations, config)
    ids_p, gens_p = _conversation(plain, first, observations, config)
    assert ids_c == ids_p
    for a, b in zip(gens_c, gens_p):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    # every turn after the first continued the cached conversation
    assert cached.prefix_cache.hits - hits0 == len(observations) - 1
    assert cached.prefix_cache.reused_tokens - reused0 > len(first)
    assert plain.prefix_cache.stats()["hits"] == 0
    # the behaviour log-probs of a reused-prefix turn are those score() gives on the whole sequence
    last_prompt = ids_c[: len(ids_c) - len(observations[-1]) - len(gens_c[-1].token_ids)]
    rescored = cached.score([last_prompt + list(gens_c[-1].token_ids)], [len(last_prompt)], temperature=0.7)[0]
    assert rescored == pytest.approx(gens_c[-1].logprobs, abs=1e-4)


def test_shared_prefix_is_copied_not_taken(policies, chat_prompt):
    cached, _ = policies
    cached.prefix_cache.clear()
    hits0 = cached.prefix_cache.hits
    prompt = chat_prompt(cached.tokenizer, "Run the tests of statlite and fix what fails.")
    greedy = GenerationConfig(max_new_tokens=16, temperature=0.0)
    first = cached.generate([prompt], greedy)[0]
    assert len(cached.prefix_cache) == 1
    second = cached.generate([prompt], greedy)[0]  # the same prompt: a copy cropped to the prompt
    assert second.token_ids == first.token_ids
    assert second.logprobs == pytest.approx(first.logprobs, abs=1e-4)
    assert cached.prefix_cache.hits - hits0 == 1
    assert len(cached.prefix_cache) == 2  # the original entry was kept for its own conversation


def test_weight_update_invalidates(policies, chat_prompt):
    cached, _ = policies
    cached.prefix_cache.clear()
    prompt = chat_prompt(cached.tokenizer, "Fix kvstash.")
    greedy = GenerationConfig(max_new_tokens=8, temperature=0.0)
    gen = cached.generate([prompt], greedy)[0]
    cached.version += 1  # what the CPU trainer does after an in-place update
    try:
        assert cached.prefix_cache.take(prompt + list(gen.token_ids), cached.version) == (None, 0)
        assert len(cached.prefix_cache) == 0
    finally:
        cached.version -= 1


def test_eviction_keeps_the_budget(chat_prompt, tiny_path):
    policy = HFPolicy(tiny_path, device="cpu", dtype="float32", prefix_cache_tokens=200)
    greedy = GenerationConfig(max_new_tokens=4, temperature=0.0)
    for i in range(6):
        policy.generate([chat_prompt(policy.tokenizer, f"task number {i} " * 8)], greedy)
        assert policy.prefix_cache.tokens <= 200
    assert len(policy.prefix_cache) >= 1
    # batched calls neither read nor fill the store
    before = policy.prefix_cache.stats()
    policy.generate([chat_prompt(policy.tokenizer, "a"), chat_prompt(policy.tokenizer, "b")], greedy)
    assert policy.prefix_cache.stats() == before


def test_threads_sharing_a_prefix_get_the_uncached_results(policies, chat_prompt):
    """G attempts of one task in threads: each continues its own entry while others branch from it."""
    from concurrent.futures import ThreadPoolExecutor

    cached, plain = policies
    tok = cached.tokenizer
    first = chat_prompt(tok, "Fix the failing test in routekit: the query string loses its last pair.")
    obs = [tok.encode("\n<|im_start|>user\n" + t + "<|im_end|>\n<|im_start|>assistant\n") for t in ("[exit code: 1]", "ok")]

    def run(policy, seed):
        ids, gens = _conversation(policy, first, obs, GenerationConfig(max_new_tokens=16, temperature=1.0, seed=seed))
        return ids, [g.logprobs for g in gens]

    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda s: run(cached, s), range(8)))
    for seed, (ids, lps) in enumerate(threaded):
        ref_ids, ref_lps = run(plain, seed)
        assert ids == ref_ids
        for a, b in zip(lps, ref_lps):
            assert a == pytest.approx(b, abs=1e-4)


def test_batched_turns_reuse_each_rows_conversation(policies, chat_prompt):
    """Three conversations advanced together, one batched call per turn, with per-row seeds: each
    row reuses its own cached KV states (rows of different cached and new lengths, so pads sit both
    before the cache and between it and the new tokens) and samples what it samples alone without
    a cache; the third row joins on turn 2 with no cache of its own."""
    cached, plain = policies
    cached.prefix_cache.clear()
    tok = cached.tokenizer
    firsts = [chat_prompt(tok, text) for text in (
        "Fix the failing test in calcium/parse.py: tokenize() drops the last number.",
        "Run the tests of statlite.",
        "cartwise: Cart.weight divides by the quantity instead of multiplying; tests/test_cart.py fails.",
    )]
    obs = [[tok.encode(f"\n<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n") for text in turns] for turns in (
        ("[exit code: 1] FAILED tests/test_parse.py::test_tokens", "def tokenize(s):\n    return s.split()"),
        ("ok", "42 passed in 0.91s"),
        ("70:    def weight(self) -> int:", "[exit code: 0]"),
    )]
    config = GenerationConfig(max_new_tokens=20, temperature=0.7, seed=5)
    seeds = [[100, 200, 300], [101, 201, 301]]
    convs = [list(f) for f in firsts]
    alone = [list(f) for f in firsts]
    hits0 = cached.prefix_cache.hits
    for turn in range(2):
        rows = [0, 1] if turn == 0 else [0, 1, 2]  # the third conversation starts on turn 2
        batched = cached.generate([convs[r] for r in rows], config, seeds=[seeds[turn][r] for r in rows])
        for r, gen in zip(rows, batched):
            ref = plain.generate([alone[r]], config, seeds=[seeds[turn][r]])[0]
            assert gen.token_ids == ref.token_ids, (turn, r)
            assert gen.logprobs == pytest.approx(ref.logprobs, abs=1e-4)
            convs[r] += list(gen.token_ids) + obs[r][turn]
            alone[r] += list(ref.token_ids) + obs[r][turn]
    assert cached.prefix_cache.hits - hits0 == 2  # rows 0 and 1 continued their cached turn 1
    assert len(cached.prefix_cache) == 3  # every row's conversation is stored for its next turn
