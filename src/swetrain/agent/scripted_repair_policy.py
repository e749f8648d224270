"""``scripted-repair[:SEED]``: the scripted repair search as a policy (a baseline for the eval protocol).

It acts only through the agent's tools and sees only what a model sees (the issue, its own
observations, and in a recovery attempt the failure context); it never reads the gold patch and
never runs the tests on its candidates, so unlike :func:`~swetrain.agent.scripted_repair.find_fix`
it can be wrong. Per attempt:

1. ``execute_bash TEST_CMD``: the first failing test and its short traceback;
2. ``execute_bash`` of ``grep -rn -A 20 "def F(" .`` (non-test sources) for the functions the issue
   and the traceback name (the search order of :mod:`swetrain.agent.scripted_repair`: issue-named functions, traceback
   frames deepest first, functions called on traceback lines);
3. ``file_editor str_replace``: one of the search's candidate single-line edits inside the shown
   functions (:func:`~swetrain.agent.scripted_repair.line_edits`), drawn at random from the
   attempt's seed. In a recovery attempt it reads the failed patch from its context and never draws
   an edit that adds the same line again;
4. ``finish``.

It costs no GPU and runs in seconds per task: users run it to check a scaffold and a task suite, and
reports use it as a fixed reference point.
"""

from __future__ import annotations

import random
import re
import shlex
import textwrap
from dataclasses import dataclass
from typing import Any

from swetrain.agent.chains import CONTEXT_HEADER
from swetrain.agent.scripted import FINISH_CALL, ScriptState, bash_call, replace_call
from swetrain.agent.scripted_repair import GREP_AFTER, TEST_CMD, TRACEBACK_FRAME, BACKTICKED_MODULE, is_test_file, line_edits

MAX_FUNCTIONS = 4  # functions shown by the locating command (keeps the observation short)
_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.S)
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NAME = re.compile(r"`([A-Za-z_]\w*)(?:\(\))?`")
_GREP_LINE = re.compile(r"^\./(.+?\.py)([:-])(\d+)[:-](.*)$")
_SKIP = ("assert", "print", "len", "raises", "isinstance", "str", "int", "list", "dict", "set")


def _issue(prompt_text: str) -> str:
    """The first user message (the issue, plus the failure context in a recovery attempt)."""
    start = prompt_text.find("<|im_start|>user\n")
    if start < 0:
        return prompt_text
    end = prompt_text.find("<|im_end|>", start)
    return prompt_text[start:end if end > 0 else None]


def failed_patch_lines(issue: str) -> set[str]:
    """Stripped lines the failed patch of the failure context added (empty without a context)."""
    if CONTEXT_HEADER not in issue:
        return set()
    block = issue.split(CONTEXT_HEADER, 1)[1]
    m = re.search(r"```diff\n(.*?)\n```", block, re.S)
    if not m:
        return set()
    return {ln[1:].strip() for ln in m.group(1).splitlines() if ln.startswith("+") and not ln.startswith("+++")}


def target_names(first_output: str, issue: str) -> list[str]:
    """Function names to show, in the search order of :mod:`swetrain.agent.scripted_repair`: names
    the issue gives (``pkg.mod.Class.f``, or a backticked bare ``f``), traceback frames deepest first
    (test files skipped), then functions called on traceback lines."""
    out: list[str] = []

    def add(name: str) -> None:
        if name not in out and not name.startswith("test") and name not in _SKIP:
            out.append(name)

    text = issue.split(CONTEXT_HEADER, 1)[0]
    dotted = BACKTICKED_MODULE.findall(text)
    for name in dotted:
        if len(name.split(".")) >= 3:
            add(name.split(".")[-1])
    for name in _NAME.findall(text):
        add(name)
    for name in dotted:  # `mod.f` (or a package `pkg.mod`: grep then shows nothing)
        add(name.split(".")[-1])
    frames = [(m.group(1).lstrip("./"), m.group(3)) for m in TRACEBACK_FRAME.finditer(first_output)]
    for path, name in reversed(frames):
        if not is_test_file(path):
            add(name)
    for line in first_output.splitlines():
        for name in _CALL.findall(line):
            add(name)
    return out


def locate_cmd(names: list[str]) -> str:
    """One command showing each named function of the non-test sources (``@@ NAME`` then grep's
    numbered lines)."""
    grep = f"grep -rn --include='*.py' --exclude='test_*.py' --exclude=conftest.py --exclude-dir=tests -A {GREP_AFTER}"
    show = f'g(){{ echo "@@ $1"; {grep} "def $1(" . | head -n {2 * (GREP_AFTER + 1)}; }}'
    return "; ".join([show] + [f"g {shlex.quote(name)}" for name in names])


def shown_functions(output: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """(file, [(line number, text)]) of each function in ``locate_cmd``'s output, cut at its end."""
    out: list[tuple[str, list[tuple[int, str]]]] = []
    current: list[tuple[int, str]] | None = None
    indent = 0
    for raw in output.splitlines():
        g = _GREP_LINE.match(raw)
        if not g:
            current = None
            continue
        path, sep, num, text = g.group(1), g.group(2), int(g.group(3)), g.group(4)
        if sep == ":" and re.match(r"\s*(async\s+)?def \w+\(", text):
            current = [(num, text)]
            indent = len(text) - len(text.lstrip())
            out.append((path, current))
        elif current is not None and out[-1][0] == path and num == current[-1][0] + 1:
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                current = None  # the next definition: the function ended
            else:
                current.append((num, text))
        else:
            current = None
    return out


def candidate_fixes(functions: list[tuple[str, list[tuple[int, str]]]]) -> list[tuple[str, str, str]]:
    """(file, old, new) single-line candidate edits inside the shown functions (old made unique
    within the shown lines by one line of context when needed)."""
    out: list[tuple[str, str, str]] = []
    for path, lines in functions:
        texts = [t for _, t in lines]
        indent = min((len(t) - len(t.lstrip()) for t in texts if t.strip()), default=0)
        snippet = textwrap.dedent("\n".join(texts)) + "\n"
        for idx, new_line in line_edits(snippet, path, 1, len(texts)):
            old = texts[idx - 1]
            new = " " * indent + new_line if new_line.strip() else new_line
            if texts.count(old) > 1 and idx >= 2:
                old, new = texts[idx - 2] + "\n" + old, texts[idx - 2] + "\n" + new
            fix = (path, old, new)
            if fix not in out and old != new:
                out.append(fix)
    return out


@dataclass
class RepairScript:
    """The policy's script (picklable: Ray actors build it from the spec)."""

    seed: int = 0

    def __call__(self, state: ScriptState) -> str:
        outputs = _RESPONSE.findall(state.prompt_text)
        issue = _issue(state.prompt_text)
        if state.turn == 0:
            return bash_call(TEST_CMD)
        if state.turn == 1:
            targets = target_names(outputs[0] if outputs else "", issue)[:MAX_FUNCTIONS]
            return bash_call(locate_cmd(targets)) if targets else FINISH_CALL
        if state.turn == 2 and len(outputs) >= 2:
            avoid = failed_patch_lines(issue)
            fixes = [f for f in candidate_fixes(shown_functions(outputs[1]))
                     if f[2].splitlines()[-1].strip() not in avoid]
            if not fixes:
                return FINISH_CALL
            attempt_seed = (state.seed or 0) - state.turn  # the loop seeds turn t with attempt_seed + t
            path, old, new = random.Random(f"{self.seed}:{attempt_seed}").choice(fixes)
            return replace_call(path, old, new)
        return FINISH_CALL


class ScriptedRepairPolicy:
    """Factory of the ``scripted-repair[:SEED]`` policy (a :class:`~swetrain.agent.scripted.ScriptedPolicy`)."""

    @staticmethod
    def create(seed: int = 0, tokenizer_path: str | None = None) -> Any:
        from swetrain.agent.scripted import make_scripted

        return make_scripted(RepairScript(seed), tokenizer_path)
