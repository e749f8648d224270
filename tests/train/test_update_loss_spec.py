"""The trainer reads what a policy loss needs from its registry spec, never from its name: a new
loss with its own parameter model and flags trains through the real trainer unchanged."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from pydantic import Field

from swetrain.algos import LossParams, agg_loss, register_policy_loss
from swetrain.algos.losses import POLICY_LOSSES, TokenBatch
from swetrain.train.config import ConfigError, load_config
from swetrain.train.update import AttemptRecord, PolicyUpdater, sample_from_trajectory, trajectory_advantages

from train_helpers import TOOLS, fix_turns, make_bug_task, make_trajectory

TRAIN_SRC = Path(__file__).resolve().parents[2] / "src" / "swetrain" / "train"
NAME = "test-trainer-scaled-pg"


class ScaledParams(LossParams):
    scale: float = Field(default=1.0, gt=0)


@pytest.fixture()
def scaled_pg():
    """A vanilla PG loss scaled by ``algo.params.scale``; needs the frozen reference, reads no old
    log-probs. Records what the trainer passed it."""
    seen: dict[str, list] = {"scale": [], "old": []}

    @register_policy_loss(NAME, params=ScaledParams, needs_reference=True, scores_old_logprobs=False)
    def scaled(logp, logp_old, advantages, mask, *, logp_behavior=None, segment_ids=None, agg=None,
               loss_norm=None, scale=1.0):
        seen["scale"].append(scale)
        seen["old"].append(logp_old.detach().clone())
        tb = TokenBatch(logp, None, advantages, mask, require_old=False)
        loss = agg_loss(-scale * tb.adv * tb.logp, tb.mask, agg or "token-mean", segment_ids, loss_norm)
        return loss, {"test/scale": scale}

    yield seen
    POLICY_LOSSES.remove(NAME)


class _Forwards:
    def __init__(self, model):
        self.calls = 0
        getattr(model, "model", model).register_forward_pre_hook(self)  # token_logprobs runs the body

    def __call__(self, module, args):
        self.calls += 1


def _samples(tokenizer, algo):
    trajs = [make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return a < b"), chain=0, resolved=True),
             make_trajectory(tokenizer, TOOLS, "t1", fix_turns("del x[0]"), chain=1, resolved=False)]
    rewards, adv = trajectory_advantages([AttemptRecord(t.instance_id, t.chain, 0, t.resolved) for t in trajs], algo)
    return [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, adv, rewards)]


def test_trainer_runs_a_new_loss_from_its_spec(scaled_pg, tmp_path, tiny_path, tokenizer):
    from swetrain.train.rl import RLTrainer

    with pytest.raises(ConfigError, match=r"algo.params.scale: .*greater than 0"):
        load_config("grpo", overrides=[f"algo.policy_loss={NAME}", "algo.params.scale=-1"])
    cfg = load_config("grpo", overrides=[f"algo.policy_loss={NAME}", "algo.params.scale=2.5", "optim.lr=0.002",
                                         "logging.progress=false", "logging.tensorboard=false"])
    trainer = RLTrainer(cfg, tmp_path / "run", tasks=[make_bug_task(tmp_path / "bug", "index")], policy_path=tiny_path)
    # needs_reference: the trainer keeps a frozen reference; no teachers
    assert trainer.ref_model is not None and trainer.teachers is None
    assert not any(p.requires_grad for p in trainer.ref_model.parameters())
    samples = _samples(tokenizer, cfg.algo)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    forwards = _Forwards(trainer.model)
    metrics = trainer.updater.update(samples, torch.Generator().manual_seed(0))
    # its parameters come validated from algo.params
    assert set(scaled_pg["scale"]) == {2.5} and metrics["test/scale"] == 2.5
    # scores_old_logprobs=False: zeros, no scoring forward (one training forward for one micro-batch),
    # and no on-policy shortcut (there is nothing to shortcut)
    assert all(float(o.abs().sum()) == 0.0 for o in scaled_pg["old"])
    assert forwards.calls == 1 and metrics["update/on_policy_shortcut"] == 0.0
    assert metrics["update/optimizer_steps"] == 1.0
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))


def test_spec_flags_are_checked_by_the_updater(scaled_pg, tiny_path):
    from transformers import AutoModelForCausalLM

    cfg = load_config("grpo", overrides=[f"algo.policy_loss={NAME}"])
    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=f"policy_loss {NAME} needs a frozen reference model"):
        PolicyUpdater(model, opt, None, cfg.algo, cfg.optim)
    upd = PolicyUpdater(model, opt, None, cfg.algo, cfg.optim, ref_model=model)
    assert upd.loss.params_of(cfg.algo) == {"scale": 1.0} and not upd.on_policy_shortcut()


def _loss_name_comparisons(source: str, name: str) -> list[str]:
    """``x.policy_loss == "..."`` (or ``in (...)``, ``!=``) anywhere in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        names_loss = any(isinstance(o, ast.Attribute) and o.attr == "policy_loss"
                         or isinstance(o, ast.Name) and o.id == "policy_loss" for o in operands)
        literal = any(isinstance(c, ast.Constant) and isinstance(c.value, str)
                      for o in operands for c in ([o] if isinstance(o, ast.Constant) else getattr(o, "elts", [])))
        if names_loss and literal:
            found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_trainer_module_tests_a_loss_by_name():
    # the check sees such comparisons
    assert len(_loss_name_comparisons('if a.policy_loss in ("mopd",) or policy_loss != "x": pass', "probe")) == 2
    hits = [hit for path in sorted(TRAIN_SRC.rglob("*.py"))
            for hit in _loss_name_comparisons(path.read_text(encoding="utf-8"), path.name)]
    assert not hits, "ask the loss spec (swetrain.algos.get_loss_spec) instead:\n" + "\n".join(hits)
