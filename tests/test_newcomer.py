"""What a newcomer trips over (issue 29, item 5): each refusal is one clear line, and nothing of an
earlier run is mixed or replaced. Real CLI, real run folders, real models (no mocks)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from swetrain.cli import app

runner = CliRunner()


def _flat(text: str) -> str:
    """CLI output as one line (rich's error panel wraps and boxes long messages in tests)."""
    import re

    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _cli(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The installed entry point's code path (``swetrain.cli.main``, with its one-line handlers)."""
    return subprocess.run([sys.executable, "-c", "from swetrain.cli import main; main()", *argv],
                          capture_output=True, text=True, timeout=timeout)


def test_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("swetrain ")


def test_help_does_not_cut_option_names_at_80_columns():
    import os

    res = subprocess.run([sys.executable, "-c", "from swetrain.cli import main; main()", "rollout", "--help"],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert res.returncode == 0
    assert "--max-infra-fraction" in res.stdout and "…" not in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) <= 80


def test_rollout_refuses_a_folder_holding_another_run(tmp_path):
    out = tmp_path / "run"
    base = ["rollout", "--tasks", "builtin", "--split", "heldout", "--limit", "1", "--group", "1", "--attempts", "1",
            "--max-turns", "2", "--out", str(out)]
    first = runner.invoke(app, [*base, "--policy", "scripted-repair"])
    assert first.exit_code == 0, first.output
    record = json.loads((out / "rollout.json").read_text())
    again = runner.invoke(app, [*base, "--policy", "scripted-repair:1"])
    assert again.exit_code == 2 and "holds another rollout run" in _flat(again.output)
    assert "scripted-repair:1" in _flat(again.output)
    assert json.loads((out / "rollout.json").read_text()) == record  # not rewritten
    resumed = runner.invoke(app, [*base, "--policy", "scripted-repair"])  # the same settings resume it
    assert resumed.exit_code == 0 and "1 trajectories stored, 0 new" in _flat(resumed.output)


def test_split_typos_are_blamed_on_split():
    res = runner.invoke(app, ["eval", "--policy", "scripted-repair", "--split", "heldot", "--out", "/tmp/never"])
    assert res.exit_code == 2 and "--split" in res.output and "heldot" in _flat(res.output)


def test_train_resume_refuses_another_recipe(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.yaml").write_text(yaml.safe_dump({"recipe": "grpo", "policy": "tiny-sft"}))
    (out / "metrics.jsonl").write_text("")
    res = runner.invoke(app, ["train", "--recipe", "fcswe", "--out", str(out), "--resume", "policy=tiny-sft"])
    assert res.exit_code == 2 and "holds another run" in _flat(res.output) and "grpo" in res.output
    assert yaml.safe_load((out / "config.yaml").read_text())["recipe"] == "grpo"


def test_sft_refuses_a_missing_store_and_a_non_empty_out(tmp_path):
    res = runner.invoke(app, ["sft", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "m")])
    assert res.exit_code == 2 and "no trajectory store there" in _flat(res.output)
    (tmp_path / "run" / "trajectories").mkdir(parents=True)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    res = runner.invoke(app, ["sft", "--data", str(tmp_path / "run"), "--out", str(tmp_path / "m")])
    assert res.exit_code == 2 and "--force" in res.output
    assert (tmp_path / "m" / "config.json").read_text() == "{}"


def test_a_checkpoint_folder_or_run_directory_is_a_policy(tmp_path):
    from swetrain.policy.spec import parse_policy_spec
    from swetrain.policy.tiny import ensure_tiny

    step = tmp_path / "run" / "checkpoints" / "step-00000002"
    shutil.copytree(ensure_tiny(), step / "model")
    (tmp_path / "run" / "checkpoints" / "latest.json").write_text(json.dumps({"path": step.name, "step": 2}))
    for spec in (step, tmp_path / "run", tmp_path / "run" / "checkpoints", f"hf:{step}"):
        assert parse_policy_spec(str(spec)).path == step / "model", spec
    with pytest.raises(ValueError, match="nor a training checkpoint"):
        parse_policy_spec(str(tmp_path))


def test_untrained_policy_is_warned_about(tmp_path):
    from swetrain.policy.spec import untrained_warning

    assert "untrained" in untrained_warning("tiny") and untrained_warning("tiny-sft") is None


def test_warmstart_of_a_shipped_base_builds_nothing():
    res = runner.invoke(app, ["warmstart", "--base", "tiny"])
    assert res.exit_code == 0 and "ships with swetrain" in _flat(res.output) and "--force" in res.output


def test_warm_start_leaves_no_building_folder(tmp_path):
    from swetrain.recipes.tiny.warmstart import _remove_stale_builds

    out = tmp_path / "tiny-sft-x"
    dead = tmp_path / ".tiny-sft-x.999999999.building"
    dead.mkdir()
    _remove_stale_builds(out)
    assert not dead.exists()


def test_smollm2_without_its_extra_is_one_line(tmp_path):
    from swetrain.policy.smollm2 import available

    if available()[0]:
        pytest.skip("SmolLM2 is installed here; .ci/fresh checks this refusal in a venv without extras")
    res = _cli("eval", "--policy", "smollm2-sft", "--split", "heldout", "--limit", "1", "--out", str(tmp_path / "e"))
    lines = [line for line in res.stderr.splitlines() if line.strip() and not line.startswith("swetrain: ")]
    assert res.returncode == 2 and len(lines) == 1 and "pip install" in lines[0], res.stderr[-800:]


def test_unreachable_policy_server_is_one_line(tmp_path):
    from swetrain.policy.tiny import ensure_tiny

    spec = f"openai:http://127.0.0.1:9/v1#model=x&tokenizer={ensure_tiny()}"
    res = _cli("eval", "--policy", spec, "--split", "heldout", "--limit", "1", "--out", str(tmp_path / "e"))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "cannot reach the server" in res.stderr.strip().splitlines()[-1]


def test_verify_exits_3_on_an_infrastructure_failure_with_a_docker_hint(tmp_path):
    from swetrain.tasks.builtin import load_builtin

    task = load_builtin(split="heldout")[0]
    row = task.to_row() | {"environment": "docker://example/never:latest", "source": None}
    (tmp_path / "t.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "p.diff").write_text(task.patch)
    res = runner.invoke(app, ["verify", "--tasks", str(tmp_path / "t.jsonl"), "--instance", task.instance_id,
                              "--patch", str(tmp_path / "p.diff")])
    assert res.exit_code == 3 and "--sandbox docker" in _flat(res.output)
