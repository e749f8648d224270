"""Resume after a real kill -9: same weights, same metrics, no lost or duplicated trajectories."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

from swetrain.tasks import save_tasks
from train_helpers import make_bug_task

pytestmark = pytest.mark.slow

ARGS = [
    "train.steps=2",
    "train.save_every=1",
    "rollout.tasks_per_step=2",
    "rollout.group=2",
    "rollout.max_turns=2",
    "rollout.max_new_tokens=12",
    "optim.lr=0.001",
    "logging.progress=false",
    "logging.tensorboard=true",
]


def _train(out, tasks_file, *extra, fault=None):
    env = {**os.environ, "SWETRAIN_TORCH_THREADS": "1"}
    env.pop("SWETRAIN_FAULT", None)
    if fault:
        env["SWETRAIN_FAULT"] = fault
    cmd = [sys.executable, "-m", "swetrain.cli", "train", "--recipe", "fcswe", "--out", str(out), *extra,
           f"tasks.source={tasks_file}", *ARGS]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def _rows(run):
    df = pd.read_parquet(run / "trajectories")
    return [(r.instance_id, r.chain, r.attempt, tuple(r.token_ids)) for r in df.itertuples()]


def _weights(run):
    step = json.loads((run / "checkpoints" / "latest.json").read_text())["path"]
    return load_file(str(run / "checkpoints" / step / "model" / "model.safetensors"))


def test_kill_and_resume_is_equivalent(tmp_path):
    tasks = [make_bug_task(tmp_path / b, b) for b in ("flip", "arith", "index")]
    for t in tasks:
        t.source = str(t.source_path())
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks(tasks, tasks_file)

    straight = tmp_path / "straight"
    res = _train(straight, tasks_file)
    assert res.returncode == 0, res.stderr[-3000:]

    killed = tmp_path / "killed"
    res = _train(killed, tasks_file, fault="kill_after_rollout@2")
    assert res.returncode == -signal.SIGKILL, (res.returncode, res.stderr[-3000:])
    # step 2's rollouts reached the store before the kill; the checkpoint is still step 1
    assert json.loads((killed / "checkpoints" / "latest.json").read_text())["step"] == 1
    n_before = len(_rows(killed))
    assert n_before > 0

    res = _train(killed, tasks_file, "--resume")
    assert res.returncode == 0, res.stderr[-3000:]

    # trajectories: exactly the straight run's rows, in order (step 2's are not duplicated)
    assert _rows(killed) == _rows(straight)
    # metrics: one line per step, identical numbers except wall times
    ms = [json.loads(x) for x in (straight / "metrics.jsonl").read_text().splitlines()]
    mk = [json.loads(x) for x in (killed / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in mk] == [1, 2]
    for a, b in zip(ms, mk):
        for key in a:
            if not key.startswith("time/") and key != "policy_version":
                assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-7), key
    # weights: identical
    wa, wb = _weights(straight), _weights(killed)
    assert wa.keys() == wb.keys()
    for k in wa:
        assert torch.allclose(wa[k], wb[k], atol=1e-6), k


def test_refuses_to_overwrite_without_resume(tmp_path):
    tasks = [make_bug_task(tmp_path / "flip", "flip")]
    tasks[0].source = str(tasks[0].source_path())
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks(tasks, tasks_file)
    out = tmp_path / "run"
    (out).mkdir()
    (out / "metrics.jsonl").write_text("")
    res = _train(out, tasks_file)
    text = " ".join((res.stderr + res.stdout).split())
    assert res.returncode == 2 and "already holds a run" in text
