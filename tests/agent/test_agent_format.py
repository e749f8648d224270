"""Token-exact chat format: prompt + generated ids + observation deltas == the template's rendering."""

from __future__ import annotations

import json

import pytest

from swetrain.agent.format import BUILTIN_TEMPLATE, ChatFormat

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    }
]
CALL = '<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls"}}\n</tool_call>'


@pytest.fixture(params=["own-template", "builtin-template"])
def fmt(request, tiny_tokenizer, plain_tokenizer):
    tok = tiny_tokenizer if request.param == "own-template" else plain_tokenizer
    f = ChatFormat(tok, tools=TOOLS)
    assert f.uses_builtin_template == (request.param == "builtin-template")
    return f


def test_prompt_lists_tools_and_ends_with_generation_prompt(fmt):
    ids = fmt.prompt_ids(fmt.initial_messages("fix the bug"))
    text = fmt.tokenizer.decode(ids, skip_special_tokens=False)
    assert "execute_bash" in text and "fix the bug" in text
    assert text.endswith("<|im_start|>assistant\n")
    assert fmt.eot_text == "<|im_end|>"
    assert fmt.stop_token_ids[0] == fmt.eot_id


def test_incremental_ids_equal_full_render(fmt):
    """Canonically tokenised turns: our bookkeeping reproduces the template's own token sequence."""
    msgs = fmt.initial_messages("fix the bug")
    ids = fmt.prompt_ids(msgs)
    for k, obs in enumerate(["a.py\nb.py", "line1\nline2 <weird> {json}"]):
        gen = fmt.encode(CALL) + [fmt.eot_id]
        text, ended = fmt.decode_generated(gen)
        assert ended and text == CALL
        ids += gen
        ids += fmt.observation_ids([{"role": "tool", "content": obs}], ended_with_eot=True)
        msgs += [{"role": "assistant", "content": CALL}, {"role": "tool", "content": obs}]
        assert ids == fmt.encode(fmt.render(msgs, add_generation_prompt=True)), f"turn {k}"


def test_several_tool_results_and_user_error_turns(fmt):
    msgs = fmt.initial_messages("x")
    ids = fmt.prompt_ids(msgs) + fmt.encode(CALL) + [fmt.eot_id]
    obs = [{"role": "tool", "content": "one"}, {"role": "tool", "content": "two"}]
    ids += fmt.observation_ids(obs, ended_with_eot=True)
    msgs += [{"role": "assistant", "content": CALL}, *obs]
    assert ids == fmt.encode(fmt.render(msgs, add_generation_prompt=True))
    ids += fmt.encode("no call") + [fmt.eot_id]
    user = [{"role": "user", "content": "Please call a tool."}]
    ids += fmt.observation_ids(user, ended_with_eot=True)
    msgs += [{"role": "assistant", "content": "no call"}, *user]
    assert ids == fmt.encode(fmt.render(msgs, add_generation_prompt=True))


def test_cut_by_length_closes_turn_outside_generated_ids(fmt):
    msgs = fmt.initial_messages("x")
    partial = fmt.encode('<tool_call>\n{"name": "execute')  # no end-of-turn: cut by length
    _, ended = fmt.decode_generated(partial)
    assert not ended
    obs_ids = fmt.observation_ids([{"role": "tool", "content": "err"}], ended_with_eot=False)
    assert obs_ids[0] == fmt.eot_id  # the end of turn is added by us, after the generated ids
    ids = fmt.prompt_ids(msgs) + partial + obs_ids
    msgs += [{"role": "assistant", "content": '<tool_call>\n{"name": "execute'}, {"role": "tool", "content": "err"}]
    assert ids == fmt.encode(fmt.render(msgs, add_generation_prompt=True))


def test_builtin_template_renders_tools_as_json(plain_tokenizer):
    f = ChatFormat(plain_tokenizer, tools=TOOLS)
    text = f.render(f.initial_messages("hi"), add_generation_prompt=False)
    assert json.dumps(TOOLS[0]) in text and f.chat_template == BUILTIN_TEMPLATE


def test_tokenizer_without_end_of_turn_is_rejected(plain_tokenizer):
    import copy

    from swetrain.agent.format import ChatFormatError

    tok = copy.deepcopy(plain_tokenizer)
    template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    tok.eos_token = None
    with pytest.raises(ChatFormatError):
        ChatFormat(tok, tools=TOOLS, chat_template=template)


def test_template_that_ignores_tools_gets_them_in_the_system_prompt(tiny_tokenizer):
    """A real template (SmolLM2's) accepts tools= and drops it: the agent must still list them."""
    from swetrain.agent.format import ChatFormat
    from swetrain.env.tools import TOOL_SPECS

    no_tools = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    fmt = ChatFormat(tiny_tokenizer, chat_template=no_tools)
    assert fmt.tools_in_system_prompt
    text = fmt.render(fmt.initial_messages("fix it"), add_generation_prompt=True)
    for spec in TOOL_SPECS:
        assert spec["function"]["name"] in text
    assert "<tool_call>" in text
    # a template that does render tools is left alone (no duplicate listing)
    own = ChatFormat(tiny_tokenizer)
    assert not own.tools_in_system_prompt
    rendered = own.render(own.initial_messages("fix it"), add_generation_prompt=True)
    assert rendered.count('"name": "file_editor"') == 1
