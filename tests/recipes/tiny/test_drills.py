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
