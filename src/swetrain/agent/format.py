"""Chat format of the agent: prompts, Hermes/Qwen-style tool calls and token-exact bookkeeping.

The agent owns the exact token sequence the trainer later scores, so text is rendered to ids in
exactly three places and generated text is never re-tokenised:

* the initial prompt: ``render([system, user], add_generation_prompt=True)`` -> ids;
* after each assistant turn: the ids the policy generated, verbatim (including the end-of-turn
  token when generation stopped at it); nothing else is derived from the generated text;
* each observation: the *template delta* of the tool-response turn(s) -- the text the chat
  template puts after an assistant message's content (the rest of the assistant turn, e.g. the
  ``\\n`` after ``<|im_end|>``, or the whole ``<|im_end|>\\n`` when generation was cut by length),
  the tool turn itself and the next assistant generation prompt -- tokenised on its own.

The tokenizer's own chat template is used when it has one (``tools=`` gets the tool schemas, so a
real model sees the tool listing it was trained with); otherwise :data:`BUILTIN_TEMPLATE`, a small
ChatML/Hermes template written for swetrain, is used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# A ChatML template with Hermes-style tool calls, written for swetrain (used when the tokenizer
# has no chat template of its own). Tool results come back as a user turn wrapped in
# <tool_response> tags, as in the Hermes/Qwen convention.
BUILTIN_TEMPLATE = (
    "{% set sys = messages[0].content if messages and messages[0].role == 'system' else '' %}"
    "{% if sys or tools %}<|im_start|>system\n{{ sys }}"
    "{% if tools %}{{ '\\n\\n' }}# Tools\n\nThe functions you can call are listed as JSON schemas inside "
    "<tools></tools>:\n<tools>"
    "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}{{ '\\n' }}</tools>\n\n"
    "Call a function by writing one JSON object with its name and arguments between tags:\n"
    "<tool_call>\n{\"name\": <function-name>, \"arguments\": <arguments-object>}\n</tool_call>"
    "{% endif %}<|im_end|>\n"
    "{% endif %}"
    "{% for m in messages %}{% if m.role == 'system' %}"
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

DEFAULT_SYSTEM_PROMPT = (
    "You are a software engineering agent working in a code repository (your current working "
    "directory). Resolve the issue the user describes by inspecting the code, editing files and "
    "running commands with the tools below. Make the smallest change that fixes the issue; do not "
    "modify the tests. When you are done, call the `finish` tool. Call tools with "
    "<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>; you may think first inside "
    "<think>...</think>."
)


def tool_listing(tools: Sequence[dict]) -> str:
    """The Hermes-style tool listing, for chat templates that silently ignore ``tools=``."""
    lines = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    return (
        "# Tools\n\nThe functions you can call are listed as JSON schemas inside <tools></tools>:\n"
        f"<tools>\n{lines}\n</tools>\n\n"
        "Call a function by writing one JSON object with its name and arguments between tags:\n"
        '<tool_call>\n{"name": <function-name>, "arguments": <arguments-object>}\n</tool_call>'
    )


_SENTINEL = "\u2063SWETRAIN_ASSISTANT_CONTENT\u2063"
_END_OF_TURN_CANDIDATES = ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")


class ChatFormatError(ValueError):
    """The tokenizer/template cannot support token-exact multi-turn bookkeeping."""


@dataclass
class ChatFormat:
    """Renders agent conversations to token ids for one tokenizer (see the module docstring).

    ``tools`` are OpenAI-style function schemas (``swetrain.env.tools.TOOL_SPECS`` by default).
    """

    tokenizer: Any
    tools: Sequence[dict] | None = None
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    chat_template: str | None = None
    eot_id: int = field(init=False)
    eot_text: str = field(init=False)
    stop_token_ids: list[int] = field(init=False)
    uses_builtin_template: bool = field(init=False)
    tools_in_system_prompt: bool = field(init=False)

    def __post_init__(self) -> None:
        if self.tools is None:
            from swetrain.env.tools import TOOL_SPECS

            self.tools = TOOL_SPECS
        self.tools = list(self.tools)
        own = getattr(self.tokenizer, "chat_template", None)
        if self.chat_template is None:
            self.chat_template = own if isinstance(own, str) and own.strip() else BUILTIN_TEMPLATE
        self.uses_builtin_template = self.chat_template == BUILTIN_TEMPLATE
        # Some real templates (SmolLM2's, for one) accept ``tools=`` and drop it. Then the model
        # would never see its tools: list them in the system prompt instead.
        self.tools_in_system_prompt = bool(self.tools) and not self._template_renders_tools()
        if self.tools_in_system_prompt:
            self.system_prompt = f"{self.system_prompt}\n\n{tool_listing(self.tools)}"
        self.eot_id, self.eot_text = self._end_of_turn()
        stops = [self.eot_id]
        eos = getattr(self.tokenizer, "eos_token_id", None)
        if isinstance(eos, int) and eos not in stops:
            stops.append(eos)
        self.stop_token_ids = stops
        # Text the template places after an assistant message's content, up to the next turn.
        self._assistant_suffix = self._render_after_sentinel([], add_generation_prompt=False)
        if not self._assistant_suffix.startswith(self.eot_text):
            raise ChatFormatError(
                f"chat template does not end an assistant turn with the end-of-turn token {self.eot_text!r} "
                f"(it writes {self._assistant_suffix[:40]!r}); token-exact bookkeeping needs that"
            )

    # ------------------------------------------------------------------ rendering helpers
    def _end_of_turn(self) -> tuple[int, str]:
        tok = self.tokenizer
        for text in _END_OF_TURN_CANDIDATES:
            if text in self.chat_template:
                ids = tok.encode(text, add_special_tokens=False)
                if len(ids) == 1:
                    return ids[0], text
        eos = getattr(tok, "eos_token", None)
        if eos:
            ids = tok.encode(eos, add_special_tokens=False)
            if len(ids) == 1:
                return ids[0], eos
        raise ChatFormatError(
            "tokenizer has no single-token end-of-turn marker (tried "
            f"{', '.join(_END_OF_TURN_CANDIDATES)} and eos_token); add one as a special token"
        )

    def _template_renders_tools(self) -> bool:
        probe = self.render([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], add_generation_prompt=True)
        names = [t.get("function", t).get("name", "") for t in self.tools or ()]
        return all(name and name in probe for name in names)

    def render(self, messages: Sequence[dict], *, add_generation_prompt: bool) -> str:
        """The chat template's text for ``messages`` (with the tool listing)."""
        return self.tokenizer.apply_chat_template(
            [dict(m) for m in messages],
            tools=self.tools,
            chat_template=self.chat_template,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
        )

    def encode(self, text: str) -> list[int]:
        """Ids of template text (no BOS/EOS added: the template carries its own markers)."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _render_after_sentinel(self, extra: Sequence[dict], *, add_generation_prompt: bool) -> str:
        msgs = [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": _SENTINEL},
            *extra,
        ]
        text = self.render(msgs, add_generation_prompt=add_generation_prompt)
        at = text.rfind(_SENTINEL)
        if at < 0:
            raise ChatFormatError("chat template dropped the assistant message content; cannot compute turn deltas")
        return text[at + len(_SENTINEL) :]

    # ------------------------------------------------------------------ public API
    def initial_messages(self, user_content: str) -> list[dict]:
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": user_content}]

    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        """Ids of the initial prompt, ending with the assistant generation prompt."""
        return self.encode(self.render(messages, add_generation_prompt=True))

    def observation_ids(self, observations: Sequence[dict], *, ended_with_eot: bool) -> list[int]:
        """Ids appended after an assistant turn: rest of that turn, the observation turn(s), and the
        next generation prompt. ``observations`` are ``{"role": "tool"|"user", "content": ...}``.

        ``ended_with_eot``: the generated ids already end with the end-of-turn token (so it is not
        added again); otherwise (cut by length, or stopped at EOS) the template's end-of-turn text
        is appended here, outside the assistant mask.
        """
        if not observations:
            raise ValueError("observation_ids: at least one observation message is required")
        text = self._render_after_sentinel(observations, add_generation_prompt=True)
        if ended_with_eot:
            text = text[len(self.eot_text) :] if text.startswith(self.eot_text) else text
        return self.encode(text)

    def closing_ids(self, *, ended_with_eot: bool) -> list[int]:
        """Ids that close the final assistant turn when the episode ends (mask 0)."""
        text = self._assistant_suffix
        if ended_with_eot:
            text = text[len(self.eot_text) :]
        return self.encode(text) if text else []

    def decode_generated(self, token_ids: Sequence[int]) -> tuple[str, bool]:
        """Text of generated ids for parsing (never re-encoded) and whether they end with EOT."""
        ids = list(token_ids)
        ended = bool(ids) and ids[-1] == self.eot_id
        if ids and ids[-1] in self.stop_token_ids:
            ids = ids[:-1]
        return self.tokenizer.decode(ids, skip_special_tokens=False), ended


def issue_text(task: Any) -> str:
    """The user message of a first attempt: the issue (problem statement) of ``task``."""
    statement = (getattr(task, "problem_statement", "") or "").strip()
    if not statement:
        raise ValueError(f"task {getattr(task, 'instance_id', '?')!r} has an empty problem_statement")
    return f"Resolve the following issue in the repository.\n\n<issue>\n{statement}\n</issue>"


def user_message(task: Any, context: str | None) -> str:
    """x, or x followed by the failure context of a recovery attempt."""
    text = issue_text(task)
    if context:
        text += "\n\n" + context.strip()
    return text


def tool_call_text(name: str, arguments: dict) -> str:
    """One Hermes-style tool call, as a model would write it."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"
