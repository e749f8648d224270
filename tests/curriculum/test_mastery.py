"""Mastery maps: estimates, refresh semantics, H(x) evidence, storage and bad input."""

from __future__ import annotations

import json

import pytest

from swetrain.agent.trajectory import Trajectory
from swetrain.curriculum.mastery import (
    Estimate,
    MasteryError,
    MasteryMap,
    regressions,
    rollout_counts,
    solved_instances,
    update_from_trajectories,
)
from swetrain.env.verdict import Verdict


def traj(iid: str, resolved: bool, attempt: int = 1, infra: bool = False, verdict: bool = True) -> Trajectory:
    v = Verdict(instance_id=iid, resolved=resolved, infra_failure=infra) if verdict else None
    return Trajectory(instance_id=iid, attempt=attempt, resolved=resolved, verdict=v)


def test_counts_use_verified_first_attempts_only():
    trajs = [traj("a", True), traj("a", False), traj("a", True, attempt=2), traj("a", False, infra=True),
             traj("b", False), traj("b", False, verdict=False), traj("c", False, attempt=2)]
    assert rollout_counts(trajs) == {"a": (2, 1), "b": (1, 0)}
    assert rollout_counts(trajs, independent_only=False) == {"a": (3, 2), "b": (1, 0), "c": (1, 0)}
    assert solved_instances(trajs + [traj("d", True, attempt=2)]) == {"a", "d"}


def test_refresh_replaces_estimate_and_keeps_history_and_evidence():
    m = MasteryMap(policy="p")
    m.refresh("x", 4, 2, "base")
    assert m.p_hat("x") == 0.5 and m.instances["x"].ever_solved
    m.refresh("x", 4, 0, "rl-1")  # the post-RL map replaces the pre-RL one ...
    rec = m.instances["x"]
    assert m.p_hat("x") == 0.0 and rec.current.phase == "rl-1"
    assert [h.phase for h in rec.history] == ["base"] and rec.estimate_of("base").p_hat == 0.5
    assert rec.ever_solved  # ... but H(x) survives: a success was verified once
    assert m.p_hat("unknown") is None
    m.refresh("x", 2, 2, "rl-1")  # another round of the same phase adds to its estimate
    assert (rec.current.rollouts, rec.current.successes, len(rec.history)) == (6, 2, 1)
    with pytest.raises(MasteryError, match="successes <= rollouts"):
        m.refresh("y", 2, 3, "base")
    with pytest.raises(MasteryError, match="1 <= rollouts"):
        Estimate("base", 0, 0)


def test_update_from_trajectories_refresh_and_evidence_only():
    m = MasteryMap()
    out = update_from_trajectories(m, [traj("a", False), traj("a", True), traj("b", False)], "base")
    assert out == {"refreshed": 2, "new_evidence": 1}
    assert (m.p_hat("a"), m.p_hat("b")) == (0.5, 0.0)
    # an RL run's history: a recovery attempt solved b, which is evidence, not an estimate
    out = update_from_trajectories(m, [traj("b", False), traj("b", True, attempt=2)], "rl-1", refresh=False)
    assert out == {"refreshed": 0, "new_evidence": 1}
    assert m.p_hat("b") == 0.0 and m.instances["b"].ever_solved and m.instances["b"].current.phase == "base"


def test_regressions_pair_matched_instances():
    m = MasteryMap()
    for iid, before, after in [("up", 0, 2), ("same", 1, 1), ("down", 2, 0)]:
        m.refresh(iid, 2, before, "base")
        m.refresh(iid, 2, after, "rl-1")
    m.refresh("new", 2, 1, "rl-1")  # no base estimate: not matched
    assert regressions(m, "base", "rl-1") == {"improved": ["up"], "unchanged": ["same"], "regressed": ["down"]}


def test_save_load_roundtrip_and_summary(tmp_path):
    m = MasteryMap(policy="smollm2-sft")
    m.refresh("a", 4, 1, "base")
    m.refresh("b", 4, 4, "base")
    m.refresh("c", 4, 0, "base")
    m.add_success_evidence(["c", "d"])
    path = m.save(tmp_path / "sub" / "mastery.json")
    back = MasteryMap.load(path)
    assert back.to_dict() == m.to_dict() and back.policy == "smollm2-sft"
    s = back.summary()
    assert (s["instances"], s["estimated"], s["zero"], s["frontier"], s["saturated"], s["ever_solved"]) == (4, 3, 1, 1, 1, 4)
    assert s["mean_pass_rate"] == pytest.approx((0.25 + 1 + 0) / 3)
    assert not list(path.parent.glob(".*tmp*"))  # atomic write leaves no temp file


@pytest.mark.parametrize(
    "content, match",
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"format": "other"}), "not a mastery map"),
        (json.dumps({"format": "swetrain-mastery", "version": 99, "instances": {}}), "version 99"),
        (json.dumps({"format": "swetrain-mastery", "version": 1, "instances": []}), "'instances' must be"),
        (json.dumps({"format": "swetrain-mastery", "version": 1,
                     "instances": {"t1": {"current": {"phase": "base", "rollouts": 2, "successes": 5}}}}), "instance 't1'"),
        (json.dumps({"format": "swetrain-mastery", "version": 1,
                     "instances": {"t2": {"current": {"phase": "base", "n": 2}}}}), "instance 't2'"),
    ],
)
def test_malformed_files_name_file_and_problem(tmp_path, content, match):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(MasteryError, match=match) as info:
        MasteryMap.load(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(MasteryError, match="does not exist"):
        MasteryMap.load(tmp_path / "nope.json")


def test_estimate_mastery_samples_with_the_given_top_p_and_top_k(tmp_path):
    """Issue 34's bug: mastery estimates ignored top-p / top-k (the paper preset's 0.95 / 20)."""
    from swetrain.agent.scripted import ScriptedPolicy, TurnScript, load_tokenizer
    from swetrain.curriculum.mastery import estimate_mastery
    from swetrain.policy.tiny import ensure_tiny
    from swetrain.rollout.sampling import SamplingConfig
    from swetrain.tasks.builtin import load_builtin

    seen = []

    class Recording(ScriptedPolicy):
        def generate(self, prompts, config):
            seen.append((config.top_p, config.top_k, config.temperature))
            return super().generate(prompts, config)

    policy = Recording(load_tokenizer(str(ensure_tiny())), TurnScript([]))
    task = sorted(load_builtin(split="train"), key=lambda t: t.instance_id)[0]
    sampling = SamplingConfig(max_turns=1, temperature=1.0, top_p=0.95, top_k=20)
    estimate_mastery(policy, [task], tmp_path / "m", MasteryMap(policy="x"), phase="base", rollouts=1, sampling=sampling)
    assert seen and set(seen) == {(0.95, 20, 1.0)}

    # the experts pipeline's estimates sample with its sampling section (the paper preset: 0.95 / 20)
    from swetrain.experts.config import load_experts_config
    from swetrain.experts.pipeline import ExpertsPipeline

    seen.clear()
    cfg = load_experts_config(preset="paper", overrides=["sampling.max_turns=1", "sampling.workers=1"])
    pipeline = ExpertsPipeline(cfg, tmp_path / "experts")
    pipeline._policy = lambda model: policy
    pipeline.estimate(tmp_path, [task], MasteryMap(policy="x"), "base", tmp_path / "e")
    assert seen and set(seen) == {(0.95, 20, 1.0)}
