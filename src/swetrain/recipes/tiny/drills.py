"""Skill drills: short procedurally generated conversations that teach a randomly initialised
tiny policy the two copy skills every scripted repair demonstration needs, before it sees the
(few, long) demonstrations themselves.

A 2.7M-parameter model trained only on ~130 demonstrations learns the constant parts (the first
test command, the tool-call syntax) but not to *copy* from its context: its grep names invented
functions and its edits invented lines. Copying is cheap to teach with many short examples, and
those need no sandbox: the observations are rendered in the exact formats the agent sees.

* ``locate``: issue + a pytest ``--tb=short`` failure (frames ``path:line: in function``) ->
  ``grep -n -A 20 "def F(" P`` for the function the issue names, else the deepest non-test frame.
* ``edit``: the same, then the grep's real output on a mutated copy of the file -> ``str_replace``
  on the line the traceback cites, restoring its un-mutated text (the inverse edit) with the
  shortest unique span around the change (:func:`~swetrain.agent.scripted_repair.minimal_edit`).

Functions come from real source files: the built-in TRAIN repositories (never a held-out
repository, never a line a held-out task changes) and the Python standard library; the bug is one
regex rule (:func:`mutate_line`: a flipped comparison, ``+``/``-``, ``and``/``or``, a dropped or
added ``not``, an index or constant changed) on one line. Each
drill is rendered without the system prompt (the tool listing is ~850 tokens, constant, and
already learned from the demonstrations), so a drill costs ~300-500 tokens.
"""

from __future__ import annotations

import random
import re
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swetrain.agent.format import tool_call_text
from swetrain.agent.scripted_repair import GREP_AFTER, TEST_CMD, function_spans, edit_strings, grep_cmd
from swetrain.env.stable import stable_output

_ERRORS = (
    "AssertionError: assert {a} == {b}",
    "ValueError: invalid value {a!r}",
    "IndexError: list index out of range",
    "KeyError: {a!r}",
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
    "ZeroDivisionError: division by zero",
    "AttributeError: 'NoneType' object has no attribute {a!r}",
)
_HEADERS = (
    "## `{dotted}` gives wrong results",
    "## `{dotted}` broken in current main",
    "## Regression: the `{module}` module misbehaves",
    "## Unexpected behaviour in the `{module}` module",
)


@dataclass(frozen=True)
class Source:
    """One source file a drill may use: its path as the agent sees it and its text."""

    path: str  # e.g. "calcium/parser.py" or "json/decoder.py"
    text: str


def grep_output(text: str, path: str, function: str) -> str:
    """What ``grep -n -A GREP_AFTER "def F(" P`` prints for ``text`` (first match; ``[exit code]``
    line as the tool writes it)."""
    lines = text.splitlines()
    needle = f"def {function}("
    out: list[str] = []
    last = -10**9
    for i, line in enumerate(lines):
        if needle in line:
            if out and i > last + 1:
                out.append("--")
            out.append(f"{i + 1}:{line}")
            last = i
            for j in range(i + 1, min(len(lines), i + 1 + GREP_AFTER)):
                if needle in lines[j]:
                    break
                out.append(f"{j + 1}-{lines[j]}")
                last = j
    return "\n".join(out) + "\n[exit code: 0]"


def _module(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _failure(rng: random.Random, frames: list[tuple[str, int, str, str]], test: str) -> str:
    """A pytest ``-x --tb=short | tail -n 25`` failure showing ``frames`` (path, line, function, code)."""
    a, b = rng.randint(0, 99), rng.randint(0, 99)
    err = rng.choice(_ERRORS).format(a=a, b=b)
    test_file = f"tests/test_{frames[-1][0].rsplit('/', 1)[-1]}"
    passed = rng.randint(0, 40)
    body = ["." * passed + "F", "=" * 35 + " FAILURES " + "=" * 35, f"{'_' * 20} {test} {'_' * 20}",
            f"{test_file}:{rng.randint(5, 300)}: in {test}", f"    assert {frames[-1][2]}({a}) == {b}"]
    for path, line, fn, code in frames:
        body += [f"{path}:{line}: in {fn}", f"    {code.strip()}"]
    body += [f"E   {err}", "=" * 28 + " short test summary info " + "=" * 28,
             f"FAILED {test_file}::{test} - {err[:40]}...",
             "!" * 26 + " stopping after 1 failures " + "!" * 26,
             f"1 failed, {passed} passed in {rng.randint(30, 250) / 100:.2f}s", "[exit code: 0]"]
    return stable_output("\n".join(body[-27:]))  # as the bash tool shows it (no run time)


def _functions_of(src: Source) -> list[tuple[str, int, int]]:
    return [f for f in function_spans(src.text) if f[2] - f[1] >= 2 and not f[0].startswith("__")]


# single-line bug rules (pattern, replacement); the drill shows the result, the fix undoes it
_RULES = (
    (r" < ", " <= "), (r" <= ", " < "), (r" > ", " >= "), (r" >= ", " > "), (r" == ", " != "), (r" != ", " == "),
    (r" \+ ", " - "), (r" - ", " + "), (r" and ", " or "), (r" or ", " and "), (r"\bnot ", ""),
    (r"\bif (?!not )", "if not "), (r"\[0\]", "[1]"), (r"\[1\]", "[0]"), (r"\[-1\]", "[-2]"),
    (r"\bTrue\b", "False"), (r"\bFalse\b", "True"), (r"(?<![\w.])1(?![\w.])", "2"), (r"(?<![\w.])0(?![\w.])", "1"),
)


def mutate_line(line: str, rng: random.Random) -> str | None:
    """``line`` with one rule of :data:`_RULES` applied at one place, or None (comments,
    docstrings and lines no rule matches)."""
    code = line.strip()
    if not code or code.startswith(("#", '"', "'", "def ", "class ", "@")):
        return None
    options = [(m, rep) for pat, rep in _RULES for m in re.finditer(pat, line)]
    if not options:
        return None
    m, rep = rng.choice(options)
    out = line[: m.start()] + rep + line[m.end():]
    return out if out != line else None


def make_drill(rng: random.Random, sources: list[Source], blocked: dict[str, set[int]], kind: str) -> list[dict] | None:
    """One drill conversation (user, assistant, tool, assistant[, tool, assistant]) or None;
    ``blocked`` lines (per path) are never mutated."""
    src = rng.choice(sources)
    funcs = _functions_of(src)
    if not funcs:
        return None
    text = src.text
    if kind == "edit":
        lines = text.splitlines()
        spots = [(f, i) for f in funcs for i in range(f[1] + 1, min(f[2], f[1] + GREP_AFTER) + 1)
                 if i not in blocked.get(src.path, ())]
        rng.shuffle(spots)
        for (name, lo, hi), line in spots[:12]:
            bad = mutate_line(lines[line - 1], rng)
            if bad is not None and bad not in lines and lines.count(lines[line - 1]) == 1:
                break
        else:
            return None
        old_lines = lines
        shown = "\n".join(lines[: line - 1] + [bad] + lines[line:]) + "\n"
    else:
        name, lo, hi = rng.choice(funcs)
        line = rng.randint(lo + 1, hi)
        shown = text
    code = shown.splitlines()[line - 1]
    path = src.path
    frames = [(path, line, name, code)]
    if rng.random() < 0.5:  # a caller frame above the buggy function
        other = rng.choice(sources)
        ofuncs = _functions_of(other)
        if ofuncs:
            oname, olo, ohi = rng.choice(ofuncs)
            oline = rng.randint(olo + 1, ohi)
            frames.insert(0, (other.path, oline, oname, other.text.splitlines()[oline - 1]))
    module = _module(path)
    named = rng.random() < 0.5
    header = rng.choice(_HEADERS[:2] if named else _HEADERS[2:]).format(dotted=f"{module}.{name}", module=module)
    issue = f"Resolve the following issue in the repository.\n\n<issue>\n{header}\n\nThe failing tests describe the expected behaviour.\n</issue>"
    msgs = [
        {"role": "user", "content": issue},
        {"role": "assistant", "content": tool_call_text("execute_bash", {"cmd": TEST_CMD})},
        {"role": "tool", "content": _failure(rng, frames, f"test_{name}")},
        {"role": "assistant", "content": tool_call_text("execute_bash", {"cmd": grep_cmd(path, name)})},
    ]
    if kind == "edit":
        # the shortest unique span around the change (scripted_repair.minimal_edit), as in the
        # demonstrations: a few tokens to copy instead of the whole line
        old_str, new_str = edit_strings(shown, line, old_lines[line - 1])
        msgs += [
            {"role": "tool", "content": grep_output(shown, path, name)},
            {"role": "assistant", "content": tool_call_text(
                "file_editor", {"command": "str_replace", "path": path, "old_str": old_str, "new_str": new_str})},
        ]
    return msgs


def drill_sources(stdlib_files: int = 150, seed: int = 0) -> tuple[list[Source], dict[str, set[int]]]:
    """Source files (the built-in TRAIN repositories + a sample of the standard library) and, per
    path, the lines a held-out task changes (never mutated by a drill)."""
    from swetrain.tasks.builtin import REPOS_DIR, load_catalog, shipped_tasks
    from swetrain.tasks.builtin.build import HELDOUT_REPOS
    from swetrain.tasks.synth.mutate import is_test_path, source_files
    from swetrain.recipes.tiny.demo_pool import changed_sites

    blocked: dict[str, set[int]] = {}
    for t in shipped_tasks():
        if t.split == "heldout":
            for f, n in changed_sites(t.patch):
                blocked.setdefault(f, set()).add(n)
    sources: list[Source] = []
    for entry in load_catalog():
        if entry["name"] in HELDOUT_REPOS:
            continue
        root = REPOS_DIR / entry["name"]
        sources += [Source(rel, (root / rel).read_text(encoding="utf-8")) for rel in source_files(root) if not is_test_path(rel)]
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*/*.py") if not {"test", "tests", "idlelib", "lib2to3", "site-packages"} & set(p.parts))
    random.Random(seed).shuffle(files)
    for p in files[:stdlib_files]:
        try:
            sources.append(Source("/".join(p.parts[-2:]), p.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return sources, blocked


def make_drills(n: int, seed: int = 0, stdlib_files: int = 150) -> Iterator[list[dict]]:
    """``n`` drill conversations (40% locate, 60% edit), deterministic for a seed."""
    sources, blocked = drill_sources(stdlib_files, seed)
    rng = random.Random(seed)
    made = 0
    while made < n:
        drill = make_drill(rng, sources, blocked, "locate" if rng.random() < 0.4 else "edit")
        if drill is not None:
            made += 1
            yield drill


def drill_sample(messages: list[dict], chat_format: Any) -> Any:
    """Token ids of a drill: the user turn without system prompt, then assistant turns (loss) and
    observations (no loss), exactly as :func:`swetrain.recipes.tiny.warmstart.demo_sample` renders turns."""
    from swetrain.train.batch import TrainSample

    fmt = chat_format
    prompt = fmt.tokenizer.apply_chat_template([messages[0]], chat_template=fmt.chat_template, tokenize=False,
                                               add_generation_prompt=True)
    ids = fmt.encode(prompt)
    mask = [0] * len(ids)
    segs = [0] * len(ids)
    turn = 0
    for i, m in enumerate(messages[1:], 1):
        if m["role"] == "assistant":
            turn += 1
            gen = fmt.encode(m["content"]) + [fmt.eot_id]
            ids += gen
            mask += [1] * len(gen)
            segs += [turn] * len(gen)
        else:
            o = fmt.observation_ids([m], ended_with_eot=True)
            ids += o
            mask += [0] * len(o)
            segs += [0] * len(o)
    n = len(ids)
    return TrainSample(token_ids=ids, loss_mask=mask, segment_ids=segs, behavior_logprobs=[0.0] * n,
                       invalid=[0] * n, advantage=1.0, group="drill")
