"""The whole pipeline for real (rollouts, sandboxes, verifier, updates, evaluation) on the smallest
budget, killed with SIGKILL in the middle of a phase and resumed; a third run finishes at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

TINY = [
    "pool.routes=[A, B]", "pool.train_per_route=1", "pool.eval_per_route=1", "mastery.rollouts=1",
    "experts.rounds=1", "experts.final_repair=true", "experts.max_rl_tasks=1", "experts.expand_extra=0", "experts.rl.steps=1",
    "experts.rl.tasks_per_step=1", "experts.rl.group=1", "mopd.steps=1", "mopd.tasks_per_step=2",
    "baselines.enabled=true", "baselines.steps=1", "baselines.tasks_per_step=1", "baselines.group=1",
    "sampling.max_turns=2", "sampling.max_new_tokens=32", "sampling.workers=2", "eval.bootstrap=200",
]


def _run(out, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    cmd = [sys.executable, "-m", "swetrain.cli", "experts", "--preset", "smoke", "--out", str(out), *TINY]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)


def _markers(out):
    return {str(p.parent.relative_to(out)): json.loads(p.read_text())["finished"]
            for p in out.rglob("phase.json") if ".tmp" not in p.parts}


def _rows(run_dir):
    from swetrain.rollout.store import TrajectoryStore

    return TrajectoryStore(run_dir).count()


@pytest.mark.slow
def test_pipeline_killed_and_resumed(tmp_path):
    out = tmp_path / "exp"
    # 1. killed (SIGKILL) right after the first RL phase's rollouts (baselines/pooled)
    r = _run(out, {"SWETRAIN_FAULT": "kill_after_rollout@1"})
    assert r.returncode == -9, r.stderr[-2000:]
    assert (out / "label" / "phase.json").is_file()
    assert not (out / "baselines" / "pooled").exists()  # the killed phase left nothing in place
    leftovers = list((out / ".tmp").iterdir())
    assert len(leftovers) == 1 and _rows(leftovers[0] / "run") == 1
    label_done = _markers(out)["label"]
    # 2. resumed: the label phase is skipped, the killed phase re-runs from its start
    r = _run(out)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "[skip] label" in r.stderr and "[run]  baselines/pooled" in r.stderr
    done = _markers(out)
    assert done["label"] == label_done
    assert not list((out / ".tmp").iterdir())
    assert _rows(out / "baselines" / "pooled" / "run") == 1  # 1 step x 1 task x 1 chain: stored once
    for route in ("A", "B"):
        for phase in ("base-mastery", "r0-rl", "r1-refresh-rl", "r1-sft", "r1-refresh-sft", "r1-expand", "r1-rl",
                      "r2-refresh-rl", "r2-sft", "r2-refresh-sft"):  # r2: the final repair
            assert f"experts/{route}/{phase}" in done
        assert f"experts/{route}/r2-expand" not in done
        assert (out / "experts" / route / "r1-rl" / "model" / "config.json").is_file()
        sft = json.loads((out / "experts" / route / "r1-refresh-sft" / "phase.json").read_text())
        assert set(sft["paired_rl_to_sft"]) == {"improved", "unchanged", "regressed"}
    mopd = [json.loads(x) for x in (out / "mopd" / "run" / "metrics.jsonl").read_text().splitlines()]
    assert "mopd/student_teacher_k1" in mopd[0] and "reward/mean" in mopd[0]
    assert mopd[0]["mopd/frozen_forwards"] == 3.0
    rep = json.loads((out / "report.json").read_text())
    assert rep["routes"] == ["A", "B"]
    assert set(rep["models"]) == {"base", "pooled", "balanced", "expert_A", "expert_B", "routed_experts", "mopd"}
    for m in rep["models"].values():
        assert set(m) == {"per_task", "by_route", "full"} and 0.0 <= m["full"] <= 1.0
    assert {"gains", "g_sim", "ssg", "recovery"} <= set(rep["metrics"]["mopd"])
    assert (out / "report.md").is_file() and (out / "per_route.png").is_file()
    # 3. a finished pipeline finishes at once, writing nothing new
    t0 = time.monotonic()
    r = _run(out)
    assert r.returncode == 0 and "[run]" not in r.stderr
    assert _markers(out) == done and time.monotonic() - t0 < 60
