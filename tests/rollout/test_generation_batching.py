"""BatchingPolicy: concurrent generate calls become batched calls with the same results."""

from __future__ import annotations

import time

import pytest

from swetrain.agent.loop import EpisodeLimits
from swetrain.env.demo import build_demo_task
from swetrain.policy.base import Generation, GenerationConfig
from swetrain.policy.wrappers import BatchingPolicy, LockedPolicy, supports_seeds
from swetrain.policy.wrappers.continuous import ContinuousBatchingPolicy
from swetrain.rollout.engine import ChainJobConfig, RolloutEngine
from swetrain.rollout.store import TrajectoryStore


class FakePolicy:
    """Echoes (seed, prompt) per row and records every call."""

    tokenizer = None
    version = 0
    max_context = None

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.calls: list[tuple[int, int | None, list[int | None] | None]] = []
        self.delay = delay
        self.fail = fail

    def generate(self, prompts, config, *, seeds=None):
        self.calls.append((len(prompts), config.max_new_tokens, None if seeds is None else list(seeds)))
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("model exploded")
        if seeds is None:
            seeds = [None if config.seed is None else config.seed + i for i in range(len(prompts))]
        return [Generation(token_ids=list(p), logprobs=[float(s or 0)] * len(p), text=f"{s}", finish_reason="stop")
                for p, s in zip(prompts, seeds)]

    def score(self, sequences, starts=None):
        return [[0.0] for _ in sequences]

    def sync_weights(self, state_dict):
        self.version += 1


def test_concurrent_calls_become_one_batch_with_their_own_seeds(run_threads):
    fake = FakePolicy()
    policy = BatchingPolicy(fake, max_batch=3, max_wait_s=5.0)  # full at 3 prompts: no waiting
    args = [([[i, i]], GenerationConfig(max_new_tokens=4, seed=100 * i)) for i in range(3)]
    results, errors = run_threads(policy.generate, args)
    assert errors == [None] * 3
    assert fake.calls and fake.calls[0][0] == 3 and len(fake.calls) == 1
    assert sorted(fake.calls[0][2]) == [0, 100, 200]
    for i, [gen] in enumerate(results):
        assert gen.token_ids == [i, i] and gen.text == str(100 * i)  # its own prompt and seed
    assert policy.stats == {"calls": 3, "batches": 1, "prompts": 3, "max_prompts": 3}


def test_calls_with_other_settings_are_not_mixed_and_a_lone_call_is_passed_through(run_threads):
    fake = FakePolicy(delay=0.05)
    policy = BatchingPolicy(fake, max_batch=4, max_wait_s=0.2)
    args = [([[1], [2]], GenerationConfig(max_new_tokens=4, seed=7)),  # two prompts: seeds 7, 8
            ([[3]], GenerationConfig(max_new_tokens=4, seed=None)),
            ([[4]], GenerationConfig(max_new_tokens=9, seed=1))]
    results, errors = run_threads(policy.generate, args)
    assert errors == [None] * 3
    assert [g.text for g in results[0]] == ["7", "8"] and results[1][0].text == "None" and results[2][0].text == "1"
    by_budget = {}
    for n, budget, seeds in fake.calls:
        by_budget.setdefault(budget, []).append((n, seeds))
    assert by_budget[9] == [(1, None)]  # alone: the unchanged call (no seeds=)
    assert sum(n for n, _ in by_budget[4]) == 3


def test_an_error_reaches_every_caller_of_the_batch(run_threads):
    policy = BatchingPolicy(FakePolicy(fail=True), max_batch=2, max_wait_s=5.0)
    _, errors = run_threads(policy.generate, [([[1]], GenerationConfig(seed=0)), ([[2]], GenerationConfig(seed=1))])
    assert all(isinstance(e, RuntimeError) and "model exploded" in str(e) for e in errors)


def test_score_and_sync_pass_through_and_bad_arguments():
    fake = FakePolicy()
    policy = BatchingPolicy(fake)
    assert policy.score([[1, 2]]) == [[0.0]]
    policy.sync_weights({})
    assert policy.version == 1 and policy.generate([], GenerationConfig()) == []
    with pytest.raises(ValueError, match="max_batch"):
        BatchingPolicy(fake, max_batch=0)

    class NoSeeds:
        tokenizer = None

        def generate(self, prompts, config):
            return []

    assert not supports_seeds(NoSeeds()) and supports_seeds(fake)
    with pytest.raises(TypeError, match="per-row seeds"):
        BatchingPolicy(NoSeeds())


@pytest.fixture(scope="module")
def hf_policy(tiny_path):
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(tiny_path, device="cpu", dtype="float32")


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_batched_hf_generations_equal_unbatched(hf_policy, tokenizer, temperature, run_threads):
    """HFPolicy rows do not depend on the batch (docs/policy.md): batched = one call per prompt."""
    texts = ["def add(a, b):", "Resolve the issue in calc/__init__.py, please.", "x", "import os\nprint(os.getcwd())"]
    prompts = [tokenizer(t)["input_ids"] for t in texts]
    configs = [GenerationConfig(max_new_tokens=12, temperature=temperature, seed=31 * i + 5) for i in range(len(prompts))]
    alone = [hf_policy.generate([p], c)[0] for p, c in zip(prompts, configs)]
    batching = BatchingPolicy(hf_policy, max_batch=len(prompts), max_wait_s=5.0)
    results, errors = run_threads(batching.generate, [([p], c) for p, c in zip(prompts, configs)])
    assert errors == [None] * len(prompts)
    assert batching.stats["batches"] == 1 and batching.stats["max_prompts"] == len(prompts)
    for one, [batched] in zip(alone, results):
        assert batched.token_ids == one.token_ids
        assert batched.finish_reason == one.finish_reason and batched.text == one.text
        assert batched.logprobs == pytest.approx(one.logprobs, abs=1e-4)


@pytest.mark.slow
def test_engine_records_are_the_same_with_and_without_batching(hf_policy, tmp_path):
    task = build_demo_task(tmp_path / "demo")
    stores = {}
    reports = {}
    for batch in (False, True):
        cfg = ChainJobConfig(group=3, attempts=1, limits=EpisodeLimits(max_turns=3, max_tokens_per_call=24,
                                                                     max_context_tokens=2048),
                            seed=11, verify_timeout_s=120, batch_generation=batch, batch_wait_ms=20)
        engine = RolloutEngine(hf_policy, backend="local", workers=3, config=cfg)
        # an HFPolicy is batched continuously (rows join and leave at every decode step)
        assert isinstance(engine._local_policy(), ContinuousBatchingPolicy if batch else LockedPolicy)
        reports[batch] = engine.run([task], tmp_path / f"run-{batch}")
        stores[batch] = sorted(TrajectoryStore(tmp_path / f"run-{batch}").read_all(), key=lambda t: (t.chain, t.attempt))
    assert reports[True].generation_batches["max_rows"] >= 2  # chains shared decode steps
    assert reports[False].generation_batches == {}
    assert len(stores[True]) == len(stores[False]) == 3
    for a, b in zip(stores[False], stores[True]):
        assert (a.chain, a.token_ids, a.assistant_mask, a.segment_ids, a.invalid, a.seed) == \
               (b.chain, b.token_ids, b.assistant_mask, b.segment_ids, b.invalid, b.seed)
        assert b.behavior_logprobs == pytest.approx(a.behavior_logprobs, abs=1e-4)
