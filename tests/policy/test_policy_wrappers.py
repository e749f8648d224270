"""The thread-safe policy wrappers: one interface, and ``wrap_for_workers`` picks the right one."""

from __future__ import annotations

import logging

import pytest

from swetrain.agent.scripted import TurnScript, make_scripted
from swetrain.policy.base import GenerationConfig
from swetrain.policy.wrappers import (
    BatchingPolicy,
    LockedPolicy,
    PolicyWrapper,
    batch_stats,
    supports_seeds,
    wrap_for_workers,
)
from swetrain.policy.wrappers.continuous import ContinuousBatchingPolicy


@pytest.fixture(scope="module")
def scripted(tiny_path):
    """A real policy whose ``generate`` takes no per-row seeds."""
    return make_scripted(TurnScript([]), str(tiny_path))


@pytest.fixture(scope="module")
def uncached_hf(tiny_path):
    """An HFPolicy without prefix cache: per-row seeds, but no continuous batching."""
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(tiny_path, device="cpu", dtype="float32", prefix_cache_tokens=0)


def test_one_worker_or_a_thread_safe_policy_is_not_wrapped(hf_policy, scripted):
    assert wrap_for_workers(hf_policy, 1, batch_generation=True) is hf_policy
    locked = LockedPolicy(scripted)
    assert wrap_for_workers(locked, 4) is locked  # a wrapper is thread-safe: never wrapped twice
    assert batch_stats(hf_policy) == {}


def test_factory_picks_the_wrapper_by_what_the_policy_supports(hf_policy, uncached_hf, scripted, caplog):
    continuous = wrap_for_workers(hf_policy, 3, batch_generation=True)
    assert type(continuous) is ContinuousBatchingPolicy and continuous.max_batch == 3
    batched = wrap_for_workers(uncached_hf, 3, batch_generation=True, batch_wait_s=0.02)
    assert type(batched) is BatchingPolicy and (batched.max_batch, batched.max_wait_s) == (3, 0.02)
    assert type(wrap_for_workers(hf_policy, 3)) is LockedPolicy  # batching off: one call at a time
    assert not supports_seeds(scripted)
    with caplog.at_level(logging.WARNING, logger="swetrain.policy.wrappers"):
        fallback = wrap_for_workers(scripted, 3, batch_generation=True)
    assert type(fallback) is LockedPolicy and "per-row seeds" in caplog.text


def test_every_wrapper_has_the_one_interface(hf_policy, uncached_hf, scripted):
    wrappers = {"locked": LockedPolicy(scripted), "batched": BatchingPolicy(uncached_hf),
                "continuous": ContinuousBatchingPolicy(hf_policy)}
    for mode, wrapper in wrappers.items():
        assert isinstance(wrapper, PolicyWrapper) and wrapper.thread_safe and wrapper.mode == mode
        inner = wrapper.policy
        assert wrapper.tokenizer is inner.tokenizer
        assert (wrapper.version, wrapper.max_context) == (inner.version, inner.max_context)
        assert wrapper.batch_stats() == {} == batch_stats(wrapper)  # nothing ran yet


def test_batch_stats_report_prompts_per_model_call(hf_policy, uncached_hf, chat_prompt):
    prompt = chat_prompt(hf_policy.tokenizer, "hello")
    config = GenerationConfig(max_new_tokens=4, temperature=0.0, seed=3)
    batched = BatchingPolicy(uncached_hf, max_batch=2)
    batched.generate([prompt, prompt], config)
    assert batch_stats(batched) == {"calls": 1, "batches": 1, "prompts": 2, "max_prompts": 2, "prompts_per_call": 2.0}
    continuous = ContinuousBatchingPolicy(hf_policy, max_batch=2)
    continuous.generate([prompt, prompt], config)
    stats = batch_stats(continuous)
    assert stats["steps"] >= 1 and stats["max_rows"] == 2
    assert stats["prompts_per_call"] == stats["row_tokens"] / stats["steps"]
