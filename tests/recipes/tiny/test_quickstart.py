"""Smoke test of the main job with a tiny schedule (real suite, real verifier, tiny model)."""

from __future__ import annotations

import json

import pytest
import yaml

from swetrain.tasks.builtin import TASKS_FILE

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not TASKS_FILE.exists(), reason="the built-in suite (tasks.jsonl) is not generated in this checkout")
def test_quickstart_tiny_schedule(tmp_path):
    from swetrain.recipes.tiny.quickstart import QuickstartOptions, run_quickstart

    out = tmp_path / "qs"
    summary = run_quickstart(
        QuickstartOptions(
            out=out, policy="tiny", steps=1, seed=0, eval_tasks=2, tasks_per_step=1, group=2, progress=False,
            probe_tasks=2, probe_rollouts=1, rl_tasks=1, frontier_samples=2,
            overrides=("rollout.max_turns=2", "rollout.max_new_tokens=16"),
        )
    )
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["steps"] == 1 == summary["steps"]
    for when in ("before", "after"):
        for key in ("resolved_at_1", "resolved_at_2", "conditional_recovery"):
            assert 0.0 <= on_disk[when][key] <= 1.0
    assert (out / "report.md").is_file() and (out / "reward.png").is_file() and (out / "resolved_before_after.png").is_file()
    assert (out / "metrics.jsonl").read_text().count("\n") == 1
    assert list((out / "tensorboard").glob("events.out.tfevents.*"))
    assert list((out / "trajectories").glob("part-*.parquet"))
    config = yaml.safe_load((out / "config.yaml").read_text())
    # a tiny base gets the quickstart's optimizer and the built-in suite's short timeouts
    assert config["optim"]["lr"] == 3e-4 and config["optim"]["epochs"] == 2
    assert config["env"]["command_timeout_s"] == 30 and config["env"]["test_timeout_s"] == 10
    assert on_disk["trained_checkpoint"] and (out / "checkpoints").is_dir()
    assert on_disk["base_checkpoint"] and on_disk["eval_tasks"] == 2 == len(on_disk["eval_task_ids"])
    paired = on_disk["paired"]
    assert paired["metric"] == "resolved_at_2" and paired["n_tasks"] == 2
    assert paired["ci_low"] <= paired["diff"] <= paired["ci_high"]
    # the curriculum probed 2 train tasks; an untrained model solves none: the fallback is recorded
    selection = json.loads((out / "curriculum" / "selection.json").read_text())
    assert selection["probed"] == 2 and selection["fallback"] and len(selection["rl_tasks"]) == 1
    assert (out / "curriculum" / "mastery.json").is_file()
    # only tiny-sft ships a mastery prior; the untrained preset probes a seeded shuffle and says so
    assert selection["prior"] == {"used": False, "note": "no mastery prior ships for policy 'tiny'", "probed_with_prior": 0}
    report = (out / "report.md").read_text()
    assert "Paired Resolved@2 after - before over 2 tasks" in report and "no frontier" in report
    assert "within 2 attempts (rollout R@2)" in report
    # the RL set before and after RL, with the same fresh seeds; per-tier held-out figures
    frontier = on_disk["frontier"]
    assert frontier["samples"] == 2 and frontier["tasks"] == selection["rl_tasks"] and frontier["fallback"]
    assert 0.0 <= frontier["before"] <= 1.0 and frontier["paired"]["metric"] == "frontier_success"
    assert (out / "frontier_before" / "eval.json").is_file() and (out / "frontier_after" / "eval.json").is_file()
    seeds = [json.loads((out / f"frontier_{w}" / "eval.json").read_text())["seeds"] for w in ("before", "after")]
    assert seeds[0] == seeds[1]
    assert sum(t["n_tasks"] for t in on_disk["per_tier"].values()) == 2
    assert "RL set success (train, 1 tasks x 2 fresh attempts)" in report and "Held-out target" in report
    # what the timings depend on
    machine = on_disk["machine"]
    assert machine["cores"] >= 1 and machine["torch_threads"] >= 1 and isinstance(machine["cpu_native_bf16"], bool)
    assert f"{machine['cores']} cores" in report and "bf16 arithmetic on the CPU" in report


def test_each_base_family_gets_its_quickstart_settings():
    from swetrain.recipes.tiny.quickstart_settings import SMOLLM2_SETTINGS, TINY_OPTIM, base_overrides
    from swetrain.train.config import load_config

    assert base_overrides("tiny-sft") == TINY_OPTIM == base_overrides("tiny") == base_overrides("tiny:small")
    assert base_overrides("smollm2-easy-sft") == SMOLLM2_SETTINGS == base_overrides("smollm2-sft")
    assert base_overrides("/models/my-base") == ()
    config = load_config("fcswe", overrides=list(SMOLLM2_SETTINGS))  # every override names a real field
    assert config.train.trainable_layers == 8 and config.rollout.hf_dtype == "bf16-native"
    assert config.train.precision == "bf16-native" and config.optim.lr == 3e-5


def test_the_tier_option_keeps_one_tier_on_both_splits():
    from swetrain.recipes.tiny.quickstart import heldout_sample
    from swetrain.recipes.tiny.quickstart_settings import suite_tasks
    from swetrain.tasks.record import task_tier

    train, heldout = suite_tasks("train", None, "easy"), heldout_sample(200, 0, tier="easy")
    assert train and heldout and {task_tier(t) for t in train + heldout} == {"easy"}
    assert len(suite_tasks("train", None)) > len(train) == len([t for t in suite_tasks("train", None) if task_tier(t) == "easy"])
    assert heldout_sample(5, 0, tier="easy") == heldout[:5]


def test_quickstart_refuses_an_unknown_tier(tmp_path):
    from swetrain.recipes.tiny.quickstart import QuickstartError, QuickstartOptions, run_quickstart

    with pytest.raises(QuickstartError, match=r"--tier hard: not one of easy, standard"):
        run_quickstart(QuickstartOptions(out=tmp_path / "q", tier="hard", progress=False))
    assert not (tmp_path / "q").exists()
    res = _run_cli(["--profile", "smollm2-easy", "--tier", "hard", "--out", str(tmp_path / "q")])
    assert res.exit_code == 2 and "--tier hard: not one of easy, standard" in res.output
    assert not (tmp_path / "q").exists()


def test_every_profile_names_a_base_a_tier_and_every_size():
    from swetrain.recipes.tiny.mastery_prior import SHIPPED
    from swetrain.recipes.tiny.quickstart import PROFILES, QuickstartOptions

    keys = set(PROFILES["default"])
    for name, profile in PROFILES.items():
        assert set(profile) - {"torch_threads"} == keys - {"torch_threads"}, name
        QuickstartOptions(**profile)  # every key is an option
        assert profile["tier"] in (None, "easy", "standard")
    assert PROFILES["default"]["policy"] == "tiny-sft" and PROFILES["default"]["tier"] is None
    smol = PROFILES["smollm2-easy"]
    assert smol["policy"] == "smollm2-easy-sft" and smol["tier"] == "easy" and smol["torch_threads"] is None
    assert SHIPPED[smol["policy"]].is_file()  # its curriculum starts from a measured prior


def test_quickstart_refuses_a_foreign_out_folder(tmp_path):
    from typer.testing import CliRunner

    from swetrain.cli import app

    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("not a quickstart run")
    res = CliRunner().invoke(app, ["quickstart", "--out", str(out)])
    assert res.exit_code == 2 and "does not look like a quickstart run" in res.output
    assert (out / "notes.txt").read_text() == "not a quickstart run"  # nothing deleted


def _run_cli(args: list[str]):
    from typer.testing import CliRunner

    from swetrain.cli import app

    return CliRunner().invoke(app, ["quickstart", *args])


def _train_only_tasks(tmp_path):
    rows = [line for line in TASKS_FILE.read_text().splitlines() if json.loads(line).get("split") == "train"][:2]
    path = tmp_path / "train_only.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.skipif(not TASKS_FILE.exists(), reason="the built-in suite (tasks.jsonl) is not generated in this checkout")
def test_quickstart_bad_inputs_give_one_error_line_and_write_nothing(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    cases = [
        (["--policy", "no-such-policy"], "--policy no-such-policy"),
        (["--eval-tasks", "0"], "--eval-tasks: must be an integer >= 1 (got 0)"),
        (["--tasks", str(_train_only_tasks(tmp_path))], "no held-out tasks"),
        (["--out", str(blocker / "run")], "is not writable"),
        (["--prior-mastery", str(blocker)], f"{blocker}: not a readable JSON mastery prior"),
    ]
    for args, message in cases:
        out = tmp_path / "run"
        full = args if "--out" in args else ["--out", str(out), *args]
        res = _run_cli(full)
        assert res.exit_code == 2, (args, res.output)
        lines = [line for line in res.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], (args, res.output)
        assert not out.exists()


def test_paired_difference_and_task_scores_on_hand_made_results():
    from swetrain.eval.evaluate import EvalResult
    from swetrain.recipes.tiny.quickstart import paired_difference, task_scores

    nan = float("nan")

    def result(per_task):
        return EvalResult(0, 0, 0, len(per_task), 1, 0, per_task=per_task)

    before = result({"a": [[0.0, 0.0]], "b": [[0.0, 1.0]], "c": [[1.0, nan]], "d": [[0.0, 0.0]]})
    after = result({"a": [[1.0, nan]], "b": [[0.0, 1.0]], "c": [[0.0, 0.0]], "d": [[0.0, 1.0]]})
    assert task_scores(before, 1) == {"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.0}
    assert task_scores(before, 2) == {"a": 0.0, "b": 1.0, "c": 1.0, "d": 0.0}
    p = paired_difference(before, after, 2)
    assert p["n_tasks"] == 4 and p["diff"] == pytest.approx(0.25) and (p["improved"], p["regressed"]) == (2, 1)
    assert p["ci_low"] <= 0.25 <= p["ci_high"] and p["ci_low"] < 0  # 4 tasks: the interval is wide


def test_curriculum_selection_trains_on_the_frontier_and_says_when_there_is_none():
    from types import SimpleNamespace

    from swetrain.curriculum.mastery import MasteryMap
    from swetrain.recipes.tiny.quickstart import select_rl_tasks

    probe = [SimpleNamespace(instance_id=f"t{i}") for i in range(6)]
    mastery = MasteryMap(policy="base")
    for iid, wins in (("t0", 0), ("t1", 1), ("t2", 2), ("t3", 0), ("t4", 1), ("t5", 0)):
        mastery.refresh(iid, 2, wins, "base")
    picked, record = select_rl_tasks(mastery, probe, rl_tasks=4, seed=0)
    # 0 < p̂ < 1 only: t1 and t4 (p̂ 0.5); t2 is mastered, t0/t3/t5 never solved (no signal)
    assert [t.instance_id for t in picked] == ["t1", "t4"] and not record["fallback"]
    assert record["counts"]["saturated"] == 1 and record["counts"]["hard_zero"] == 3
    none = MasteryMap(policy="base")
    for t in probe:
        none.refresh(t.instance_id, 2, 0, "base")
    picked, record = select_rl_tasks(none, probe, rl_tasks=3, seed=0)
    assert record["fallback"] and [t.instance_id for t in picked] == ["t0", "t1", "t2"]


def test_report_notes_say_the_verdict_and_the_curriculum_plainly():
    from swetrain.recipes.tiny.quickstart import _notes

    summary = {"before": {"resolved_at_1": 0.0}, "total_s": 1418.0, "timings_s": {"eval_before_s": 470.0},
               "curriculum": {"probed": 40, "fallback": False, "counts": {"frontier": 1, "evidence": 2}},
               "paired": {"diff": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n_tasks": 60, "improved": 0, "regressed": 0}}
    notes = "\n".join(_notes(summary))
    assert "No significant change" in notes and "[+0.0, +0.0] over 60 tasks" in notes
    assert "1 frontier task (0 < p̂ < 1) and 2 evidence tasks of 40 probed" in notes
    assert "resolved no held-out task" in notes


def test_per_tier_and_frontier_figures_on_hand_made_results():
    from types import SimpleNamespace

    from swetrain.eval.evaluate import EvalResult
    from swetrain.recipes.tiny.quickstart import _notes, frontier_figures, per_tier

    def result(per_task):
        return EvalResult(0, 0, 0, len(per_task), 1, 0, per_task=per_task)

    tasks = [SimpleNamespace(instance_id=i, labels=labels) for i, labels in
             (("e1", {"tier": "easy"}), ("e2", {"tier": "easy"}), ("s1", None))]
    before = result({"e1": [[0.0, 0.0]], "e2": [[0.0, 1.0]], "s1": [[0.0, 0.0]]})
    after = result({"e1": [[1.0, float("nan")]], "e2": [[1.0, float("nan")]], "s1": [[0.0, 0.0]]})
    tiers = per_tier(before, after, tasks)
    assert set(tiers) == {"easy", "standard"} and tiers["easy"]["n_tasks"] == 2 and tiers["standard"]["n_tasks"] == 1
    assert tiers["easy"]["before"] == {"resolved_at_1": 0.0, "resolved_at_2": 0.5}
    assert tiers["easy"]["after"] == {"resolved_at_1": 1.0, "resolved_at_2": 1.0}
    assert tiers["easy"]["paired"]["diff"] == pytest.approx(0.5) and tiers["standard"]["paired"]["diff"] == 0.0
    fb = result({"t1": [[0.0], [0.0], [1.0], [0.0]], "t2": [[0.0], [0.0], [0.0], [0.0]]})
    fa = result({"t1": [[1.0], [1.0], [1.0], [0.0]], "t2": [[1.0], [0.0], [0.0], [0.0]]})
    fr = frontier_figures(fb, fa, {"fallback": False}, samples=4, seed=0)
    assert fr["before"] == pytest.approx(0.125) and fr["after"] == pytest.approx(0.5) and fr["tasks"] == ["t1", "t2"]
    # pairs are (task, sample): 3 of 8 went 0 -> 1, none 1 -> 0
    p = fr["paired"]
    assert (p["n_tasks"], p["n_pairs"], p["improved"], p["regressed"]) == (2, 8, 3, 0)
    assert p["diff"] == pytest.approx(0.375) and 0 <= p["ci_low"] < 0.375 < p["ci_high"]
    # two tasks that each gain one sample of six: the pairs' interval reaches 0, it does not sit on +16.7
    fb6 = result({"a": [[1.0]] * 5 + [[0.0]], "b": [[1.0], [0.0], [1.0], [0.0], [1.0], [1.0]]})
    fa6 = result({"a": [[1.0]] * 6, "b": [[1.0], [0.0], [1.0], [1.0], [1.0], [1.0]]})
    p6 = frontier_figures(fb6, fa6, {}, samples=6, seed=0)["paired"]
    assert p6["diff"] == pytest.approx(2 / 12) and p6["ci_low"] == 0.0 and p6["n_pairs"] == 12
    summary = {"before": {"resolved_at_1": 0.0}, "total_s": 10.0, "timings_s": {}, "curriculum": {},
               "paired": {"diff": 0.33, "ci_low": 0.0, "ci_high": 1.0, "n_tasks": 3, "improved": 1, "regressed": 0},
               "per_tier": tiers, "frontier": fr}
    notes = "\n".join(_notes(summary))
    assert "RL set (train, 2 tasks x 4 fresh single attempts): success 12.5% -> 50.0%" in notes
    assert "over 8 same-seed pairs (3 improved, 0 regressed)" in notes
    assert "Held-out easy tier (2 tasks): Resolved@2 50.0% -> 100.0%" in notes
    assert "Held-out target (Resolved@2 +5 points or more, interval above 0): not met" in notes
