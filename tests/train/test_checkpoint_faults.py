"""Training faults, caused for real: the disk filling up while a checkpoint is written (a real small
tmpfs), truncated / corrupt trajectory parts met by ``--resume``, and infra failures kept out of the
RL batch. See docs/training.md, "Faults".
"""

from __future__ import annotations

import errno
import shutil
from collections import Counter
from pathlib import Path

import pytest
import torch

from swetrain.rollout.store import DiskFullError, StoreError, TrajectoryStore
from swetrain.train import checkpoint as ckpt
from train_helpers import TOOLS, fix_turns, make_trajectory


# ---------------------------------------------------------------------- (c) disk full
@pytest.mark.slow  # ~5 s idle, but 3 x 33 MB written and a model loaded twice: > 10 s on a busy machine
def test_disk_full_during_a_checkpoint_keeps_the_last_one_loadable(tiny_path, tokenizer, tmp_path, tmpfs):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_once():
        ids = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
        opt.zero_grad()
        model(input_ids=ids, labels=ids).loss.backward()
        opt.step()

    train_once()  # the optimizer now has state: a checkpoint is the weights, 2x their size, a tokenizer
    size = 3 * sum(p.numel() * p.element_size() for p in model.parameters()) + (1 << 20)
    fs = tmpfs(f"{int(size * 1.5) // 1024}k")  # room for one checkpoint, not two
    run = fs / "run"
    state = {"store_offset": 0, "metrics_lines": 1}
    first = ckpt.save_checkpoint(run, 1, model=model, tokenizer=tokenizer, optimizer=opt, state=state)
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    free_after_first = shutil.disk_usage(fs).free

    train_once()
    with pytest.raises(DiskFullError) as info:
        ckpt.save_checkpoint(run, 2, model=model, tokenizer=tokenizer, optimizer=opt, state=state)
    err = info.value
    assert err.errno == errno.ENOSPC
    assert str(err).startswith(f"disk full while writing checkpoint step 2 to {run / 'checkpoints'}/.step-00000002.")

    # nothing of step 2 is left (space freed), latest.json still names step 1, and step 1 loads
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["latest.json", "step-00000001"]
    assert shutil.disk_usage(fs).free == free_after_first
    assert ckpt.latest_checkpoint(run) == first
    loaded = AutoModelForCausalLM.from_pretrained(first / "model", dtype=torch.float32)
    for name, value in loaded.state_dict().items():
        assert torch.equal(value, weights[name]), name
    fresh = torch.optim.AdamW(loaded.parameters(), lr=1e-3)
    assert ckpt.load_training_state(first, fresh)["step"] == 1
    assert len(fresh.state_dict()["state"]) == len(opt.state_dict()["state"])


# ---------------------------------------------------------------------- (b) corrupt parts on resume
def _parts(tokenizer, run: Path, sizes: list[int]) -> TrajectoryStore:
    store = TrajectoryStore(run)
    for i, n in enumerate(sizes):
        store.append([make_trajectory(tokenizer, TOOLS, f"task{i}", fix_turns("return x"), chain=c) for c in range(n)])
    return store


def test_resume_truncation_drops_a_corrupt_part_after_the_checkpoint(tokenizer, tmp_path):
    store = _parts(tokenizer, tmp_path, [2, 2, 3])
    late = store.dir / "part-00000002.parquet"
    late.write_bytes(late.read_bytes()[:200])  # the part being written when the run died
    with pytest.raises(StoreError, match=r"part-00000002\.parquet is unreadable \(corrupt or truncated, 200 bytes\)"):
        store.count()
    ckpt.truncate_store(tmp_path, 4)  # what --resume does with the checkpoint's offset 4
    assert not late.exists() and store.count() == 4 and len(store.read_all()) == 4

    early = store.dir / "part-00000001.parquet"
    early.write_bytes(b"\0" * 64)  # rows the checkpoint counted: cannot be dropped silently
    with pytest.raises(StoreError, match=r"part-00000001\.parquet is unreadable .* holds rows from 2 on, before the checkpoint's offset 4"):
        ckpt.truncate_store(tmp_path, 4)
    assert early.exists()


class _StopAfterStep(Exception):
    pass


def _config(steps: int):
    from swetrain.train.config import load_config

    return load_config("grpo", None, [
        f"train.steps={steps}", "train.save_every=1", "rollout.tasks_per_step=1", "rollout.group=2",
        "rollout.max_turns=1", "rollout.max_new_tokens=8", "logging.progress=false", "logging.tensorboard=false",
    ])


def _builtin(n: int):
    from swetrain.tasks.builtin import load_builtin

    return sorted(load_builtin(split="train"), key=lambda t: t.instance_id)[:n]


@pytest.mark.slow
def test_train_resume_drops_a_truncated_part_and_continues(tiny_path, tmp_path):
    from swetrain.train.rl import RLTrainer

    tasks, run = _builtin(2), tmp_path / "run"

    def stop(step, metrics):
        raise _StopAfterStep  # the run dies right after step 1's checkpoint

    with pytest.raises(_StopAfterStep):
        RLTrainer(_config(2), run, tasks=tasks, policy_path=tiny_path, on_step=stop).train()
    store = TrajectoryStore(run)
    step1 = store.read_rows()
    assert ckpt.load_state(ckpt.latest_checkpoint(run))["store_offset"] == len(step1) == 2
    # step 2's part, cut short by the crash
    (store.dir / "part-00000002.parquet").write_bytes((store.dir / "part-00000000.parquet").read_bytes()[:300])
    with pytest.raises(StoreError, match="part-00000002.parquet is unreadable"):
        store.read_all()

    last = RLTrainer(_config(2), run, tasks=tasks, policy_path=tiny_path).train(resume=True)
    assert last["rollout/trajectories"] == 2
    rows = store.read_rows()
    assert rows[:2] == step1 and len(rows) == 4  # step 1 kept, step 2 stored once, all readable
    assert len({(r["instance_id"], r["chain"], r["attempt"]) for r in rows}) == 4
    assert [line.count('"step"') for line in (run / "metrics.jsonl").read_text().splitlines()] == [1, 1]


# ---------------------------------------------------------------------- (d) infra failures and the batch
@pytest.mark.slow
def test_infra_failures_never_enter_the_rl_batch(tiny_path, tmp_path):
    """A task whose verifier reports infra (it lists no tests) and a task whose second chain cannot
    get a sandbox (its snapshot is gone) are skipped: no row of either is trained on; only the
    complete task's chains form the batch."""
    from swetrain.env.workspace import Workspace
    from swetrain.train.rl import RLTrainer

    good, flaky, other = _builtin(3)
    untestable = other.model_copy(update={"instance_id": "untestable", "FAIL_TO_PASS": [], "PASS_TO_PASS": []})
    calls: Counter[str] = Counter()

    def workspaces(task):
        calls[task.instance_id] += 1
        if task.instance_id == flaky.instance_id and calls[task.instance_id] > 1:
            task = task.model_copy(update={"source": str(tmp_path / "gone")})
        return Workspace.create(task)

    cfg = _config(1)
    cfg.rollout.tasks_per_step = 3
    trainer = RLTrainer(cfg, tmp_path / "run", tasks=[good, flaky, untestable], policy_path=tiny_path,
                        workspace_factory=workspaces)
    metrics = trainer.train()
    stored = TrajectoryStore(tmp_path / "run").read_all()
    assert sorted((t.instance_id, t.chain) for t in stored) == sorted([(good.instance_id, 0), (good.instance_id, 1),
                                                                       (flaky.instance_id, 0)])
    assert not any(t.verdict.infra_failure for t in stored)
    assert metrics["rollout/skipped_tasks"] == 2
    assert metrics["rollout/infra_failures"] == 6  # 3 tries each (max_infra_retries=2)
    assert metrics["rollout/incomplete_group_rows"] == 1  # flaky's chain 0: stored, not trained on
    assert metrics["rollout/trajectories"] == 2 and metrics.get("update/trajectories", 0) <= 2
