"""The tool-call parser flags every kind of bad message and accepts good ones."""

from __future__ import annotations

import json

import pytest

from swetrain.agent.parse import parse_message

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "run a command",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout": {"type": "integer", "minimum": 1}},
                "required": ["command"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "finish", "description": "done", "parameters": {"type": "object", "properties": {}}}},
]


def call(name, args):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def test_valid_call_with_thinking():
    msg = parse_message("<think>look at ops.py</think>\nLet me look.\n" + call("execute_bash", {"command": "ls"}), TOOLS)
    assert not msg.invalid
    assert msg.thinking == "look at ops.py"
    assert msg.content == "Let me look."
    assert [(c.name, c.arguments) for c in msg.tool_calls] == [("execute_bash", {"command": "ls"})]


def test_two_calls_and_string_arguments():
    text = call("execute_bash", {"command": "ls"}) + '<tool_call>{"name": "finish", "arguments": "{}"}</tool_call>'
    msg = parse_message(text, TOOLS)
    assert not msg.invalid and [c.name for c in msg.tool_calls] == ["execute_bash", "finish"]


@pytest.mark.parametrize(
    "text, code",
    [
        ('<tool_call>{"name": "execute_bash", "arguments": {</tool_call>', "malformed_json"),
        ("<tool_call>[1, 2]</tool_call>", "malformed_json"),
        (call("rm_rf", {}), "unknown_tool"),
        (call("execute_bash", {}), "bad_arguments"),
        (call("execute_bash", {"command": 3}), "bad_arguments"),
        (call("execute_bash", {"command": "ls", "extra": 1}), "bad_arguments"),
        (call("execute_bash", {"command": "ls", "timeout": 0}), "bad_arguments"),
        ("I think the bug is in add.", "no_tool_call"),
        ("<think>unclosed " + call("finish", {}), "malformed_thinking"),
        ("<think>a<think>b</think></think>" + call("finish", {}), "malformed_thinking"),
        ("<think>a</think><think>b</think>" + call("finish", {}), "malformed_thinking"),
        ("done</think>" + call("finish", {}), "malformed_thinking"),
        (call("finish", {}) + "<think>after</think>", "malformed_thinking"),
        ('<tool_call>{"name": "finish", "arguments": {}}', "malformed_tool_call"),
        ("</tool_call>" + call("finish", {}), "malformed_tool_call"),
    ],
)
def test_flags(text, code):
    msg = parse_message(text, TOOLS)
    assert msg.invalid
    assert code in msg.error_codes, msg.errors
    assert msg.tool_calls == []  # an invalid message runs no tool
    obs = msg.error_observation()
    assert code in obs and "not executed" in obs


def test_deeply_nested_json_is_malformed_not_a_crash():
    # json.loads raises RecursionError (not JSONDecodeError) on thousands of nested brackets
    for text in ("<tool_call>" + "[" * 100_000 + "</tool_call>",
                 '<tool_call>{"name": "finish", "arguments": "' + "[" * 100_000 + '"}</tool_call>'):
        msg = parse_message(text, TOOLS)
        assert msg.error_codes == ["malformed_json"] and msg.tool_calls == []


def test_tool_call_inside_thinking_is_not_executed():
    msg = parse_message("<think>maybe " + call("finish", {}) + "</think>", TOOLS)
    assert msg.error_codes == ["no_tool_call"]


def test_error_names_the_argument():
    msg = parse_message(call("execute_bash", {"command": 3}), TOOLS)
    assert "command" in str(msg.errors[0]) and "execute_bash" in str(msg.errors[0])


def test_real_tool_specs():
    from swetrain.env.tools import TOOL_SPECS

    ok = parse_message(call("execute_bash", {"cmd": "ls"}) , TOOL_SPECS)
    assert not ok.invalid
    assert parse_message(call("finish", {"command": "submit"})).tool_calls[0].name == "finish"
    bad = parse_message(call("file_editor", {"command": "delete", "path": "x"}))
    assert bad.error_codes == ["bad_arguments"] and "command" in str(bad.errors[0])
