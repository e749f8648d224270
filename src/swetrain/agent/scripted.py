"""``ScriptedPolicy``: a real :class:`~swetrain.policy.base.Policy` whose messages come from Python.

Each ``generate`` call decodes the prompt ids, hands a :class:`ScriptState` to a callback that
returns the assistant message text, tokenises that text with the real tokenizer and returns the
ids (plus the end-of-turn token) with log-probs 0.0. It costs nothing to run, so it drives tests,
golden trajectories and the zero-cost rollout benchmark through exactly the code a model uses.

Scripts used across processes (Ray actors) must be picklable: the data-only scripts here
(:class:`TurnScript`, :class:`KeywordScript`, :class:`SeededChoiceScript`) are.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from swetrain.policy.base import Generation, GenerationConfig


@dataclass
class ScriptState:
    """What a script sees for one call."""

    prompt_ids: list[int]
    prompt_text: str
    turn: int  # 0-based index of the assistant turn being generated in this conversation
    seed: int | None
    call_index: int  # calls made to this policy so far (process-local)


Script = Callable[[ScriptState], str]


def count_assistant_turns(prompt_text: str, gen_prompt: str = "<|im_start|>assistant") -> int:
    """Assistant turns already in a prompt (the trailing generation prompt not counted)."""
    return max(prompt_text.count(gen_prompt) - 1, 0)


class ScriptedPolicy:
    """A Policy whose outputs are scripted (see module docstring).

    ``tokenization="chars"`` tokenises each character separately: the ids then differ from the
    tokenizer's canonical encoding of the same text, which tests use to prove nothing re-tokenises
    generated text.
    """

    def __init__(
        self,
        tokenizer: Any,
        script: Script,
        *,
        end_of_turn: str = "<|im_end|>",
        tokenization: str = "canonical",
        turn_marker: str = "<|im_start|>assistant",
        max_context: int | None = None,
    ) -> None:
        if tokenization not in ("canonical", "chars"):
            raise ValueError(f"tokenization must be 'canonical' or 'chars', got {tokenization!r}")
        self.tokenizer = tokenizer
        self.script = script
        self.version = 0
        self.max_context = max_context  # a window to play (None: unbounded); prompts are checked against it
        self.tokenization = tokenization
        self.turn_marker = turn_marker
        eot = tokenizer.encode(end_of_turn, add_special_tokens=False)
        if len(eot) != 1:
            raise ValueError(f"end_of_turn {end_of_turn!r} is not a single token of this tokenizer")
        self.eot_id = eot[0]
        self.calls = 0
        # the generated id lists of the last 4096 calls, in call order (tests compare against them)
        self.history: deque[list[int]] = deque(maxlen=4096)

    def _encode(self, text: str) -> list[int]:
        if self.tokenization == "canonical":
            return list(self.tokenizer.encode(text, add_special_tokens=False))
        ids: list[int] = []
        for piece in _split_specials(text, self.tokenizer):
            if piece in getattr(self.tokenizer, "get_added_vocab", dict)():
                ids += self.tokenizer.encode(piece, add_special_tokens=False)
            else:
                for ch in piece:
                    ids += self.tokenizer.encode(ch, add_special_tokens=False)
        return ids

    def generate(self, prompts: list[list[int]], config: GenerationConfig) -> list[Generation]:
        out = []
        for prompt in prompts:
            if self.max_context is not None and len(prompt) + config.max_new_tokens > self.max_context:
                raise ValueError(
                    f"prompts: {len(prompt)} tokens + max_new_tokens={config.max_new_tokens} exceed the window of {self.max_context}"
                )
            text = self.tokenizer.decode(prompt, skip_special_tokens=False)
            state = ScriptState(
                prompt_ids=list(prompt),
                prompt_text=text,
                turn=count_assistant_turns(text, self.turn_marker),
                seed=config.seed,
                call_index=self.calls,
            )
            self.calls += 1
            message = self.script(state)
            if not isinstance(message, str):
                raise TypeError(f"script returned {type(message).__name__}, expected str")
            ids = self._encode(message)
            stop = self.eot_id if not config.stop_token_ids or self.eot_id in config.stop_token_ids else config.stop_token_ids[0]
            ids.append(stop)
            finish = "stop"
            if len(ids) > config.max_new_tokens:
                ids = ids[: config.max_new_tokens]
                finish = "length"
            self.history.append(list(ids))
            out.append(
                Generation(
                    token_ids=ids,
                    logprobs=[0.0] * len(ids),
                    text=self.tokenizer.decode(ids, skip_special_tokens=False),
                    finish_reason=finish,
                )
            )
        return out

    def score(self, sequences: list[list[int]], starts: list[int] | None = None) -> list[list[float]]:
        """A scripted policy is deterministic: every scored token has log-prob 0."""
        starts = starts or [1] * len(sequences)
        return [[0.0] * (len(s) - st) for s, st in zip(sequences, starts)]

    def sync_weights(self, state_dict: dict[str, Any]) -> None:
        self.version += 1


def _split_specials(text: str, tokenizer: Any) -> list[str]:
    added = sorted(getattr(tokenizer, "get_added_vocab", dict)().keys(), key=len, reverse=True)
    if not added:
        return [text]
    import re

    pattern = re.compile("(" + "|".join(re.escape(a) for a in added) + ")")
    return [p for p in pattern.split(text) if p]


# ---------------------------------------------------------------------- picklable scripts
@dataclass
class TurnScript:
    """Message ``turn`` of a fixed list; after the list, ``after`` (default: call finish)."""

    turns: Sequence[str]
    after: str = '<tool_call>\n{"name": "finish", "arguments": {"command": "submit"}}\n</tool_call>'

    def __call__(self, state: ScriptState) -> str:
        return self.turns[state.turn] if state.turn < len(self.turns) else self.after


@dataclass
class KeywordScript:
    """Pick a sub-script by the first keyword found in the prompt text (else ``default``).

    E.g. ``{"Previous attempt": recovery_script}`` plays a different plan on recovery attempts.
    """

    cases: dict[str, Script]
    default: Script

    def __call__(self, state: ScriptState) -> str:
        for key, script in self.cases.items():
            if key in state.prompt_text:
                return script(state)
        return self.default(state)


@dataclass
class SeededChoiceScript:
    """Choose one of ``options`` per attempt from the attempt's seed.

    The agent loop seeds turn ``t`` of an attempt with ``attempt_seed + t`` (see
    :func:`swetrain.agent.loop.turn_seed`), so ``seed - turn`` identifies the attempt. Deterministic
    for a given seed: it exercises seed plumbing (local vs Ray backends) without a model.
    """

    options: Sequence[Script]

    def __call__(self, state: ScriptState) -> str:
        if state.seed is None:
            raise ValueError("SeededChoiceScript needs seeded generation calls")
        choice = random.Random(state.seed - state.turn).randrange(len(self.options))
        return self.options[choice](state)


# ---------------------------------------------------------------------- named scripts
def _call(name: str, arguments: dict) -> str:
    import json

    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def bash_call(cmd: str) -> str:
    """A Hermes-style ``execute_bash`` call, as a model would write it."""
    return _call("execute_bash", {"cmd": cmd})


def replace_call(path: str, old: str, new: str) -> str:
    """A ``file_editor str_replace`` call."""
    return _call("file_editor", {"command": "str_replace", "path": path, "old_str": old, "new_str": new})


FINISH_CALL = _call("finish", {"command": "submit"})


def builtin_script(name: str) -> Script:
    """Named zero-cost scripts (used by ``--policy scripted:NAME`` and the benchmark).

    * ``finish``: call ``finish`` at once (an empty patch);
    * ``explore``: list files, search, view the tree, git status, run the tests, then finish (no edits);
    * ``invalid``: one malformed call, one unknown tool, then finish.
    """
    scripts: dict[str, Script] = {
        "finish": TurnScript([]),
        "explore": TurnScript(
            [
                bash_call("ls -R | head -50"),
                "<think>Look for the code the issue mentions.</think>\n" + _call("search", {"search_term": "def "}),
                _call("file_editor", {"command": "view", "path": "."}),
                bash_call("git status --short && git log --oneline | head -3"),
                bash_call("python -m pytest -q -x 2>&1 | tail -5"),
            ]
        ),
        "invalid": TurnScript(['<tool_call>{"name": "execute_bash", "arguments": {</tool_call>', _call("rm_everything", {})]),
    }
    if name not in scripts:
        raise ValueError(f"unknown scripted policy {name!r}; choose one of {', '.join(sorted(scripts))}")
    return scripts[name]


def load_tokenizer(path: str | None = None) -> Any:
    """A tokenizer from a folder, or the tiny default policy's tokenizer."""
    from transformers import AutoTokenizer

    if path is None:
        from swetrain.policy.tiny import ensure_tiny

        path = str(ensure_tiny())
    return AutoTokenizer.from_pretrained(path)


def make_scripted(script: Script, tokenizer_path: str | None = None, **kwargs: Any) -> ScriptedPolicy:
    """A picklable-by-reference factory (``functools.partial(make_scripted, script, path)``)."""
    return ScriptedPolicy(load_tokenizer(tokenizer_path), script, **kwargs)


def load_scripted(spec: str) -> ScriptedPolicy:
    """``scripted:NAME`` or ``scripted:NAME:TOKENIZER_DIR`` -> a ScriptedPolicy."""
    parts = spec.split(":", 2)
    if len(parts) < 2 or parts[0] != "scripted" or not parts[1]:
        raise ValueError(f"policy spec {spec!r}: expected 'scripted:NAME[:TOKENIZER_DIR]'")
    return make_scripted(builtin_script(parts[1]), parts[2] if len(parts) == 3 else None)
