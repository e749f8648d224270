"""One policy-spec grammar for every command."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.policy.spec import PolicySpecError, parse_policy_spec


def test_specs_parse_to_their_kind(tiny_path, tmp_path):
    assert parse_policy_spec(str(tiny_path)).kind == "hf"
    assert parse_policy_spec(f"hf:{tiny_path}").path == tiny_path
    assert parse_policy_spec("tiny-sft").kind == "named"
    assert parse_policy_spec("smollm2-sft").name == "smollm2-sft"
    assert parse_policy_spec("tiny:small").name == "small"
    assert parse_policy_spec("scripted:finish").kind == "scripted"
    assert parse_policy_spec("scripted-repair:7").seed == 7
    o = parse_policy_spec(f"openai:http://127.0.0.1:1/v1#tokenizer={tiny_path}")
    assert o.url == "http://127.0.0.1:1/v1" and not o.is_local_model
    with pytest.raises(PolicySpecError, match="integer"):
        parse_policy_spec("scripted-repair:x")
    with pytest.raises(PolicySpecError, match="not a folder"):
        parse_policy_spec(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(PolicySpecError, match="no config.json"):
        parse_policy_spec(str(tmp_path / "empty"))
    with pytest.raises(PolicySpecError, match="no local model folder"):
        parse_policy_spec("scripted-repair").model_path()


def test_model_folder_and_named_specs_resolve(tiny_path):
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.recipes.tiny.warmstart import SHIPPED_TINY

    assert resolve_policy_path(str(tiny_path)) == tiny_path.resolve()
    assert resolve_policy_path("tiny-sft") == SHIPPED_TINY


def test_rollout_accepts_tiny_sft_and_a_model_folder_spec(tmp_path):
    """`swetrain rollout --policy tiny-sft` used to be refused ("unknown scheme 'tiny-sft'")."""
    res = CliRunner().invoke(app, ["rollout", "--tasks", str(tmp_path / "none.jsonl"), "--policy", "tiny-sft", "--out", str(tmp_path / "r")])
    assert "unknown scheme" not in res.output and "--tasks" in res.output  # got past --policy to the tasks file
    res = CliRunner().invoke(app, ["rollout", "--tasks", "builtin", "--policy", "gpt5", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "unknown scheme 'gpt5'" in res.output
