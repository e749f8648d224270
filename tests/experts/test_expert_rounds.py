"""The RRE glue of one expert with fake rollouts (mastery, RL) and a real Repair SFT: frontier
selection, RL history as evidence, replay quotas from verified successes, paired counts, expand,
final repair, stage scores."""

from __future__ import annotations

import json

from swetrain.env.verdict import Verdict
from swetrain.experts.config import load_experts_config
from swetrain.experts.pipeline import ExpertsPipeline

from train_helpers import TOOLS, fix_turns, make_trajectory


def test_expert_rounds_with_fake_rollouts_and_real_sft(tmp_path, monkeypatch, tiny_path, tokenizer):
    import swetrain.train.rl as rl
    from swetrain.rollout.store import TrajectoryStore

    cfg = load_experts_config(preset="smoke", overrides=[
        "pool.routes=[A]", "pool.train_per_route=4", "experts.max_rl_tasks=2", "experts.expand_extra=1",
        "experts.final_repair=true", "experts.sft.budget=3", "experts.sft.epochs=1", f"policy={tiny_path}"])
    p = ExpertsPipeline(cfg, tmp_path / "run", log=lambda m: None)
    p.phases.run("label", p.phase_label)
    pool = [t.instance_id for t in p.pool("A")]
    solved = {pool[0]}  # the instance every fake rollout solves half of the time
    trained_on = []

    def estimate(model, tasks, mastery, phase, out_dir):
        for t in tasks:
            mastery.refresh(t.instance_id, 2, 1 if t.instance_id in solved else 0, phase)
        return {"skipped": {}}

    class FakeTrainer:
        def __init__(self, config, run_dir, tasks=None, policy_path=None, **kw):
            self.run_dir, self.tasks, self.config = run_dir, tasks, config
            trained_on.append([t.instance_id for t in tasks])

        def train(self):
            d = self.run_dir / "checkpoints" / "step-00000001" / "model"
            d.parent.mkdir(parents=True)
            import shutil

            shutil.copytree(tiny_path, d)
            trajs = []
            for t in self.tasks:
                tr = make_trajectory(tokenizer, TOOLS, t.instance_id, fix_turns("return a < b"),
                                     resolved=t.instance_id in solved)
                tr.verdict = Verdict(instance_id=t.instance_id, resolved=tr.resolved)
                trajs.append(tr)
            TrajectoryStore(self.run_dir).append(trajs)
            (self.run_dir / "metrics.jsonl").write_text(json.dumps({"step": 1}) + "\n")

    monkeypatch.setattr(rl, "RLTrainer", FakeTrainer)
    monkeypatch.setattr(p, "estimate", estimate)
    monkeypatch.setattr(p, "evaluate", lambda model, tasks, out: {t.instance_id: 0.5 for t in tasks})
    expert = p.expert("A")
    root = tmp_path / "run" / "experts" / "A"
    info = lambda name: json.loads((root / name / "phase.json").read_text())  # noqa: E731
    r0 = info("r0-rl")
    assert r0["fallback"] is False and r0["tasks"] == [pool[0]]  # the frontier: the one 0 < p < 1 instance
    assert info("r1-refresh-rl")["summary"]["ever_solved"] == 1  # H(x): the base estimate and the RL history
    sft = info("r1-sft")
    assert sft["samples"] == 3 and sft["distinct"] == 1 and sft["model"] == "experts/A/r1-sft/model"  # cycled to the budget
    assert (root / "r1-sft" / "model" / "config.json").is_file()
    assert set(info("r1-refresh-sft")["paired_rl_to_sft"]) == {"improved", "unchanged", "regressed"}
    exp = info("r1-expand")
    assert len(exp["refresh_pool"]) == 2 and exp["next_rl_set"] == [pool[0]]
    assert info("r2-sft")["samples"] == 3 and expert == "experts/A/r2-sft/model"  # final repair: the expert
    assert not (root / "r2-expand").exists()
    stages = [s["stage"] for s in p.stage_scores("A")]
    assert stages == ["initial RL", "repair SFT 1", "expanded RL 1", "repair SFT 2"]
    # a second call skips every phase
    n = len(trained_on)
    assert p.expert("A") == expert and len(trained_on) == n
