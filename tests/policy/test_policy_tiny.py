import json

import pytest
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer

from swetrain.policy import tiny
from swetrain.policy.chat_format import IM_END, MARKUP_TOKENS, SPECIAL_TOKENS


def test_build_writes_a_standard_checkpoint(tiny_path):
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", tiny.INFO_FILE):
        assert (tiny_path / name).is_file(), name
    info = json.loads((tiny_path / tiny.INFO_FILE).read_text())
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    n_params = sum(p.numel() for p in model.parameters())
    assert info["parameters"] == n_params
    assert 1_000_000 < n_params < 10_000_000
    assert model.config.max_position_embeddings >= 4096
    assert model.config.tie_word_embeddings
    assert model.get_output_embeddings().weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    tok = AutoTokenizer.from_pretrained(tiny_path)
    assert 4000 <= len(tok) <= model.config.vocab_size <= 8192
    assert tok.eos_token == IM_END and tok.pad_token == "<|endoftext|>"


def test_special_and_markup_tokens_are_single_ids(tiny_path):
    tok = AutoTokenizer.from_pretrained(tiny_path)
    for token in SPECIAL_TOKENS + MARKUP_TOKENS:
        ids = tok.encode(token, add_special_tokens=False)
        assert len(ids) == 1, token
    ids = tok.encode("<tool_call>\n{}\n</tool_call><|im_end|>", add_special_tokens=False)
    # control tokens vanish with skip_special_tokens, tool-call markup stays (as in Qwen tokenizers)
    assert tok.decode(ids, skip_special_tokens=True) == "<tool_call>\n{}\n</tool_call>"


def test_every_loader_gives_the_same_ids(tiny_path):
    raw = Tokenizer.from_file(str(tiny_path / "tokenizer.json"))
    auto = AutoTokenizer.from_pretrained(tiny_path)
    texts = list(tiny.stdlib_python_files(200_000))[:20] + ["héllo wörld 12345 \u00a0 Ω <think>ok</think>"]
    for text in texts:
        assert raw.encode(text).ids == auto.encode(text, add_special_tokens=False)
    sample = texts[0][:2000]
    assert auto.decode(auto.encode(sample, add_special_tokens=False)) == sample


def test_chat_template_renders_tools_and_tool_messages(tiny_path):
    tok = AutoTokenizer.from_pretrained(tiny_path)
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}]
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": "Looking.", "tool_calls": [{"type": "function", "function": {"name": "bash", "arguments": {"command": "ls"}}}]},
        {"role": "tool", "content": "a.py"},
        {"role": "tool", "content": "b.py"},
    ]
    text = tok.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nBe brief.\n\n# Tools\n")
    assert '{"type": "function", "function": {"name": "bash"' in text
    assert 'Looking.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call><|im_end|>\n' in text
    assert "<|im_start|>user\n<tool_response>\na.py\n</tool_response>\n<tool_response>\nb.py\n</tool_response><|im_end|>\n" in text
    assert text.endswith("<|im_start|>assistant\n")
    plain = tok.apply_chat_template(messages[1:2], tokenize=False, add_generation_prompt=False)
    assert plain == "<|im_start|>user\nFix it.<|im_end|>\n"


def test_build_refuses_non_empty_dir_and_bad_preset(tmp_path):
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(FileExistsError, match="not empty"):
        tiny.build_tiny(tmp_path)
    with pytest.raises(ValueError, match="preset='huge'"):
        tiny.build_tiny(tmp_path / "new", preset="huge")
    assert (tmp_path / "x").read_text() == "keep me"


def test_ensure_tiny_builds_once_and_reuses(tmp_path, monkeypatch):
    monkeypatch.setenv("SWETRAIN_HOME", str(tmp_path))
    calls = []
    real = tiny.build_tiny

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(tiny, "build_tiny", counting)
    first = tiny.ensure_tiny()
    assert first == tiny.default_tiny_path() and str(first).startswith(str(tmp_path))
    assert tiny.ensure_tiny() == first
    assert len(calls) == 1
