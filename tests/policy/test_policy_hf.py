import pytest
import torch

from swetrain.policy.base import GenerationConfig, Policy
from swetrain.policy.hf import HFPolicy


def prompts_of(tok, chat_prompt):
    return [chat_prompt(tok, "hi"), chat_prompt(tok, "please fix the failing test " * 6), chat_prompt(tok, "x = 1\n" * 30)]


def test_is_a_policy(hf_policy):
    assert isinstance(hf_policy, Policy)
    assert hf_policy.version == 0 and hf_policy.model is not None


def test_window_is_the_models_max_positions(hf_policy, tiny_path, chat_prompt):
    assert hf_policy.max_context == hf_policy.model.config.max_position_embeddings == 8192
    from transformers import AutoModelForCausalLM

    small = HFPolicy(model=AutoModelForCausalLM.from_pretrained(tiny_path, max_position_embeddings=64),
                     tokenizer=hf_policy.tokenizer, device="cpu", dtype="float32")
    assert small.max_context == 64
    with pytest.raises(ValueError, match="leaves no room in the model's context of 64"):
        small.generate([chat_prompt(hf_policy.tokenizer, "x = 1\n" * 30)], GenerationConfig(max_new_tokens=4))


@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.7, 0.9), (0.0, 1.0)])
def test_score_reproduces_behaviour_logprobs_with_left_padding(hf_policy, temperature, top_p, chat_prompt):
    prompts = prompts_of(hf_policy.tokenizer, chat_prompt)
    assert len({len(p) for p in prompts}) == 3  # different lengths -> real left padding
    gens = hf_policy.generate(prompts, GenerationConfig(max_new_tokens=24, temperature=temperature, top_p=top_p, seed=3))
    seqs = [p + g.token_ids for p, g in zip(prompts, gens)]
    scored = hf_policy.score(seqs, [len(p) for p in prompts], temperature=temperature)
    for gen, row in zip(gens, scored):
        assert len(gen.token_ids) == len(gen.logprobs) == len(row) > 0
        assert all(lp <= 0 for lp in gen.logprobs)
        assert max(abs(a - b) for a, b in zip(gen.logprobs, row)) < 1e-4
    # batched == one prompt at a time (padding changes nothing)
    for i, prompt in enumerate(prompts):
        cfg = GenerationConfig(max_new_tokens=24, temperature=temperature, top_p=top_p, seed=3 + i)
        alone = hf_policy.generate([prompt], cfg)[0]
        assert alone.token_ids == gens[i].token_ids
        assert max(abs(a - b) for a, b in zip(alone.logprobs, gens[i].logprobs)) < 1e-4


def test_greedy_matches_argmax_of_full_forward(hf_policy, chat_prompt):
    prompt = chat_prompt(hf_policy.tokenizer, "def f():")
    gen = hf_policy.generate([prompt], GenerationConfig(max_new_tokens=8, temperature=0))[0]
    ids = list(prompt)
    with torch.no_grad():
        for tok in gen.token_ids:
            logits = hf_policy.model(torch.tensor([ids])).logits[0, -1]
            assert int(logits.argmax()) == tok
            ids.append(tok)


def test_seed_determinism(hf_policy, chat_prompt):
    prompts = prompts_of(hf_policy.tokenizer, chat_prompt)
    cfg = GenerationConfig(max_new_tokens=16, temperature=1.0, seed=11)
    a = hf_policy.generate(prompts, cfg)
    b = hf_policy.generate(prompts, cfg)
    c = hf_policy.generate(prompts, GenerationConfig(max_new_tokens=16, temperature=1.0, seed=12))
    assert [g.token_ids for g in a] == [g.token_ids for g in b]
    assert [g.token_ids for g in a] != [g.token_ids for g in c]


def test_stop_tokens_end_generation(hf_policy, chat_prompt):
    prompt = chat_prompt(hf_policy.tokenizer, "hello")
    free = hf_policy.generate([prompt], GenerationConfig(max_new_tokens=12, temperature=0))[0]
    assert free.finish_reason == "length" and len(free.token_ids) == 12
    stop = free.token_ids[4]
    first = free.token_ids.index(stop)
    gen = hf_policy.generate([prompt], GenerationConfig(max_new_tokens=12, temperature=0, stop_token_ids=[stop]))[0]
    assert gen.finish_reason == "stop"
    assert gen.token_ids == free.token_ids[: first + 1]  # the stop token is kept in the ids
    assert gen.text == hf_policy.tokenizer.decode(free.token_ids[:first], skip_special_tokens=False)


def test_eos_stops_generation(fresh_policy, chat_prompt):
    # point <|im_end|>'s (tied) output row at the prompt's final hidden state: greedy emits it at once
    eos = fresh_policy.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert eos in fresh_policy.eos_ids
    prompt = chat_prompt(fresh_policy.tokenizer, "hi")
    with torch.no_grad():
        hidden = fresh_policy.model.model(torch.tensor([prompt])).last_hidden_state[0, -1]
        fresh_policy.model.get_output_embeddings().weight[eos] = 50 * hidden / hidden.norm()
    gen = fresh_policy.generate([prompt], GenerationConfig(max_new_tokens=30, temperature=0))[0]
    assert gen.finish_reason == "stop" and gen.token_ids == [eos] and gen.text == ""


def test_rows_finish_independently(hf_policy, chat_prompt):
    prompts = prompts_of(hf_policy.tokenizer, chat_prompt)[:2]
    free = hf_policy.generate(prompts, GenerationConfig(max_new_tokens=20, temperature=1.0, seed=5))
    stop = next(t for t in free[0].token_ids if t not in free[1].token_ids)
    gens = hf_policy.generate(prompts, GenerationConfig(max_new_tokens=20, temperature=1.0, seed=5, stop_token_ids=[stop]))
    cut = free[0].token_ids.index(stop) + 1
    assert gens[0].finish_reason == "stop" and gens[0].token_ids == free[0].token_ids[:cut]
    assert gens[1].finish_reason == "length" and gens[1].token_ids == free[1].token_ids  # row 1 went on


def test_sync_weights_changes_outputs_and_bumps_version(fresh_policy, chat_prompt):
    prompts = prompts_of(fresh_policy.tokenizer, chat_prompt)
    seqs = [p + [5, 6, 7] for p in prompts]
    before = fresh_policy.score(seqs)
    gen_before = fresh_policy.generate(prompts, GenerationConfig(max_new_tokens=10, temperature=0))
    torch.manual_seed(0)
    new = {k: v + 0.05 * torch.randn_like(v) for k, v in fresh_policy.model.state_dict().items()}
    fresh_policy.sync_weights(new)
    assert fresh_policy.version == 1
    after = fresh_policy.score(seqs)
    assert max(abs(a - b) for r1, r2 in zip(before, after) for a, b in zip(r1, r2)) > 1e-3
    gen_after = fresh_policy.generate(prompts, GenerationConfig(max_new_tokens=10, temperature=0))
    assert [g.token_ids for g in gen_before] != [g.token_ids for g in gen_after]
    # the model really holds the new values
    name = "model.layers.0.mlp.up_proj.weight"
    assert torch.equal(fresh_policy.model.state_dict()[name], new[name])


def test_sync_weights_rejects_bad_state(fresh_policy):
    state = fresh_policy.model.state_dict()
    with pytest.raises(KeyError, match="unknown"):
        fresh_policy.sync_weights({"nope.weight": torch.zeros(1)})
    partial = {k: v for k, v in state.items() if "layers.0." not in k}
    with pytest.raises(KeyError, match="missing"):
        fresh_policy.sync_weights(partial)
    fresh_policy.sync_weights(partial, strict=False)
    bad = dict(state)
    bad["model.norm.weight"] = torch.zeros(3)
    with pytest.raises(ValueError, match="shape"):
        fresh_policy.sync_weights(bad)
    assert fresh_policy.version == 1


def test_score_defaults_and_bad_inputs(hf_policy, chat_prompt):
    seq = chat_prompt(hf_policy.tokenizer, "abc")
    full = hf_policy.score([seq])[0]
    assert len(full) == len(seq) - 1
    tail = hf_policy.score([seq], [len(seq) - 2])[0]
    assert tail == pytest.approx(full[-2:], abs=1e-5)
    with pytest.raises(ValueError, match="starts"):
        hf_policy.score([seq], [0])
    with pytest.raises(ValueError, match="token id"):
        hf_policy.score([[1, 10**7]])
    with pytest.raises(ValueError, match="non-empty"):
        hf_policy.generate([[]], GenerationConfig())
    with pytest.raises(ValueError, match="top_p"):
        hf_policy.generate([seq], GenerationConfig(top_p=0))
    with pytest.raises(ValueError, match="max_new_tokens"):
        hf_policy.generate([seq], GenerationConfig(max_new_tokens=0))


def test_missing_model_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        HFPolicy(tmp_path)
