"""The CLI commands, run as real subprocesses."""

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from swetrain.policy.base import GenerationConfig
from swetrain.policy.openai_client import OpenAIPolicy

ENV = {**os.environ, "SWETRAIN_TORCH_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def test_tiny_command_builds_a_model(tmp_path):
    from typer.testing import CliRunner

    from swetrain.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["policy", "tiny", "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert "parameters" in result.output and (tmp_path / "m" / "model.safetensors").is_file()
    again = runner.invoke(app, ["policy", "tiny", "--out", str(tmp_path / "m")])
    assert again.exit_code == 2 and "not empty" in again.output


@pytest.mark.slow
def test_serve_command_answers_like_hf(tiny_path, hf_policy, chat_prompt):
    proc = subprocess.Popen(
        [sys.executable, "-m", "swetrain.cli", "policy", "serve", "--model", str(tiny_path), "--port", "0", "--name", "tiny"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV,
    )
    try:
        url = None
        deadline = time.time() + 120
        while time.time() < deadline and url is None:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            if line.startswith("serving"):
                url = line.split(" on ")[1].strip()
        assert url, "server did not start"
        with urllib.request.urlopen(url + "/models", timeout=30) as r:
            assert json.loads(r.read())["data"][0]["id"] == "tiny"
        client = OpenAIPolicy(url, "tiny", tiny_path)
        prompt = chat_prompt(hf_policy.tokenizer, "hello")
        cfg = GenerationConfig(max_new_tokens=8, temperature=0)
        assert client.generate([prompt], cfg)[0].token_ids == hf_policy.generate([prompt], cfg)[0].token_ids
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_rejects_bad_model():
    from typer.testing import CliRunner

    from swetrain.cli import app

    result = CliRunner().invoke(app, ["policy", "serve", "--model", "nope:thing"])
    assert result.exit_code == 2 and "unknown scheme" in result.output
