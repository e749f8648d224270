"""TrajectoryStore: atomic Parquet parts, ordered reads with offsets, survives a killed writer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from swetrain.agent.trajectory import Trajectory
from swetrain.env.verdict import TestResult as VerdictTest
from swetrain.env.verdict import Verdict
from swetrain.rollout.store import TrajectoryStore


def make_traj(iid: str, chain: int, attempt: int, resolved: bool = False) -> Trajectory:
    prompt = [1, 2, 3]
    gen1, obs, gen2 = [10, 11, 12], [4, 5], [13, 14]
    ids = prompt + gen1 + obs + gen2
    verdict = Verdict(
        instance_id=iid,
        resolved=resolved,
        status="FULL" if resolved else "NO",
        patch_applied=True,
        tests=[VerdictTest(test_id="t::a", kind="FAIL_TO_PASS", status="PASSED" if resolved else "FAILED")],
        diagnostics="" if resolved else "t::a failed",
    )
    return Trajectory(
        instance_id=iid, chain=chain, attempt=attempt, context_variant="patch+verifier",
        context=None if attempt == 1 else "## Previous attempt ...",
        messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": "y", "turn": 1}],
        token_ids=ids,
        assistant_mask=[0] * 3 + [1] * 3 + [0] * 2 + [1] * 2,
        segment_ids=[0] * 3 + [1] * 3 + [0] * 2 + [2] * 2,
        behavior_logprobs=[0.0] * 3 + [-0.5, -1.25, -0.125] + [0.0] * 2 + [-2.0, -0.75],
        invalid=[False, True], invalid_reasons=[[], ["no_tool_call"]],
        patch="diff --git a/x b/x\n", verdict=verdict, resolved=resolved,
        input_tokens=11, output_tokens=5, num_turns=2, stop_reason="submitted",
        timings={"total_s": 0.5}, policy_version=3, prompt_len=3, seed=42,
    )


def test_append_read_offsets_and_pandas(tmp_path):
    store = TrajectoryStore(tmp_path)
    assert store.read_all() == [] and store.count() == 0
    first = [make_traj("a", 0, 1), make_traj("a", 0, 2, resolved=True)]
    store.append(first)
    store.append([make_traj("b", 1, 1, resolved=True)])
    assert store.count() == 3
    rows = store.read_all()
    assert [(t.instance_id, t.attempt) for t in rows] == [("a", 1), ("a", 2), ("b", 1)]
    assert rows[0] == first[0] and rows[1] == first[1]  # exact round trip, Verdict included
    assert rows[1].invalid_token_mask == [0] * 8 + [1, 1]
    later, offset = store.read(2)
    assert [t.instance_id for t in later] == ["b"] and offset == 3
    assert store.read(3) == ([], 3)
    # a new store object on the same folder continues numbering (append-only, resumable)
    TrajectoryStore(tmp_path).append([make_traj("c", 0, 1)])
    assert [t.instance_id for t in store.read_all(3)] == ["c"]
    assert store.done_chains() == {("a", 0), ("b", 1), ("c", 0)}
    import pandas as pd

    df = pd.read_parquet(tmp_path / "trajectories")
    required = {"instance_id", "chain", "attempt", "active", "context_variant", "token_ids", "assistant_mask",
                "segment_ids", "behavior_logprobs", "invalid", "patch", "resolved", "input_tokens", "output_tokens"}
    assert required <= set(df.columns) and len(df) == 4


def test_bad_trajectory_is_refused_before_writing(tmp_path):
    store = TrajectoryStore(tmp_path)
    bad = make_traj("a", 0, 1)
    bad.assistant_mask = bad.assistant_mask[:-1]
    with pytest.raises(ValueError, match="assistant_mask"):
        store.append([bad])
    assert store.count() == 0


def test_two_writers_on_one_folder_never_replace_a_part(tmp_path):
    one, two = TrajectoryStore(tmp_path), TrajectoryStore(tmp_path)
    one.append([make_traj("a", 0, 1)])
    two.append([make_traj("b", 0, 1)])  # both now believe part 1 is the next free number
    one.append([make_traj("c", 0, 1)])
    two.append([make_traj("d", 0, 1)])
    assert sorted(t.instance_id for t in TrajectoryStore(tmp_path).read_all()) == ["a", "b", "c", "d"]
    assert not list((tmp_path / "trajectories").glob(".part-*.tmp"))


def test_offsets_skip_whole_parts_and_columns_are_selectable(tmp_path):
    store = TrajectoryStore(tmp_path)
    for i in range(4):
        store.append([make_traj(f"t{i}", 0, 1), make_traj(f"t{i}", 0, 2)])
    ids = [t.instance_id for t in store.read_all()]
    for offset in range(10):
        assert [t.instance_id for t in store.read_all(offset)] == ids[offset:]
    assert store.read(8) == ([], 8) and store.read_all(20) == []
    table = store.read_table(3, columns=["instance_id", "attempt"])
    assert table.column_names == ["instance_id", "attempt"] and table.to_pydict()["attempt"] == [2, 1, 2, 1, 2]
    with pytest.raises(ValueError, match="unknown trajectory column"):
        store.read_table(columns=["nope"])
    assert TrajectoryStore(tmp_path / "empty").read_table(columns=["chain"]).column_names == ["chain"]


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from test_rollout_store import make_traj
    from swetrain.rollout.store import TrajectoryStore
    store = TrajectoryStore({run!r})
    i = 0
    while True:
        store.append([make_traj("t%d" % i, 0, 1), make_traj("t%d" % i, 0, 2)])
        print(i, flush=True)
        i += 1
    """
)


@pytest.mark.slow
def test_store_survives_a_killed_writer(tmp_path):
    run = tmp_path / "run"
    code = WRITER.format(tests=os.path.dirname(__file__), run=str(run))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        lines = 0
        while lines < 5:  # let it write a few parts, then kill it mid-stream
            assert proc.stdout.readline(), "writer died early"
            lines += 1
        time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # a killed writer may also leave a half-written temporary part
    (run / "trajectories" / ".part-99999999.12345.tmp").write_bytes(b"PAR1 truncated")
    store = TrajectoryStore(run)
    trajs = store.read_all()
    assert len(trajs) >= 10 and len(trajs) % 2 == 0  # whole parts only
    assert all(t.token_ids == make_traj("x", 0, 1).token_ids for t in trajs)
    import pandas as pd

    assert len(pd.read_parquet(run / "trajectories")) == len(trajs)
    store.append([make_traj("after", 0, 1)])  # a new writer cleans up and continues
    assert not list((run / "trajectories").glob(".part-*.tmp"))
    assert store.read_all()[-1].instance_id == "after"
