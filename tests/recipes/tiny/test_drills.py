"""Skill drills: copy targets are really in the observations, and the grep output is grep's."""

from __future__ import annotations

import json
import random
import re
import subprocess

from swetrain.recipes.tiny.drills import Source, drill_sample, grep_output, make_drill, mutate_line
from train_helpers import LIB_OK

CODE = LIB_OK  # the shared test library: line 9 is `        return hi`


def _call(text: str) -> dict:
    return json.loads(text.split("<tool_call>")[1].split("</tool_call>")[0])


def test_grep_output_matches_real_grep(tmp_path):
    (tmp_path / "lib.py").write_text(CODE)
    for fn in ("clamp", "total"):
        real = subprocess.run(["grep", "-n", "-A", "20", f"def {fn}(", "lib.py"], cwd=tmp_path, capture_output=True, text=True)
        assert grep_output(CODE, "lib.py", fn) == real.stdout + "[exit code: 0]"


def test_tree_grep_output_matches_the_real_recursive_grep(tmp_path):
    """The tree form (scripted_repair.grep_cmd(tree=True)) run by bash over a package with tests."""
    from swetrain.agent.scripted_repair import grep_cmd

    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "lib.py").write_text(CODE)
    (tmp_path / "tests" / "test_lib.py").write_text("def clamp(x):\n    return x\n")  # excluded
    for fn in ("clamp", "total"):
        cmd = grep_cmd("pkg/lib.py", fn, tree=True)
        real = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, capture_output=True, text=True)
        assert real.stdout.startswith(f"pkg/lib.py:")
        assert grep_output(CODE, "pkg/lib.py", fn, tree=True) == real.stdout + "[exit code: 0]"


def test_tree_edit_drill_edits_the_path_printed_on_its_line():
    rng = random.Random(5)
    made = 0
    for _ in range(100):
        msgs = make_drill(rng, [Source("pkg/lib.py", CODE)], {}, "edit", tree=True)
        if msgs is None:
            continue
        made += 1
        assert "-rn" in _call(msgs[3]["content"])["arguments"]["cmd"].split()
        edit = _call(msgs[5]["content"])["arguments"]
        on_line = [x for x in msgs[4]["content"].splitlines() if edit["old_str"] in x]
        assert on_line and all(x.startswith(edit["path"] + "-") or x.startswith(edit["path"] + ":") for x in on_line)
    assert made > 10


def test_renamed_drill_uses_made_up_names_consistently():
    """rename=True: the path exists only in the drill's own context (traceback, grep), never in the sources."""
    rng = random.Random(7)
    made = 0
    for _ in range(100):
        msgs = make_drill(rng, [Source("pkg/lib.py", CODE)], {}, "edit", tree=True, rename=True)
        if msgs is None:
            continue
        made += 1
        path = _call(msgs[5]["content"])["arguments"]["path"]
        assert path != "pkg/lib.py" and "pkg" not in path.split("/") and path.endswith(".py")
        assert f"{path}:" in msgs[2]["content"] and msgs[4]["content"].startswith(f"{path}:")
        assert path.removesuffix(".py").replace("/", ".") in msgs[0]["content"]  # the module
    assert made > 10


def test_mutate_line_changes_one_spot_and_skips_non_code():
    rng = random.Random(0)
    for line in ("    if x < lo:", "    return a + b", "    ok = flag and other"):
        out = mutate_line(line, rng)
        assert out is not None and out != line and len(out.split()) >= len(line.split()) - 1
    assert mutate_line("    # if x < lo:", rng) is None
    assert mutate_line("def f(a, b=1):", rng) is None
    assert mutate_line("    pass", rng) is None


def test_edit_drill_targets_the_cited_line_and_restores_it():
    rng = random.Random(3)
    src = Source("pkg/lib.py", CODE)
    made = 0
    for _ in range(200):
        msgs = make_drill(rng, [src], {"pkg/lib.py": {9}}, "edit")  # line 9 (`return hi`) is blocked
        if msgs is None:
            continue
        made += 1
        failure, grep, edit = msgs[2]["content"], msgs[4]["content"], _call(msgs[5]["content"])["arguments"]
        cited = [int(n) for p, n in re.findall(r"^(\S+\.py):(\d+): in ", failure, re.M) if p == "pkg/lib.py"]
        shown = grep.splitlines()[cited[-1] - int(grep.split(":", 1)[0])].split("-", 1)[1]  # the cited line
        # the minimal unique edit: a span of the cited line, unique in the file, restoring it
        assert edit["old_str"] in shown and len(edit["old_str"]) < len(shown.strip())
        lines = CODE.splitlines()
        buggy = "\n".join(lines[: cited[-1] - 1] + [shown] + lines[cited[-1]:]) + "\n"
        assert buggy.count(edit["old_str"]) == 1  # unique in the whole (mutated) file
        assert shown.replace(edit["old_str"], edit["new_str"]) == CODE.splitlines()[cited[-1] - 1]
        assert cited[-1] != 9
        fn = re.search(r'def (\w+)\(', _call(msgs[3]["content"])["arguments"]["cmd"]).group(1)
        assert f"in {fn}\n" in failure + "\n"
    assert made > 20


def test_drill_sample_masks_only_the_calls(tokenizer):
    from swetrain.agent.format import ChatFormat

    fmt = ChatFormat(tokenizer)
    rng = random.Random(1)
    msgs = None
    while msgs is None:
        msgs = make_drill(rng, [Source("pkg/lib.py", CODE)], {}, "locate")
    sample = drill_sample(msgs, fmt)
    learned = [t for t, m in zip(sample.token_ids, sample.loss_mask) if m]
    expected = []
    for m in msgs[1:]:
        if m["role"] == "assistant":
            expected += fmt.encode(m["content"]) + [fmt.eot_id]
    assert learned == expected
    assert "# Tools" not in tokenizer.decode(sample.token_ids)  # no system prompt: drills stay short
