"""The quickstart's mastery prior: the shipped file, its weights check, the probe order and pooling."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from swetrain.curriculum.mastery import MasteryError, MasteryMap
from swetrain.recipes.tiny.mastery_prior import (
    SHIPPED, MasteryPrior, adapter_sha256, load_prior, probe_order, resolve_prior, seed_map, weights_sha256,
)


@dataclass
class _Task:
    instance_id: str


def _prior(tmp_path, counts: dict[str, tuple[int, int]], sha: str = "0" * 64) -> MasteryPrior:
    m = MasteryMap(policy="p")
    for iid, (n, k) in counts.items():
        m.refresh(iid, n, k, "base")
    return MasteryPrior(m, sha, {"rollouts": 4}, str(tmp_path / "prior.json"))


def test_probe_order_puts_the_prior_frontier_first_then_saturated_then_the_rest(tmp_path):
    prior = _prior(tmp_path, {"half": (4, 2), "quarter": (4, 1), "all": (4, 4), "none": (4, 0)})
    tasks = [_Task(i) for i in ("a", "none", "all", "quarter", "b", "half", "c")]
    order = [t.instance_id for t in probe_order(tasks, prior, seed=3)]
    assert order[:3] == ["half", "quarter", "all"]  # p(1-p) 0.25 before 0.1875, then the saturated task
    assert sorted(order[3:]) == ["a", "b", "c", "none"]
    # without a prior: a seeded shuffle of every task, the same for the same seed
    plain = [t.instance_id for t in probe_order(tasks, None, seed=3)]
    assert sorted(plain) == sorted(t.instance_id for t in tasks) and plain == [t.instance_id for t in probe_order(tasks, None, seed=3)]


def test_seed_map_pools_the_prior_with_the_run_probe_of_the_same_phase(tmp_path):
    prior = _prior(tmp_path, {"x": (4, 1), "y": (4, 0)})
    run = MasteryMap(policy="p")
    assert seed_map(run, prior, ["x", "y", "unknown"]) == 2
    run.refresh("x", 2, 1, "base")  # the quickstart's probe: same weights, same phase
    assert run.instances["x"].current.rollouts == 6 and run.p_hat("x") == pytest.approx(2 / 6)
    assert run.instances["x"].ever_solved and not run.instances["y"].ever_solved
    assert seed_map(run, None, ["x"]) == 0


def test_prior_round_trip_and_weights_check(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights")
    sha = weights_sha256(model)
    prior = _prior(tmp_path, {"x": (4, 1)}, sha=sha)
    path = prior.save(tmp_path / "prior.json")
    back = load_prior(path)
    assert back.weights_sha256 == sha and back.mastery.p_hat("x") == 0.25 and back.settings["rollouts"] == 4
    used, note = resolve_prior(str(path), "tiny-sft", model)
    assert used is not None and "1 train tasks measured offline" in note
    (model / "model.safetensors").write_bytes(b"other weights")  # a rebuilt warm start is another policy
    unused, note = resolve_prior(str(path), "tiny-sft", model)
    assert unused is None and "not used" in note and sha[:12] in note
    assert resolve_prior("none", "tiny-sft", model)[0] is None
    assert resolve_prior("shipped", "no-such-spec", model) == (None, "no mastery prior ships for policy 'no-such-spec'")


def test_a_merge_of_the_same_shipped_adapter_keeps_its_prior_on_another_cpu(tmp_path):
    model = tmp_path / "merged"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"merge rounded on this CPU")
    adapter = "ab" * 32
    (model / "warmstart.json").write_text(json.dumps({"merged_from": "x.adapter", "adapter_sha256": adapter}))
    assert adapter_sha256(model) == adapter
    prior = _prior(tmp_path, {"x": (4, 2)}, sha="0" * 64)  # measured on a merge with other rounding
    prior.adapter_sha256 = adapter
    path = prior.save(tmp_path / "prior.json")
    assert load_prior(path).adapter_sha256 == adapter
    used, note = resolve_prior(str(path), "smollm2-easy-sft", model)
    assert used is not None and "same shipped adapter" in note
    (model / "warmstart.json").write_text(json.dumps({"adapter_sha256": "cd" * 32}))  # another adapter
    assert resolve_prior(str(path), "smollm2-easy-sft", model)[0] is None
    (model / "warmstart.json").write_text("{broken")
    assert adapter_sha256(model) is None and resolve_prior(str(path), "smollm2-easy-sft", model)[0] is None
    bad = json.loads(path.read_text())
    bad["adapter_sha256"] = "short"
    path.write_text(json.dumps(bad))
    with pytest.raises(MasteryError, match="adapter_sha256"):
        load_prior(path)


def test_bad_prior_files_name_the_file_and_the_problem(tmp_path):
    cases = {
        "missing.json": None,
        "broken.json": "{not json",
        "other.json": json.dumps({"format": "swetrain-mastery", "version": 1, "instances": {}}),
        "version.json": json.dumps({"format": "swetrain-mastery-prior", "version": 99}),
        "sha.json": json.dumps({"format": "swetrain-mastery-prior", "version": 1, "weights_sha256": "abc"}),
        "map.json": json.dumps({"format": "swetrain-mastery-prior", "version": 1, "weights_sha256": "0" * 64,
                                "mastery": {"format": "nope"}}),
    }
    for name, text in cases.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        with pytest.raises(MasteryError) as err:
            load_prior(path)
        assert str(path) in str(err.value), name


def test_the_shipped_prior_matches_the_shipped_tiny_sft_weights():
    from swetrain.recipes.tiny.warmstart import SHIPPED_TINY

    prior = load_prior(SHIPPED["tiny-sft"])
    assert prior.weights_sha256 == weights_sha256(SHIPPED_TINY)
    # measured on train tasks only, with the quickstart's sampling settings
    from swetrain.tasks.builtin import load_builtin

    heldout = {t.instance_id for t in load_builtin(split="heldout")}
    assert prior.mastery.instances and not set(prior.mastery.instances) & heldout
    assert prior.settings["split"] == "train" and prior.settings["rollouts"] >= 2


def test_the_shipped_smollm2_prior_names_the_shipped_adapter_and_only_easy_train_tasks():
    import hashlib

    from swetrain.recipes.tiny.shipped_adapter import SHIPPED_ADAPTERS
    from swetrain.tasks.builtin import load_builtin
    from swetrain.tasks.record import task_tier

    prior = load_prior(SHIPPED["smollm2-easy-sft"])
    adapter = SHIPPED_ADAPTERS["smollm2-easy"] / "adapter.safetensors"
    assert prior.adapter_sha256 == hashlib.sha256(adapter.read_bytes()).hexdigest()
    easy_train = {t.instance_id for t in load_builtin(split="train") if task_tier(t) == "easy"}
    assert set(prior.mastery.instances) == easy_train  # every crash-tier train task, nothing held out
    assert prior.settings["tier"] == "easy" and prior.settings["dtype"] == "bf16-native"
    frontier = [i for i in easy_train if 0 < prior.mastery.p_hat(i) < 1]
    assert frontier  # the tasks the quickstart's RL set comes from: solved sometimes, not always
