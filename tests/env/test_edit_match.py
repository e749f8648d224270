"""Tolerant ``str_replace`` (issue 31): the pure matcher (``env/edit_match.py``) and the tool on a
real workspace. Exact matches behave as in exact mode; text outside the matched lines never
changes; fuzzy matches carry the old_str -> new_str difference over; ambiguous and weak matches are
refused with the closest lines; missing paths get "did you mean"; the setting reaches the tool from
the training config, the rollout engine, the eval protocol and the CLIs."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from swetrain.env import edit_match as em
from swetrain.env.tools import ToolRunner

# ------------------------------------------------------------------------------ strategies
NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta", "total", "count", "value", "item", "node"])
OPS = st.sampled_from(["==", "!=", "<", ">=", "+", "-", "*"])


@st.composite
def code_line(draw, quote="'"):
    a, b = draw(NAMES), draw(NAMES)
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return f"{a} = {b} {draw(OPS)} {draw(st.integers(0, 99))}"
    if kind == 1:
        return f"if {a} {draw(OPS)} {b}:"
    if kind == 2:
        return f"return {a}({b}, {quote}{draw(NAMES)}{quote})"
    if kind == 3:
        return f"{a}.append({quote}{draw(NAMES)}-{draw(st.integers(0, 9))}{quote})"
    return f"print({a}, {draw(st.integers(0, 999))})"


@st.composite
def block(draw, min_lines=2, max_lines=5, quote="'"):
    """Lines with indentation in multiples of 4 (relative 0..8)."""
    n = draw(st.integers(min_lines, max_lines))
    return [" " * (4 * draw(st.integers(0, 2))) + draw(code_line(quote)) for _ in range(n)]


def filler(n: int, tag: str) -> list[str]:
    """Lines that cannot be confused with generated code (unique, comment-only)."""
    return [f"# {tag} filler line number {i} ----" for i in range(n)]


def changed(lines: list[str], j: int) -> list[str]:
    """``lines`` with line j's content changed (an edit a model would make)."""
    out = list(lines)
    out[j] = out[j] + "  # fixed"
    return out


def unchanged_outside(before: str, after: str, m: em.EditMatch) -> None:
    b, a = before.split("\n"), after.split("\n")
    assert a[: m.first_line - 1] == b[: m.first_line - 1]
    tail = len(b) - m.last_line
    assert (a[len(a) - tail :] if tail else []) == b[len(b) - tail :] if tail else True


# ----------------------------------------------------------------------- pure: properties
@settings(max_examples=150, deadline=None)
@given(block(), st.integers(1, 6), st.integers(0, 6), st.integers(4, 8).filter(lambda d: d % 4 == 0),
       st.data())
def test_reindent_tier_applies_the_edit_at_the_files_depth(body, n_pre, n_post, shift, data):
    file_lines = filler(n_pre, "pre") + [" " * shift + ln for ln in body] + filler(n_post, "post")
    text = "\n".join(file_lines) + "\n"
    old_lines = body
    j = data.draw(st.integers(0, len(body) - 1))
    new_lines = changed(body, j)
    old, new = "\n".join(old_lines), "\n".join(new_lines)
    assume(old not in text)
    m = em.locate(text, old, new)
    assert m.tier == "indentation" and f"re-indenting by {shift} spaces" in m.detail
    after = m.apply(text)
    want = filler(n_pre, "pre") + [" " * shift + ln for ln in new_lines] + filler(n_post, "post")
    assert after == "\n".join(want) + "\n"
    unchanged_outside(text, after, m)


@settings(max_examples=150, deadline=None)
@given(block(quote="'"), st.integers(0, 5), st.integers(0, 5), st.data())
def test_quote_normalization_keeps_the_files_quotes(body, n_pre, n_post, data):
    assume(any("'" in ln for ln in body))
    text = "\n".join(filler(n_pre, "pre") + body + filler(n_post, "post"))
    old_lines = [ln.replace("'", '"') for ln in body]
    j = data.draw(st.integers(0, len(body) - 1))
    old, new = "\n".join(old_lines), "\n".join(changed(old_lines, j))
    assume(old not in text)
    m = em.locate(text, old, new)
    assert m.tier == "normalized"
    after = m.apply(text)
    assert after == "\n".join(filler(n_pre, "pre") + changed(body, j) + filler(n_post, "post"))  # ' kept


@settings(max_examples=200, deadline=None)
@given(st.lists(code_line(), min_size=3, max_size=25), st.data())
def test_text_outside_the_matched_lines_never_changes(lines, data):
    """Whatever tier matches, only the reported lines change; a refusal changes nothing."""
    text = "\n".join(" " * (4 * (i % 3)) + ln for i, ln in enumerate(lines))
    i = data.draw(st.integers(0, len(lines) - 1))
    k = data.draw(st.integers(1, min(4, len(lines) - i)))
    window = text.split("\n")[i : i + k]
    how = data.draw(st.sampled_from(["trailing", "indent", "quotes", "typo", "spaces"]))
    if how == "trailing":
        old_lines = [ln + "  " for ln in window]
    elif how == "indent":
        old_lines = ["        " + ln for ln in window]
    elif how == "quotes":
        old_lines = [ln.replace("'", "\u2019") for ln in window]
    elif how == "spaces":
        old_lines = [ln.replace(" = ", " =  ") for ln in window]
    else:
        old_lines = [ln.replace("a", "e", 1) for ln in window]
    new_lines = data.draw(st.sampled_from([old_lines, changed(old_lines, 0), old_lines + ["extra = 1"], old_lines[1:] or ["pass"]]))
    old, new = "\n".join(old_lines), "\n".join(new_lines)
    assume(text.count(old) == 0)
    try:
        m = em.locate(text, old, new)
    except em.EditRefused:
        return
    after = m.apply(text)
    unchanged_outside(text, after, m)
    assert text[: m.start] == after[: m.start] and text[m.end :] == after[len(after) - (len(text) - m.end) :]


# ------------------------------------------------------------------------- pure: examples
ELIF = """def sign(x):
    if x > 0:
        return 1
    elif x == 0:
        return 0
    return -1
"""


def test_if_for_elif_changes_only_the_operator():
    """The model wrote ``if`` for the file's ``elif`` in both strings: the operator changes, the
    ``elif`` stays."""
    m = em.locate(ELIF, "    if x == 0:\n        return 0", "    if x != 0:\n        return 0")
    assert m.tier == "similar" and (m.first_line, m.last_line) == (4, 5)
    assert m.apply(ELIF) == ELIF.replace("elif x == 0:", "elif x != 0:")


def test_inserted_lines_are_reindented_to_the_file():
    m = em.locate(ELIF, "if x > 0:\n    return 1", "if x > 0:\n    print(x)\n    return 1")
    assert m.tier == "indentation" and m.detail == "matched after re-indenting by 4 spaces"
    assert "        print(x)\n        return 1\n" in m.apply(ELIF)


def test_trailing_whitespace_and_unicode_punctuation():
    text = "msg = 'it\u2019s ok'  \nvalue = 1\n"
    m = em.locate(text, "msg = 'it's ok'\nvalue = 1", "msg = 'it's fine'\nvalue = 1")
    assert m.tier == "normalized"
    assert m.apply(text) == "msg = 'it\u2019s fine'  \nvalue = 1\n"
    m = em.locate("a = 1   \nb = 2\n", "a = 1\nb = 2", "a = 1\nb = 3")
    assert m.tier == "trailing-whitespace" and m.apply("a = 1   \nb = 2\n") == "a = 1   \nb = 3\n"


def test_one_line_fragment_with_normalized_spaces():
    text = "def f(a, b):\n    return compute(a,  b, 'x')\n"
    m = em.locate(text, 'compute(a, b, "x")', 'compute(b, a, "x")')
    assert m.tier == "normalized" and (m.first_line, m.last_line) == (2, 2)
    assert m.apply(text) == "def f(a, b):\n    return compute(b, a,  'x')\n" or m.apply(text) == "def f(a, b):\n    return compute(b,  a, 'x')\n"


TWINS = """def first(items):
    for item in items:
        total = total + item.value
    return total


def second(items):
    for item in items:
        total = total + item.weight
    return total
"""


def test_ambiguous_windows_are_refused():
    before = TWINS
    with pytest.raises(em.EditRefused, match="ambiguous") as info:
        em.locate(TWINS, "    for item in items:\n        total = total + item.amount", "X")
    assert "lines 2-3" in str(info.value) and "lines 8-9" in str(info.value)
    assert "     2\t    for item in items:" in info.value.closest and "     8\t" in info.value.closest
    assert TWINS == before
    # one clearly better window is not ambiguous
    m = em.locate(TWINS, "    for item in items:\n        total = total + item.val", "    for item in items:\n        total += item.val")
    assert (m.first_line, m.last_line) == (2, 3) and "total += item.value" in m.apply(TWINS)


def test_several_places_in_one_tier_are_refused():
    with pytest.raises(em.EditRefused, match="matches 2 places when indentation is ignored"):
        em.locate(TWINS, "        return total", "        return 0")
    with pytest.raises(em.EditRefused, match=r"matches 2 places when trailing whitespace is ignored \(line 4, line 10\)"):
        em.locate(TWINS, "    return total  ", "    return 0")


def test_weak_match_is_refused_with_the_closest_lines_and_their_numbers():
    with pytest.raises(em.EditRefused, match="similar enough") as info:
        em.locate(TWINS, "def second(things):\n    while queue:\n        pop()", "x")
    closest = info.value.closest
    assert closest.startswith("The closest lines of the file (similarity 0.")
    assert "     7\tdef second(items):" in closest and "     8\t    for item in items:" in closest


def test_transfer_that_cannot_be_placed_is_refused():
    text = "value = compute(alpha, beta, gamma, delta)\n"
    old = "value = compute(alpha, beta, gamma, delta, epsilon)"
    with pytest.raises(em.EditRefused, match="cannot be carried over"):
        em.locate(text, old, "value = compute(alpha, beta, gamma, delta, zeta)")


def test_whitespace_only_old_str_is_refused():
    with pytest.raises(em.EditRefused, match="only whitespace"):
        em.locate("a\n\n b\n", "   \n", "x")


def test_close_paths():
    files = ["calcium/parser.py", "calcium/evaluator.py", "tests/test_parser.py", "README.md"]
    assert em.close_paths("calcium/parsr.py", files)[0] == "calcium/parser.py"
    assert em.close_paths("parser.py", files)[:2] == ["calcium/parser.py", "tests/test_parser.py"]
    assert em.close_paths("zzz/qqq.txt", files) == []
    with pytest.raises(ValueError, match="edit_match must be one of exact, tolerant"):
        em.check_mode("fuzzy")


# --------------------------------------------------------------------- the tool, for real
@pytest.fixture
def exact(ws):
    return ToolRunner(ws)


@pytest.fixture
def tolerant(ws):
    return ToolRunner(ws, edit_match="tolerant")


def _edit(tools, old, new, path="calc/__init__.py"):
    return tools.call("file_editor", {"command": "str_replace", "path": path, "old_str": old, "new_str": new})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_exact_match_behaves_exactly_as_exact_mode(ws, data):
    """A verbatim, unique old_str: same observation, same file, same undo in both modes."""
    base = (ws.path / "calc/__init__.py").read_text()
    lines = base.split("\n")
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(i, min(len(lines), i + 3)))
    old = "\n".join(lines[i:j])
    lo = data.draw(st.integers(0, max(0, len(old) - 1)))
    old = old[lo:] if data.draw(st.booleans()) else old
    assume(old and base.count(old) == 1)
    new = data.draw(st.sampled_from(["", "pass", "return 0\n", old.upper(), old + "\n# more"]))
    results = []
    for mode in ("exact", "tolerant"):
        (ws.path / "calc/__init__.py").write_text(base)
        tools = ToolRunner(ws, edit_match=mode)
        r = _edit(tools, old, new)
        after = (ws.path / "calc/__init__.py").read_text()
        undo = tools.call("file_editor", {"command": "undo_edit", "path": "calc/__init__.py"})
        results.append((r.ok, r.observation, after, undo.ok, (ws.path / "calc/__init__.py").read_text()))
    assert results[0] == results[1]
    assert results[0][0] and results[0][4] == base
    ws.reset()


def test_tolerant_edit_on_the_workspace_names_its_tier(tolerant, ws):
    r = _edit(tolerant, "        return a + b  # bug: should multiply", "        return a * b")
    assert r.ok, r.observation
    assert r.observation.startswith("old_str was not found verbatim in /testbed/calc/__init__.py; "
                                    "matched after re-indenting by -4 spaces")
    assert "(edit tier: indentation, line 9)" in r.observation and "     9\t    return a * b" in r.observation
    assert (ws.path / "calc/__init__.py").read_text().count("    return a * b\n") == 1
    assert tolerant.call("file_editor", {"command": "undo_edit", "path": "calc/__init__.py"}).ok
    assert "# bug: should multiply" in (ws.path / "calc/__init__.py").read_text()


@pytest.mark.parametrize("old, new, tier, fragment", [
    ("def mul(a, b):   \n    return a + b  # bug: should multiply", "def mul(a, b):\n    return a * b",
     "trailing-whitespace", "matched after ignoring trailing whitespace"),
    ('def  mul(a,  b):\n    return a + b  # bug: should multiply', "def mul(a, b):\n    return a * b",
     "normalized", "matched after normalizing quotes, punctuation and spaces"),
    ("def mul(a, b):\n    return a - b  # bug: should multiply", "def mul(a, b):\n    return a * b",
     "similar", "matched the most similar lines (similarity 0.9"),
])
def test_each_tier_is_named(tolerant, ws, old, new, tier, fragment):
    r = _edit(tolerant, old, new)
    assert r.ok, r.observation
    assert fragment in r.observation and f"edit tier: {tier}" in r.observation
    text = (ws.path / "calc/__init__.py").read_text()
    assert "def mul(a, b):\n    return a * b\n" in text and "def add(a, b):\n    return a + b\n" in text


def test_exact_mode_keeps_todays_miss_message(exact, tolerant, ws):
    before = (ws.path / "calc/__init__.py").read_text()
    r = _edit(exact, "        return a + b  # bug: should multiply", "x")
    assert not r.ok and r.observation == "Error: old_str was not found verbatim in /testbed/calc/__init__.py; nothing replaced"
    r = _edit(exact, "return a + b", "x")  # several verbatim: refused the same way in both modes
    r2 = _edit(tolerant, "return a + b", "x")
    assert not r.ok and r.observation == r2.observation and "occurs 2 times" in r.observation
    assert (ws.path / "calc/__init__.py").read_text() == before


def test_weak_match_on_the_workspace_shows_closest_lines(tolerant, ws):
    before = (ws.path / "calc/__init__.py").read_text()
    r = _edit(tolerant, "def mul(x, y):\n    return x + y  # bug", "x")
    assert not r.ok and "not found verbatim" in r.observation and "similar enough" in r.observation
    assert "The closest lines of the file" in r.observation and "     8\tdef mul(a, b):" in r.observation
    assert (ws.path / "calc/__init__.py").read_text() == before


def test_missing_path_gets_did_you_mean(tolerant, exact):
    r = tolerant.call("file_editor", {"command": "view", "path": "calc/__int__.py"})
    assert not r.ok and r.observation.endswith("does not exist. Did you mean: /testbed/calc/__init__.py?")
    r = _edit(tolerant, "x", "y", path="/testbed/init.py")
    assert "Did you mean: /testbed/calc/__init__.py" in r.observation
    r = tolerant.call("search", {"search_term": "x", "path": "test"})
    assert "Did you mean: /testbed/tests/" in r.observation or "does not exist" in r.observation
    r = exact.call("file_editor", {"command": "view", "path": "calc/__int__.py"})
    assert r.observation == "Error: file /testbed/calc/__int__.py does not exist"  # exact mode: as before


def test_unknown_mode_is_refused(ws):
    with pytest.raises(ValueError, match="edit_match must be one of"):
        ToolRunner(ws, edit_match="fuzzy")


# --------------------------------------------------- the setting reaches the tool from configs
IMPRECISE = "        return a + b  # bug: should multiply"  # 4 spaces too deep


def _policy():
    from swetrain.agent.scripted import ScriptedPolicy, TurnScript, replace_call
    from swetrain.policy.tiny import ensure_tiny
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(ensure_tiny()))
    return ScriptedPolicy(tok, TurnScript([replace_call("calc/__init__.py", IMPRECISE, "        return a * b")]))


def _edit_observation(traj) -> str:
    return next(m["content"] for m in traj.messages if m["role"] == "tool")


@pytest.mark.parametrize("mode", ["exact", "tolerant"])
def test_training_config_env_edit_match_reaches_the_tool(task, tmp_path, mode):
    from swetrain.env.verifier import Verifier
    from swetrain.rollout.engine import RolloutEngine
    from swetrain.train.config import load_config

    cfg = load_config("fcswe", overrides=[f"env.edit_match={mode}", "rollout.group=1", "rollout.attempts=2",
                                          "rollout.max_turns=3"])
    assert cfg.env.edit_match == mode
    engine_cfg = cfg.rollout.engine_config(0, edit_match=cfg.env.edit_match)
    assert engine_cfg.edit_match == mode and engine_cfg.chain_runner().edit_match == mode
    report = RolloutEngine(_policy(), Verifier(), config=engine_cfg).run([task], tmp_path / "run")
    from swetrain.rollout.store import TrajectoryStore

    trajs = TrajectoryStore(tmp_path / "run").read_all()
    assert report.chains_done == 1
    obs = _edit_observation(trajs[0])
    if mode == "tolerant":
        assert "matched after re-indenting by -4 spaces" in obs and trajs[0].resolved
    else:
        assert "not found verbatim" in obs and not trajs[0].resolved


def test_quickstart_defaults_to_tolerant_and_exact_stays_the_default_elsewhere():
    from swetrain.eval.protocol import EvalProtocol
    from swetrain.recipes.tiny.quickstart import QUICKSTART_ROLLOUT
    from swetrain.rollout.engine import ChainJobConfig
    from swetrain.train.config import load_config

    assert load_config("fcswe", overrides=list(QUICKSTART_ROLLOUT)).env.edit_match == "tolerant"
    assert load_config("fcswe").env.edit_match == "exact"
    assert ChainJobConfig().edit_match == "exact" and EvalProtocol().edit_match == "exact"
    with pytest.raises(ValueError, match="edit_match"):
        ChainJobConfig(edit_match="fuzzy")


def test_eval_protocol_edit_match_reaches_the_tool(task, tmp_path):
    from swetrain.env.verifier import Verifier
    from swetrain.eval.protocol import EvalProtocol, run_eval
    from swetrain.rollout.store import TrajectoryStore

    protocol = EvalProtocol.build(attempts=1, max_turns=3, edit_match="tolerant")
    record = run_eval(_policy(), [task], tmp_path / "ev", protocol, policy_name="scripted", verifier=Verifier())
    assert record["protocol"]["edit_match"] == "tolerant" and record["resolved_at"][0] == 1.0
    traj = TrajectoryStore(tmp_path / "ev" / "seed-0").read_all()[0]
    assert "matched after re-indenting" in _edit_observation(traj)


def test_cli_flags(task, tmp_path):
    from typer.testing import CliRunner

    from swetrain.cli import app
    from swetrain.env.demo import write_tasks_file

    tasks = write_tasks_file(task, tmp_path / "task" / "tasks.jsonl")
    res = CliRunner().invoke(app, ["rollout", "--tasks", str(tasks), "--policy", "scripted:finish", "--group", "1",
                                   "--attempts", "1", "--out", str(tmp_path / "r"), "--edit-match", "fuzzy"])
    assert res.exit_code == 2 and "--edit-match" in res.output
    res = CliRunner().invoke(app, ["eval", "--tasks", str(tasks), "--split", "", "--policy", "scripted:finish",
                                   "--attempts", "1", "--max-turns", "2", "--out", str(tmp_path / "e"),
                                   "--edit-match", "tolerant"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "e" / "eval.json").read_text())["protocol"]["edit_match"] == "tolerant"
    res = CliRunner().invoke(app, ["eval", "--tasks", str(tasks), "--split", "", "--policy", "scripted:finish",
                                   "--out", str(tmp_path / "e2"), "--edit-match", "fuzzy"])
    assert res.exit_code == 2


def test_smollm2_sft_documented_miss_now_applies():
    """docs/training.md: on ``sensorbuf`` the model wrote ``if self.on and value > self.low:`` (its
    ``el`` dropped, at the method's depth) for the file's ``elif``; the edit now lands on the
    ``elif`` line and changes only the operator."""
    text = ("    def update(self, value):\n        if not self.on and value >= self.high:\n            self.on = True\n"
            "        elif self.on and value > self.low:\n            self.on = False\n        return self.on\n")
    m = em.locate(text, "            if self.on and value > self.low:", "            if self.on and value <= self.low:")
    assert (m.first_line, m.last_line) == (4, 4)
    assert m.apply(text) == text.replace("value > self.low", "value <= self.low")


def test_a_name_is_never_cut_in_two():
    """A normalized one-line old_str inside a longer name is not a match (``x = 1`` in ``max = 1``),
    and a short old_str is never matched by similarity alone."""
    text = "    max = 1\n    total = 2\n"
    with pytest.raises(em.EditRefused, match="similar enough"):
        em.locate(text, "  x = 1", "  x = 5")


def test_long_old_str_with_a_typo_on_every_line_finds_its_place():
    """A window shifted by a line overlaps the best one: the same place misaligned, not a rival
    (before, a 60-line old_str was refused as ambiguous against its own shifted window)."""
    import random

    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "value", "total", "item", "node", "self", "return"]
    lines = [" " * (4 * rng.randint(0, 2)) + " ".join(rng.choice(words) for _ in range(rng.randint(3, 7)))
             for _ in range(1500)]
    text = "\n".join(lines) + "\n"
    old_lines = [line.replace("a", "o", 1) for line in lines[700:760]]
    new_lines = list(old_lines)
    new_lines[30] = "    changed = True"
    m = em.locate(text, "\n".join(old_lines), "\n".join(new_lines))
    assert m.tier == "similar" and (m.first_line, m.last_line) == (701, 760)
    after = m.apply(text).split("\n")
    assert after[:700] == lines[:700] and after[761:] == (lines + [""])[761:]
    assert after[730].strip() == "changed = True" and after[731] == lines[731]


def test_a_changed_line_unlike_the_files_line_is_refused():
    """In a similar window, a line old_str changes must be the file's line (give or take a typo);
    a line the model made up is not edited into whatever line sits there."""
    head = "def summarize(records, threshold):\n    validate_records(records)\n    selected = select_above(records, threshold)\n"
    tail = "    summary = build_summary(selected)\n    return summary\n"
    text = head + "    total = 0\n" + tail
    old = head + "    log.warning(msg)\n" + tail
    with pytest.raises(em.EditRefused, match="cannot be carried over"):
        em.locate(text, old, old.replace("log.warning(msg)", "log.warning(other)"))
    m = em.locate(text, old, old.replace("build_summary", "make_summary"))  # kept lines may differ
    assert m.apply(text) == text.replace("build_summary", "make_summary")


def test_ellipsis_and_dashes_count_as_ascii():
    text = 'msg = "wait\u2026 done \u2013 ok"\nx = 1\n'
    m = em.locate(text, 'msg = "wait... done - ok"\nx = 1', 'msg = "wait... finished - ok"\nx = 1')
    assert m.tier == "normalized" and m.apply(text) == 'msg = "wait\u2026 finished \u2013 ok"\nx = 1\n'
