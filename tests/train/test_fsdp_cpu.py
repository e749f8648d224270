"""The FSDP path on CPU: two processes on loopback (gloo) run the same training code as a GPU
cluster would. Ranks hold different numbers of rows (so different numbers of forward passes),
yet the sharded update must equal the single-process update on all rows, and ``swetrain train``
must run, checkpoint and resume with per-rank trajectory stores."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(args: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SWETRAIN_TORCH_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", str(_free_port()), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=HERE)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["fcswe", "grpo"])
def test_sharded_update_equals_single_process(recipe, tmp_path):
    single = subprocess.run([sys.executable, str(HERE / "fsdp_worker.py"), str(tmp_path / "single"), "single", recipe],
                            capture_output=True, text=True, timeout=300, cwd=HERE)
    assert single.returncode == 0, single.stderr[-3000:]
    res = _torchrun([str(HERE / "fsdp_worker.py"), str(tmp_path / "fsdp"), "fsdp", recipe], timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    from transformers import AutoModelForCausalLM

    from swetrain.policy.tiny import ensure_tiny

    a = torch.load(tmp_path / "single" / "state.pt")
    b = torch.load(tmp_path / "fsdp" / "state.pt")
    assert a.keys() == b.keys()
    for key in a:
        assert torch.allclose(a[key], b[key], atol=2e-5), key
    before = AutoModelForCausalLM.from_pretrained(ensure_tiny(), dtype=torch.float32).state_dict()
    moved = max(float((a[k] - before[k]).abs().max()) for k in a if k in before)
    assert moved > 1e-3  # the update is not a no-op
    metrics = json.loads((tmp_path / "fsdp" / "metrics.json").read_text())
    assert metrics["update/optimizer_steps"] == 2


@pytest.mark.slow
def test_train_cli_fsdp_runs_checkpoints_and_resumes(tmp_path):
    from swetrain.policy.tiny import ensure_tiny

    run = tmp_path / "run"
    common = ["-m", "swetrain.cli", "train", "--recipe", "fcswe", "--out", str(run), f"policy={ensure_tiny()}",
              "train.fsdp=on", "rollout.tasks_per_step=3", "rollout.group=2", "rollout.max_turns=2",
              "rollout.max_new_tokens=12", "rollout.workers=1", "optim.micro_batch_tokens=1024",
              "logging.progress=false", "logging.tensorboard=false", "train.save_every=1"]
    res = _torchrun([*common, "train.steps=2"])
    assert res.returncode == 0, res.stderr[-4000:]
    state = json.loads((run / "checkpoints" / "step-00000002" / "state.json").read_text())
    from swetrain.rollout.store import TrajectoryStore

    counts = [TrajectoryStore(run / f"rank-{r}").count() for r in (0, 1)]
    assert state["store_offsets"] == counts and counts[0] > counts[1] > 0  # 2 tasks vs 1 per step
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 2
    optim = torch.load(run / "checkpoints" / "step-00000002" / "optimizer.pt", weights_only=False)
    assert optim["state"] and all(isinstance(k, str) for k in optim["state"])  # full, keyed by name

    res = _torchrun([*common, "train.steps=3", "--resume"])
    assert res.returncode == 0, res.stderr[-4000:]
    assert json.loads((run / "checkpoints" / "latest.json").read_text())["step"] == 3
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 3
