"""Run by ``torch.distributed.run`` in tests/train/test_fsdp_cpu.py: one FSDP policy update on CPU
(gloo, loopback) where each rank holds a different share of the rows, or the same update in one
process on all rows. Writes the updated full state dict (and metrics) for the test to compare."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_helpers import TOOLS, fix_turns, make_trajectory  # noqa: E402

FIXES = ["return a < b", "return a > b + 1", "x", "return b", "return a", "pass", "return 0"]


def rows(tokenizer):
    """7 trajectories of 3 tasks: t1 mixed outcomes, t2 all failed (A = 0), t3 mixed."""
    plan = [("t1", True), ("t1", False), ("t1", False), ("t2", False), ("t2", False), ("t3", False), ("t3", True)]
    out, chains = [], {}
    for (iid, ok), fix in zip(plan, FIXES):
        c = chains.get(iid, 0)
        chains[iid] = c + 1
        out.append(make_trajectory(tokenizer, TOOLS, iid, fix_turns(fix), chain=c, resolved=ok))
    return out


def main() -> None:
    import faulthandler

    faulthandler.enable()
    faulthandler.dump_traceback_later(float(os.environ.get("FSDP_WORKER_DUMP_S", "1e9")), exit=True)
    out_dir, mode, recipe = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from swetrain.policy.tiny import ensure_tiny
    from swetrain.train import distributed as dist
    from swetrain.train.config import load_config
    from swetrain.train.update import AttemptRecord, PolicyUpdater, sample_from_trajectory, trajectory_advantages

    torch.set_num_threads(1)
    info = dist.setup("on" if mode == "fsdp" else "off")
    path = ensure_tiny()
    tok = AutoTokenizer.from_pretrained(path)
    # one row per micro-batch, 2 epochs (2 optimizer steps), gradient clipping on
    cfg = load_config(recipe, overrides=["optim.micro_batch_tokens=200", "optim.mini_batches=1", "optim.epochs=2",
                                         "optim.grad_clip=0.5"])
    trajs = rows(tok)
    records = [AttemptRecord(t.instance_id, t.chain, t.attempt - 1, t.resolved) for t in trajs]
    rewards, adv = trajectory_advantages(records, cfg.algo)
    samples = [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, adv, rewards)]
    if info.fsdp:  # rank 0 gets t1's rows and t2's, rank 1 only t3's: unequal passes on purpose
        samples = samples[:5] if info.rank == 0 else samples[5:]
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    wrapped = dist.wrap(model, info)
    opt = torch.optim.SGD([p for p in wrapped.parameters() if p.requires_grad], lr=1.0)
    updater = PolicyUpdater(wrapped, opt, None, cfg.algo, cfg.optim, pad_id=tok.pad_token_id or 0,
                            world_size=info.world_size, all_reduce=dist.all_reduce_sum(info),
                            all_reduce_max=dist.all_reduce_max(info))
    metrics = updater.update(samples, None)
    state = dist.full_state_dict(wrapped, info)
    if info.is_main:
        out_dir.mkdir(parents=True, exist_ok=True)
        torch.save({k: v.clone() for k, v in state.items()}, out_dir / "state.pt")
        (out_dir / "metrics.json").write_text(json.dumps(metrics))
    if info.fsdp:
        import torch.distributed as tdist

        tdist.barrier()
        tdist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
