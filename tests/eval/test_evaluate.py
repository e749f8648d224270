"""The evaluation runner on a real task: scripted policies with known outcomes give exact metrics."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from swetrain.eval.evaluate import evaluate_policy
from swetrain.eval.metrics import outcome_matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
from train_helpers import make_bug_task  # noqa: E402


class _T:
    def __init__(self, iid, chain, attempt, resolved):
        self.instance_id, self.chain, self.attempt, self.resolved = iid, chain, attempt, resolved


def test_outcome_matrix():
    trajs = [_T("a", 0, 1, False), _T("a", 0, 2, True), _T("b", 0, 1, True), _T("b", 1, 1, False)]
    y, tasks = outcome_matrix(trajs, ["a", "b"], attempts=2, samples=2)
    assert tasks == ["a", "b"]
    assert y.shape == (2, 2, 2)
    assert y[0].tolist()[0] == [0.0, 1.0] and y[0, 1, 0] == 1.0 and math.isnan(y[0, 1, 1])
    assert y[1, 1, 0] == 0.0 and np.isnan(y[1, 0]).all()


@pytest.mark.slow
def test_evaluate_scripted_policies(tmp_path):
    from transformers import AutoTokenizer

    from swetrain.agent.scripted import ScriptedPolicy, TurnScript
    from swetrain.agent.scripted_repair import RepairPlan, demo_messages
    from swetrain.policy.tiny import ensure_tiny

    tok = AutoTokenizer.from_pretrained(ensure_tiny())
    task = make_bug_task(tmp_path / "index", "index")
    plan = RepairPlan(path="lib.py", line=23, old="    return items[-2]", new="    return items[-1]", function="last")
    good = ScriptedPolicy(tok, TurnScript(demo_messages(plan)))
    res = evaluate_policy(good, [task], tmp_path / "good", attempts=2, max_turns=6, max_new_tokens=256)
    assert (res.resolved_at_1, res.resolved_at_2, res.n_first_failed) == (1.0, 1.0, 0)

    # submits without editing: both attempts fail -> R@1 = R@2 = 0, recovery 0 of 1
    lazy = ScriptedPolicy(tok, TurnScript([demo_messages(plan)[-1]]))
    res = evaluate_policy(lazy, [task], tmp_path / "lazy", attempts=2, max_turns=6, max_new_tokens=256)
    assert (res.resolved_at_1, res.resolved_at_2, res.conditional_recovery, res.n_first_failed) == (0.0, 0.0, 0.0, 1)
    assert res.per_task[task.instance_id] == [[0.0, 0.0]]
