"""A run whose tries are mostly infrastructure failures stops with an error (it measures the
environment, not the policy); real workspaces and a real task environment that cannot start."""

from __future__ import annotations

import pytest

from swetrain.agent.loop import EpisodeLimits
from swetrain.agent.scripted import ScriptedPolicy, TurnScript, load_tokenizer
from swetrain.rollout.engine import ChainJobConfig, RolloutEngine, infra_fraction
from swetrain.rollout.errors import InfraFailureError, NoTrajectoryError
from swetrain.tasks.builtin import load_builtin


@pytest.fixture(scope="module")
def policy():
    from swetrain.policy.tiny import ensure_tiny

    return ScriptedPolicy(load_tokenizer(str(ensure_tiny())), TurnScript([]))  # finish at once


def _config(**kw) -> ChainJobConfig:
    return ChainJobConfig(group=1, attempts=1, seed=0, max_infra_retries=0,
                         limits=EpisodeLimits(max_turns=2, max_tokens_per_call=256, max_context_tokens=8192), **kw)


def _tasks(tmp_path, broken: int, good: int):
    suite = sorted(load_builtin(split="heldout"), key=lambda t: t.instance_id)
    bad = [t.model_copy(update={"environment": str(tmp_path / "no-venv")}) for t in suite[:broken]]
    return bad + suite[broken:broken + good]


def test_mostly_infra_failures_stop_the_run(policy, tmp_path):
    engine = RolloutEngine(policy, backend="local", config=_config())
    with pytest.raises(InfraFailureError, match=r"3 of 4 chains \(75%\) were given up for infrastructure failures.*no-venv") as err:
        engine.run(_tasks(tmp_path, broken=3, good=1), tmp_path / "run")
    assert isinstance(err.value, NoTrajectoryError)  # every caller's one-line handler catches it


def test_below_the_threshold_the_run_goes_on_and_counts_them(policy, tmp_path):
    engine = RolloutEngine(policy, backend="local", config=_config())
    report = engine.run(_tasks(tmp_path, broken=1, good=3), tmp_path / "run")
    assert report.infra_failures == 1 and report.chains_done == 3 and infra_fraction(report) == 0.25


def test_the_threshold_is_configurable(policy, tmp_path):
    engine = RolloutEngine(policy, backend="local", config=_config(max_infra_fraction=1.0))
    report = engine.run(_tasks(tmp_path, broken=3, good=1), tmp_path / "run")
    assert report.infra_failures == 3
    with pytest.raises(ValueError, match="max_infra_fraction"):
        _config(max_infra_fraction=0.0)


def test_a_run_reads_no_earlier_rows_of_its_store(policy, tmp_path):
    """A trainer appends every step to one store: step N must not re-read steps 1..N-1 (issue 34)."""
    from swetrain.rollout.store import TrajectoryStore

    class Counting(TrajectoryStore):
        rows_read = 0

        def read_table(self, *args, **kwargs):
            table = super().read_table(*args, **kwargs)
            Counting.rows_read += table.num_rows
            return table

    store = Counting(tmp_path / "run")
    engine = RolloutEngine(policy, backend="local", config=_config())
    tasks = _tasks(tmp_path, broken=0, good=2)
    first = engine.run(tasks[:1], store, resume=False)  # as the trainer runs each step
    second = engine.run(tasks[1:], store, resume=False)
    assert Counting.rows_read == 0 and store.count() == 2
    assert first.metrics["trajectories"] == second.metrics["trajectories"] == 1
