"""The scripted repair baseline as a policy: real workspaces, sandbox, pytest and verifier."""

from __future__ import annotations

import json

import pytest
import sys
from pathlib import Path

from typer.testing import CliRunner

from swetrain.agent.scripted_repair_policy import candidate_fixes, failed_patch_lines, shown_functions, target_names
from swetrain.cli import app
from swetrain.tasks.record import save_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
from train_helpers import make_bug_task  # noqa: E402

GREP = """@@ clamp
./lib.py:3:def clamp(x, lo, hi):
./lib.py-4-    if x < lo:
./lib.py-5-        return lo
./lib.py-6-    if x < hi:
./lib.py-7-        return hi
./lib.py-8-    return x
./lib.py-9-
./lib.py-10-def total(xs):
"""


def test_parsing_helpers():
    assert target_names("lib.py:6: in clamp\n    foo(bar)", "`lib.clamp` breaks")[:2] == ["clamp", "foo"]
    [(path, lines)] = shown_functions(GREP)
    assert path == "lib.py" and [n for n, _ in lines] == [3, 4, 5, 6, 7, 8, 9]
    fixes = candidate_fixes(shown_functions(GREP))
    assert ("lib.py", "    if x < hi:", "    if x >= hi:") in fixes and len(fixes) >= 4
    ctx = "## Previous attempt\nblah\n```diff\n--- a/lib.py\n+++ b/lib.py\n-    if x < hi:\n+    if x > hi:\n```"
    assert failed_patch_lines(ctx) == {"if x > hi:"}


@pytest.mark.slow
def test_eval_scripted_repair_end_to_end(tmp_path):
    task = make_bug_task(tmp_path / "bug", "flip")
    tasks_file = tmp_path / "bug" / "tasks.jsonl"
    save_tasks([task.model_copy(update={"source": str(tmp_path / "bug" / "repo")})], tasks_file)
    out = tmp_path / "eval"
    res = CliRunner().invoke(app, ["eval", "--policy", "scripted-repair", "--tasks", str(tasks_file), "--split", "",
                                   "--out", str(out), "--attempts", "4", "--seeds", "0,1", "--json"])
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "eval.json").read_text())
    assert rec["seeds"] == [0, 1] and rec["tasks"] == [task.instance_id] and rec["attempts"] == 4
    curve = rec["resolved_at"]
    assert all(a <= b for a, b in zip(curve, curve[1:])) and curve[-1] > 0
    for seed in ("0", "1"):
        row = rec["outcomes"][seed][task.instance_id]
        ran = [v for v in row if v is not None]
        assert len(rec["tokens"][seed][task.instance_id]) == len(ran) and all(t > 0 for t in rec["tokens"][seed][task.instance_id])
        assert row[len(ran):] == [None] * (4 - len(ran))
    from swetrain.rollout.store import TrajectoryStore

    trajs = TrajectoryStore(out / "seed-0").read_all()
    patches = [t.patch for t in trajs if t.patch]
    assert len(set(patches)) == len(patches)  # feedback: a failed patch is never submitted again right after
