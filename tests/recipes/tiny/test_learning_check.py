"""The learning check (RL's CartPole): real workspace, tools, verifier, SFT'd tiny base and FC-SWE
trainer; training must raise success on the tasks it trained on, with the learner's log-probs
lining up with the rollout's token for token (docs/training.md, "The learning check")."""

from __future__ import annotations

import subprocess

import pytest

from swetrain.recipes.tiny import learning_check


def test_tasks_fail_before_and_pass_with_gold(tmp_path):
    from swetrain.env.verifier import Verifier

    tasks = learning_check.make_tasks(tmp_path, 3, seed=1)
    assert len({t.instance_id for t in tasks}) == 3
    verifier = Verifier()
    for task in tasks:
        flags = subprocess.run(["git", "-C", str(task.source_path()), "show", f"{task.base_commit}:flags.py"],
                               check=True, capture_output=True, text=True).stdout
        assert flags.count("False") == 1  # the scripted edit's old_str is unique
        assert verifier.verify(task, task.patch).resolved
        assert not verifier.verify(task, task.patch.replace("= True", "= None")).resolved
        assert not verifier.verify(task, task.patch.replace("= True", "= 1")).resolved


def test_bad_sizes_are_refused(tmp_path):
    with pytest.raises(ValueError, match="n must be in 1.."):
        learning_check.make_tasks(tmp_path, 0)
    with pytest.raises(ValueError, match="n must be in 1.."):
        learning_check.make_tasks(tmp_path, len(learning_check.FLAGS) + 1)


@pytest.mark.slow
def test_rl_raises_success_on_the_trained_tasks(tmp_path):
    s = learning_check.run(tmp_path)
    # the scripted base picks the right value one time in three: the check starts in the regime
    assert 0.1 <= s["before"] <= 0.6, s
    # FC-SWE steps on these tasks raise single-attempt success on them (fresh decoding seeds)
    assert s["after"] - s["before"] >= 0.25, s
    assert s["paired"]["ci_low"] > 0, s
    # before the update moves the weights, the learner scores exactly the tokens the rollout sampled
    # (temperature 1): a loss mask or log-prob shifted by one token breaks this
    assert s["logprob_abs_diff"] and max(s["logprob_abs_diff"]) < 1e-3, s
    assert (tmp_path / "summary.json").is_file()
    assert (tmp_path / "rl" / "metrics.jsonl").is_file()
