"""The curriculum on real rollouts: a scripted policy that solves a real task on some seeds only
gives a fractional mastery, the frontier picks that task, ``swetrain train`` can read the written
tasks file, and the CLI reports bad input by name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swetrain.agent.scripted import SeededChoiceScript, TurnScript, make_scripted, replace_call
from swetrain.cli import app
from swetrain.curriculum.mastery import MasteryMap, estimate_mastery
from swetrain.env.demo import build_demo_task
from swetrain.rollout.sampling import sampling_defaults
from swetrain.tasks.record import load_tasks, save_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
from train_helpers import make_bug_task  # noqa: E402

BUG = "return a + b  # bug: should multiply"
RIGHT = TurnScript([replace_call("calc/__init__.py", BUG, "return a * b")])
GIVE_UP = TurnScript([])  # finish at once: empty patch


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from swetrain.policy.tiny import ensure_tiny

    root = tmp_path_factory.mktemp("curriculum")
    demo = build_demo_task(root / "demo")
    demo = demo.model_copy(update={"source": str(root / "demo" / "repo")})
    lib = make_bug_task(root / "lib", "index")
    lib = lib.model_copy(update={"source": str(root / "lib" / "repo")})
    tasks_file = save_tasks([demo.model_copy(update={"split": "train"}), lib.model_copy(update={"split": "train"})],
                            root / "tasks.jsonl")
    policy = make_scripted(SeededChoiceScript([RIGHT, GIVE_UP]), str(ensure_tiny()))
    mastery = MasteryMap(policy="scripted")
    changes = estimate_mastery(policy, [demo, lib], root / "runs" / "base", mastery, phase="base", rollouts=6,
                               seed=7, sampling=sampling_defaults("mastery").override(max_turns=3))
    return {"root": root, "demo": demo, "lib": lib, "tasks_file": tasks_file, "mastery": mastery, "changes": changes}


@pytest.mark.slow
def test_estimate_from_real_rollouts(world):
    from swetrain.rollout.store import TrajectoryStore

    m, demo, lib = world["mastery"], world["demo"], world["lib"]
    trajs = TrajectoryStore(world["root"] / "runs" / "base").read_all()
    solved = sum(t.resolved for t in trajs if t.instance_id == demo.instance_id)
    assert world["changes"]["refreshed"] == 2 and not world["changes"]["skipped"]
    assert m.instances[demo.instance_id].current.rollouts == 6
    assert m.p_hat(demo.instance_id) == solved / 6 and 0 < solved < 6  # the seeds split the outcomes
    assert m.p_hat(lib.instance_id) == 0.0 and not m.instances[lib.instance_id].ever_solved


@pytest.mark.slow
def test_cli_ingest_select_show_and_train_reads_the_selection(world, tmp_path):
    from swetrain.train.config import load_config
    from swetrain.train.rl import load_task_list

    path = tmp_path / "mastery.json"
    runner = CliRunner()
    res = runner.invoke(app, ["curriculum", "ingest", "--mastery", str(path), "--data", str(world["root"] / "runs" / "base"),
                              "--phase", "base", "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout.strip().splitlines()[-1])
    assert (info["estimated"], info["frontier"], info["zero"], info["refreshed"]) == (2, 1, 1, 2)
    assert MasteryMap.load(path).to_dict()["instances"] == world["mastery"].to_dict()["instances"]

    out = tmp_path / "frontier.jsonl"
    res = runner.invoke(app, ["curriculum", "select", "--mastery", str(path), "--tasks", str(world["tasks_file"]),
                              "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["hard_zero"] == 1
    assert [t.instance_id for t in load_tasks(out)] == [world["demo"].instance_id]
    cfg = load_config("fcswe", None, [f"tasks.source={out}"])
    assert [t.instance_id for t in load_task_list(cfg)] == [world["demo"].instance_id]

    # the expand step adds the hard zero back for re-estimation
    res = runner.invoke(app, ["curriculum", "select", "--mastery", str(path), "--tasks", str(world["tasks_file"]),
                              "--out", str(out), "--expand", "5", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout.strip().splitlines()[-1])["written"] == 2

    res = runner.invoke(app, ["curriculum", "show", "--mastery", str(path), "--compare", "base,base", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout.strip().splitlines()[-1])["unchanged"] == 2


def flat(res) -> str:
    """The CLI's output with rich's error-box borders and line wrapping removed."""
    return " ".join(res.output.replace("│", " ").split())


def test_cli_bad_input_is_named(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text("[1, 2")
    runner = CliRunner()
    res = runner.invoke(app, ["curriculum", "show", "--mastery", str(bad)])
    assert res.exit_code == 2 and "not valid JSON" in flat(res) and "m.json" in flat(res)
    res = runner.invoke(app, ["curriculum", "ingest", "--mastery", str(tmp_path / "new.json"), "--data", str(tmp_path),
                              "--phase", "x"])
    assert res.exit_code == 2 and "no trajectories/ folder" in flat(res)
    empty = MasteryMap()
    empty.save(tmp_path / "empty.json")
    res = runner.invoke(app, ["curriculum", "select", "--mastery", str(tmp_path / "empty.json"),
                              "--out", str(tmp_path / "f.jsonl")])
    assert res.exit_code == 2 and "no task qualifies" in flat(res) and not (tmp_path / "f.jsonl").exists()
    res = runner.invoke(app, ["curriculum", "show", "--mastery", str(tmp_path / "empty.json"), "--compare", "base"])
    assert res.exit_code == 2 and "BEFORE,AFTER" in flat(res)


@pytest.mark.slow
def test_cli_mastery_with_a_real_model(tmp_path, world):
    from swetrain.policy.tiny import ensure_tiny

    out = tmp_path / "m.json"
    args = ["curriculum", "mastery", "--policy", str(ensure_tiny()), "--tasks", str(world["tasks_file"]),
            "--limit", "1", "--rollouts", "2", "--max-turns", "2", "--max-new-tokens", "16", "--out", str(out), "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    m = MasteryMap.load(out)
    assert len(m.estimated("base")) == 1 and next(iter(m.instances.values())).current.rollouts == 2
    assert (tmp_path / "m.json.runs" / "base" / "trajectories").is_dir()
    res = CliRunner().invoke(app, [*args, "--resume"])  # nothing left to estimate in this phase
    assert res.exit_code == 0, res.output
    assert MasteryMap.load(out).to_dict() == m.to_dict()
