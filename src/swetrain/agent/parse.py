"""Parse one assistant message: optional ``<think>...</think>`` and Hermes-style tool calls.

A message is *invalid* (FC-SWE's runtime penalty applies to it: the trainer overrides its tokens'
advantage with -5) when any of these holds; each problem is recorded with a short code:

* ``malformed_thinking``: an unclosed ``<think>``, a stray ``</think>``, nested or repeated think
  blocks, or a think block after a tool call;
* ``malformed_tool_call``: an unclosed ``<tool_call>`` or a stray ``</tool_call>``;
* ``malformed_json``: the body of a tool call is not a JSON object with ``name`` and ``arguments``;
* ``unknown_tool``: the name is not one of the tool schemas;
* ``bad_arguments``: the arguments do not validate against the tool's JSON schema;
* ``no_tool_call``: the message calls no tool at all.

An invalid message runs no tool: the agent answers it with an error observation and goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
_TAG = re.compile(r"</?think>|</?tool_call>")

ERROR_CODES = (
    "malformed_thinking",
    "malformed_tool_call",
    "malformed_json",
    "unknown_tool",
    "bad_arguments",
    "no_tool_call",
)


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class ParseError:
    code: str  # one of ERROR_CODES
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass
class ParsedMessage:
    """What an assistant message says: thinking, free text, tool calls and problems found."""

    text: str
    thinking: str | None = None
    content: str = ""  # text outside think and tool-call blocks
    tool_calls: list[ToolCall] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)

    @property
    def invalid(self) -> bool:
        return bool(self.errors)

    @property
    def error_codes(self) -> list[str]:
        return [e.code for e in self.errors]

    def error_observation(self) -> str:
        """The observation sent back for an invalid message (no tool was run)."""
        lines = ["Your last message was not executed:"]
        lines += [f"- {e}" for e in self.errors]
        lines.append(
            'Call exactly the tools listed in the system prompt as <tool_call>{"name": "<tool>", '
            '"arguments": {...}}</tool_call>, with arguments matching their schema.'
        )
        return "\n".join(lines)


@lru_cache(maxsize=8)
def _validators(tools_json: str) -> dict[str, Any]:
    from jsonschema import Draft202012Validator

    out: dict[str, Any] = {}
    for spec in json.loads(tools_json):
        fn = spec.get("function", spec)
        schema = fn.get("parameters") or {"type": "object"}
        Draft202012Validator.check_schema(schema)
        out[fn["name"]] = Draft202012Validator(schema)
    return out


def _tool_validators(tools: Sequence[dict]) -> dict[str, Any]:
    return _validators(json.dumps(list(tools), sort_keys=True))


def _scan_blocks(text: str, errors: list[ParseError]) -> tuple[list[str], list[tuple[str, str]], str]:
    """Split text into think bodies, tool-call bodies and the rest; record tag structure errors.

    Returns (think bodies, [(kind, body)] in order, outside text).
    """
    thinks: list[str] = []
    blocks: list[tuple[str, str]] = []
    outside: list[str] = []
    pos = 0
    open_tag: str | None = None
    open_at = 0
    for m in _TAG.finditer(text):
        tag = m.group(0)
        if open_tag is None:
            if tag.startswith("</"):
                code = "malformed_thinking" if "think" in tag else "malformed_tool_call"
                errors.append(ParseError(code, f"stray {tag} without a matching opening tag"))
                outside.append(text[pos : m.start()])
                pos = m.end()
                continue
            outside.append(text[pos : m.start()])
            open_tag, open_at, pos = tag, m.end(), m.end()
            continue
        closing = "</" + open_tag[1:]
        if tag == closing:
            body = text[open_at : m.start()]
            kind = "think" if open_tag == THINK_OPEN else "call"
            blocks.append((kind, body))
            if kind == "think":
                thinks.append(body)
            open_tag, pos = None, m.end()
        elif tag == open_tag:
            code = "malformed_thinking" if open_tag == THINK_OPEN else "malformed_tool_call"
            errors.append(ParseError(code, f"nested {tag} inside an open {open_tag}"))
        elif open_tag == CALL_OPEN and "think" in tag:
            errors.append(ParseError("malformed_thinking", f"{tag} inside a <tool_call> block"))
        elif open_tag == THINK_OPEN and "tool_call" in tag:
            # a tool call written inside the thinking is part of the thinking, never executed
            continue
        else:
            code = "malformed_thinking" if open_tag == THINK_OPEN else "malformed_tool_call"
            errors.append(ParseError(code, f"{tag} while {open_tag} is still open"))
    if open_tag is not None:
        code = "malformed_thinking" if open_tag == THINK_OPEN else "malformed_tool_call"
        errors.append(ParseError(code, f"unclosed {open_tag}"))
        outside.append(text[pos : open_at - len(open_tag)])
    else:
        outside.append(text[pos:])
    return thinks, blocks, "".join(outside)


def _parse_call(body: str, validators: dict[str, Any], errors: list[ParseError]) -> ToolCall | None:
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        errors.append(ParseError("malformed_json", f"tool call is not valid JSON ({exc.msg} at char {exc.pos})"))
        return None
    except RecursionError:  # e.g. thousands of "[" from an untrained model
        errors.append(ParseError("malformed_json", "tool call JSON is nested too deeply"))
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        errors.append(ParseError("malformed_json", 'tool call must be a JSON object with a string "name"'))
        return None
    name = obj["name"]
    args = obj.get("arguments", {})
    if isinstance(args, str):  # some models emit the arguments as a JSON-encoded string
        try:
            args = json.loads(args) if args.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            errors.append(ParseError("malformed_json", f"arguments of {name!r} are a string that is not JSON"))
            return None
    if not isinstance(args, dict):
        errors.append(ParseError("malformed_json", f'"arguments" of {name!r} must be a JSON object'))
        return None
    extra = set(obj) - {"name", "arguments"}
    if extra:
        errors.append(ParseError("malformed_json", f"unexpected keys in tool call: {sorted(extra)}"))
        return None
    validator = validators.get(name)
    if validator is None:
        errors.append(ParseError("unknown_tool", f"no tool named {name!r} (tools: {', '.join(sorted(validators))})"))
        return None
    problems = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.path) or "arguments"
        errors.append(ParseError("bad_arguments", f"{name}: {where}: {first.message}"))
        return None
    return ToolCall(name=name, arguments=args)


def parse_message(text: str, tools: Sequence[dict] | None = None) -> ParsedMessage:
    """Parse an assistant message against the tool schemas (``TOOL_SPECS`` by default)."""
    if tools is None:
        from swetrain.env.tools import TOOL_SPECS

        tools = TOOL_SPECS
    validators = _tool_validators(tools)
    errors: list[ParseError] = []
    thinks, blocks, outside = _scan_blocks(text, errors)
    if len(thinks) > 1:
        errors.append(ParseError("malformed_thinking", f"{len(thinks)} <think> blocks; at most one is allowed"))
    kinds = [k for k, _ in blocks]
    if "think" in kinds and "call" in kinds and kinds.index("think") > kinds.index("call"):
        errors.append(ParseError("malformed_thinking", "<think> block after a tool call"))
    calls: list[ToolCall] = []
    for kind, body in blocks:
        if kind == "call":
            call = _parse_call(body.strip(), validators, errors)
            if call is not None:
                calls.append(call)
    if not any(k == "call" for k in kinds) and not any(e.code == "malformed_tool_call" for e in errors):
        errors.append(ParseError("no_tool_call", "the message calls no tool"))
    return ParsedMessage(
        text=text,
        thinking=thinks[0] if thinks else None,
        content=outside.strip(),
        tool_calls=calls if not errors else [],
        errors=errors,
    )
