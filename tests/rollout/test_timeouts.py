"""The environment's timeouts reach a real chain: an edit that makes the tests hang costs the
agent's command limit (``command_timeout_s``) and the verifier's per-test limit
(``test_timeout_s``), not the defaults of minutes (the quickstart sets both low)."""

from __future__ import annotations

import functools
import time

import pytest

from swetrain.agent.loop import EpisodeLimits
from swetrain.agent.scripted import TurnScript, bash_call, make_scripted, replace_call
from swetrain.env.demo import build_demo_task
from swetrain.rollout.engine import ChainJobConfig, RolloutEngine
from swetrain.rollout.store import TrajectoryStore
from swetrain.train.config import load_config

BUG = "return a + b  # bug: should multiply"
HANG = TurnScript([replace_call("calc/__init__.py", BUG, "while True:\n        pass"), bash_call("python -c 'import calc; calc.mul(2, 3)'")])


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return build_demo_task(tmp_path_factory.mktemp("demo"))


def test_a_hanging_edit_costs_the_configured_limits(task, tmp_path):
    from swetrain.policy.tiny import ensure_tiny

    factory = functools.partial(make_scripted, HANG, str(ensure_tiny()))
    cfg = ChainJobConfig(group=1, attempts=1, limits=EpisodeLimits(max_turns=4), seed=0, verify_timeout_s=60,
                         command_timeout_s=3, test_timeout_s=2)
    started = time.monotonic()
    RolloutEngine(policy_factory=factory, backend="local", workers=1, config=cfg).run([task], tmp_path / "run")
    elapsed = time.monotonic() - started
    (traj,) = TrajectoryStore(tmp_path / "run").read_all()
    assert "while True" in traj.patch and not traj.resolved
    observations = " ".join(str(m.get("content", "")) for m in traj.messages if m.get("role") != "assistant")
    assert "timed out after 3s" in observations
    assert "per-test limit" in traj.verdict.diagnostics
    assert "2s" in traj.verdict.diagnostics
    # one 3 s command + a 2 s limit per hanging test (the demo has two), never the 120 s / 60 s defaults
    assert elapsed < 45, elapsed


def test_the_recipe_env_section_carries_the_timeouts_to_the_engine():
    cfg = load_config("fcswe", overrides=["env.command_timeout_s=7", "env.test_timeout_s=4"])
    eng = cfg.rollout.engine_config(0, **cfg.env.run_kwargs())
    assert (eng.command_timeout_s, eng.test_timeout_s) == (7.0, 4.0)
    assert ChainJobConfig().command_timeout_s == 120.0 and ChainJobConfig().test_timeout_s == 60.0
    with pytest.raises(ValueError, match="command_timeout_s"):
        ChainJobConfig(command_timeout_s=0)
    with pytest.raises(Exception, match="test_timeout_s"):
        load_config("fcswe", overrides=["env.test_timeout_s=-1"])
