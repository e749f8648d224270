"""The scripted search undoes the crash tier's typos (scripted_repair.typo_fixes): the inverse of
swetrain.tasks.synth.mutate's one-keystroke typos, found from the traceback alone."""

from __future__ import annotations

from collections import Counter

import pytest

from swetrain.agent.scripted_repair import find_fix, line_edits, typo_fixes
from swetrain.tasks.synth.mutate import make_typo, taken_names

SOURCE = '''class LexError(Exception):
    pass


def tokenize(source, strict=False):
    tokens = []
    for ch in source:
        if ch == "$":
            raise LexError(ch)
        tokens.append(ch)
    return tokens
'''


def _vocab(source: str) -> Counter:
    import re

    return Counter(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))


@pytest.mark.parametrize("name", ["LexError", "tokens", "append", "source"])
def test_every_typo_the_mutator_makes_is_undone(name):
    for salt in range(12):
        typo = make_typo(name, taken_names(SOURCE), str(salt))
        assert typo is not None
        line = f"    x = {typo}(y)"
        assert f"    x = {name}(y)" in typo_fixes(line, _vocab(SOURCE) + Counter({typo: 1}))


def test_names_that_occur_elsewhere_are_not_rewritten():
    # `tokens` occurs three times: it is a real name, not a typo of `token`s or anything else
    line = "        tokens.append(ch)"
    assert typo_fixes(line, _vocab(SOURCE)) == []
    # without the vocabulary, line_edits is what it was (no typo inverses)
    assert all("LexError" not in new for _, new in line_edits(SOURCE.replace("raise LexError", "raise LexErorr"), "m.py", 5, 11))
    edits = line_edits(SOURCE.replace("raise LexError", "raise LexErorr"), "m.py", 5, 11,
                       _vocab(SOURCE.replace("raise LexError", "raise LexErorr")))
    assert (9, "            raise LexError(ch)") in edits


@pytest.mark.slow
def test_find_fix_repairs_a_crash_tier_task():
    """A real built-in crash task (NameError from a misspelled call): the search finds the gold fix
    in a real workspace without reading the patch, and leaves the workspace clean."""
    from swetrain.env.backend import open_workspace
    from swetrain.tasks.builtin import load_builtin

    task = next(t for t in load_builtin(split="train") if (t.labels or {}).get("synth", {}).get("kind") == "misspell_call")
    ws = open_workspace(task)
    try:
        plan = find_fix(ws, issue=task.problem_statement or "", max_candidates=40)
        assert plan is not None
        minus = [ln[1:] for ln in task.patch.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        plus = [ln[1:] for ln in task.patch.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        assert plan.old in minus[0] and plan.new in plus[0]
        assert minus[0].replace(plan.old, plan.new) == plus[0]
        assert ws.diff() == ""
    finally:
        ws.close()
