"""RolloutEngine on real tasks: scheduling, infra retries, skipping, local vs Ray equivalence."""

from __future__ import annotations

import functools
import threading

import pytest

from swetrain.agent.chains import CONTEXT_HEADER
from swetrain.agent.loop import EpisodeLimits
from swetrain.agent.scripted import KeywordScript, SeededChoiceScript, TurnScript, make_scripted, replace_call
from swetrain.env.demo import build_demo_task
from swetrain.env.verifier import Verifier
from swetrain.env.workspace import Workspace
from swetrain.rollout.engine import ChainJobConfig, RolloutEngine, summarize
from swetrain.rollout.store import TrajectoryStore

BUG = "return a + b  # bug: should multiply"
RIGHT = TurnScript([replace_call("calc/__init__.py", BUG, "return a * b")])
GIVE_UP = TurnScript([])  # finish at once: empty patch, fails without running tests
# per chain (by seed): solve at once, or give up first and solve when shown the failure context
SCRIPT = SeededChoiceScript([RIGHT, KeywordScript({CONTEXT_HEADER: RIGHT}, default=GIVE_UP), GIVE_UP])


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return build_demo_task(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def factory(tiny_tokenizer_path):
    return functools.partial(make_scripted, SCRIPT, tiny_tokenizer_path)


@pytest.fixture(scope="module")
def tiny_tokenizer_path():
    from swetrain.policy.tiny import ensure_tiny

    return str(ensure_tiny())


def config(**kw):
    base = dict(group=4, attempts=2, limits=EpisodeLimits(max_turns=4), seed=1234, verify_timeout_s=120)
    base.update(kw)
    return ChainJobConfig(**base)


def records(store):
    out = []
    for t in sorted(store.read_all(), key=lambda t: (t.instance_id, t.chain, t.attempt)):
        out.append((t.instance_id, t.chain, t.attempt, t.token_ids, t.assistant_mask, t.segment_ids,
                    t.behavior_logprobs, t.invalid, t.patch, t.resolved, t.context, t.seed))
    return out


@pytest.mark.slow
def test_local_engine_groups_chains_and_metrics(task, factory, tmp_path):
    engine = RolloutEngine(policy_factory=factory, backend="local", workers=2, config=config())
    seen = []
    report = engine.run([task], tmp_path / "run", on_result=lambda r: seen.append((r.instance_id, r.chain)))
    assert sorted(seen) == [(task.instance_id, c) for c in range(4)]
    store = TrajectoryStore(tmp_path / "run")
    trajs = store.read_all()
    assert report.chains_done == 4 and report.trajectories == len(trajs) and not report.skipped_tasks
    chains = {}
    for t in trajs:
        chains.setdefault(t.chain, []).append(t)
    for c, ts in chains.items():
        ts.sort(key=lambda t: t.attempt)
        assert ts[0].attempt == 1
        # attempt 2 exists iff attempt 1 ran and failed
        assert (len(ts) == 2) == (not ts[0].resolved)
        if len(ts) == 2:
            assert ts[1].context and ts[1].context.startswith(CONTEXT_HEADER)
    m = report.metrics
    assert m["chains"] == 4 and 0.0 <= m["resolved@1"] <= m["resolved@2"] <= 1.0
    assert m == summarize(trajs, 2)
    # resume: nothing left to do
    again = engine.run([task], tmp_path / "run")
    assert again.chains_resumed == 4 and again.chains_done == 0 and store.count() == len(trajs)


@pytest.mark.slow
def test_infra_failures_are_retried_then_reported_and_skipped(task, factory, tmp_path):
    calls = {"n": 0}
    lock = threading.Lock()

    def flaky(t):  # a sandbox that crashes on every other start
        with lock:
            calls["n"] += 1
            crash = calls["n"] % 2 == 1
        if crash:
            raise OSError("sandbox crashed while starting")
        return Workspace.create(t)

    untestable = task.model_copy(update={"instance_id": "demo__no-tests", "FAIL_TO_PASS": [], "PASS_TO_PASS": []})
    untestable = untestable.with_base_dir(task._base_dir)
    right = functools.partial(make_scripted, RIGHT, factory.args[1])
    engine = RolloutEngine(
        policy_factory=right, backend="local", workers=1,
        config=config(group=2, max_infra_retries=1), workspace_factory=flaky,
    )
    report = engine.run([task, untestable], tmp_path / "run")
    trajs = TrajectoryStore(tmp_path / "run").read_all()
    assert {t.instance_id for t in trajs} == {task.instance_id}  # infra failures are never scored
    assert all(t.resolved for t in trajs) and report.chains_done == 2
    assert "demo__no-tests" in report.skipped_tasks and "infra" in report.skipped_tasks["demo__no-tests"]
    assert report.chains_skipped == 2  # the failing chain and the task's remaining chain
    assert report.infra_retries >= 2


def test_bad_configuration_is_rejected(task):
    with pytest.raises(ValueError, match="context_variant"):
        ChainJobConfig(context_variant="everything")
    with pytest.raises(ValueError, match="backend"):
        RolloutEngine(policy_factory="scripted:finish", backend="dask")
    with pytest.raises(ValueError, match="policy_factory"):
        RolloutEngine(policy=object(), backend="ray")
    engine = RolloutEngine(policy_factory="scripted:finish", config=config())
    with pytest.raises(ValueError, match="duplicate"):
        engine.jobs([task, task])


@pytest.mark.slow
def test_ray_and_local_backends_give_the_same_records(task, factory, tmp_path):
    cfg = config(group=3)
    local = RolloutEngine(policy_factory=factory, backend="local", workers=2, config=cfg)
    local.run([task], tmp_path / "local")
    ray_engine = RolloutEngine(policy_factory=factory, backend="ray", workers=2, config=cfg, ray_num_cpus=2)
    report = ray_engine.run([task], tmp_path / "ray")
    assert report.chains_done == 3 and not report.skipped_tasks
    a, b = records(TrajectoryStore(tmp_path / "local")), records(TrajectoryStore(tmp_path / "ray"))
    assert len(a) >= 3 and a == b


def test_jobs_are_chain_major_and_duplicate_ids_are_refused(task):
    engine = RolloutEngine(policy=object(), config=config(group=2))
    other = task.model_copy(update={"instance_id": "other"})
    assert [(t.instance_id, c) for t, c in engine.jobs([task, other])] == [
        (task.instance_id, 0), ("other", 0), (task.instance_id, 1), ("other", 1)]
    with pytest.raises(ValueError, match=r"duplicate instance_id\(s\) in tasks: \['other'\]"):
        engine.jobs([other, task, other])
