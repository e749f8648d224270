"""The chat template of swetrain's own tokenizers (ChatML turns, Hermes-style tool calls).

Kept as a Python string (not a ``.jinja`` file) so it ships with the package without package-data
rules. Rendered by transformers' ``apply_chat_template`` (Jinja, ``tools`` and ``tool`` messages,
``add_generation_prompt``).
"""

from __future__ import annotations

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
END_OF_TEXT = "<|endoftext|>"
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE = "<tool_response>", "</tool_response>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

#: Control tokens: skipped by ``decode(..., skip_special_tokens=True)``.
SPECIAL_TOKENS = [END_OF_TEXT, IM_START, IM_END]
#: Atomic markup tokens (one id each, never split) that stay in decoded text, as in Qwen tokenizers.
MARKUP_TOKENS = [TOOL_CALL_OPEN, TOOL_CALL_CLOSE, TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE, THINK_OPEN, THINK_CLOSE]

CHAT_TEMPLATE = r"""{#- swetrain chat template: ChatML turns (<|im_start|>role ... <|im_end|>) with Hermes-style tool calls.
    Tools are listed as JSON schemas in the system turn; the assistant calls one with
    <tool_call>{"name": ..., "arguments": {...}}</tool_call>; results come back as role "tool"
    messages, rendered inside <tool_response></tool_response> in a user turn (consecutive tool
    messages share one turn). Every newline is written explicitly, so trim_blocks/lstrip_blocks
    settings do not change the output. -#}
{%- macro text(content) -%}
{%- if content is none -%}
{%- elif content is string -%}{{- content -}}
{%- else -%}{%- for part in content -%}{%- if part.type == 'text' -%}{{- part.text -}}{%- endif -%}{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- set has_system = messages and messages[0].role == 'system' -%}
{%- if tools -%}
{{- '<|im_start|>system\n' -}}
{%- if has_system -%}{{- text(messages[0].content) -}}{%- else -%}{{- 'You are a careful software engineering assistant.' -}}{%- endif -%}
{{- '\n\n# Tools\n\nYou can call the tools listed (as JSON schemas) inside <tools></tools>:\n<tools>\n' -}}
{%- for tool in tools -%}{{- tool | tojson -}}{{- '\n' -}}{%- endfor -%}
{{- '</tools>\n\nTo call a tool, write a JSON object with its name and arguments inside <tool_call></tool_call> tags:\n<tool_call>\n{"name": "<tool name>", "arguments": {"<argument>": "<value>"}}\n</tool_call><|im_end|>\n' -}}
{%- elif has_system -%}
{{- '<|im_start|>system\n' + text(messages[0].content) + '<|im_end|>\n' -}}
{%- endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' -%}
{%- if not loop.first -%}{{- '<|im_start|>system\n' + text(message.content) + '<|im_end|>\n' -}}{%- endif -%}
{%- elif message.role == 'tool' -%}
{%- if loop.first or loop.previtem.role != 'tool' -%}{{- '<|im_start|>user\n' -}}{%- else -%}{{- '\n' -}}{%- endif -%}
{{- '<tool_response>\n' + text(message.content) + '\n</tool_response>' -}}
{%- if loop.last or loop.nextitem.role != 'tool' -%}{{- '<|im_end|>\n' -}}{%- endif -%}
{%- elif message.role == 'assistant' -%}
{{- '<|im_start|>assistant\n' + text(message.content) -}}
{%- for call in (message.tool_calls or []) -%}
{%- set fn = call.function if call.function is defined else call -%}
{%- if not loop.first or text(message.content) -%}{{- '\n' -}}{%- endif -%}
{{- '<tool_call>\n{"name": ' + (fn.name | tojson) + ', "arguments": ' -}}
{%- if fn.arguments is string -%}{{- fn.arguments -}}{%- else -%}{{- fn.arguments | tojson -}}{%- endif -%}
{{- '}\n</tool_call>' -}}
{%- endfor -%}
{{- '<|im_end|>\n' -}}
{%- else -%}
{{- '<|im_start|>' + message.role + '\n' + text(message.content) + '<|im_end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}
"""
