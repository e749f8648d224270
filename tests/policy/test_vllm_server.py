"""``swetrain policy serve --engine vllm``: the server command and its errors.

The server itself runs in the vLLM job (``tests/policy/test_policy_vllm.py``, ``bash .ci/vllm``)."""

import importlib.util
import json
import sys

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.policy.vllm_server import CPU_BATCH_WINDOWS, VLLMServerError, model_window, server_command, server_env


def _flag(argv, name):
    return argv[argv.index(name) + 1]


def test_command_carries_the_flags_swetrain_clients_need(tiny_path):
    window = json.loads((tiny_path / "config.json").read_text())["max_position_embeddings"]
    assert model_window(tiny_path) == window
    argv = server_command(tiny_path, python="/py", host="127.0.0.1", port=18001, name="tiny")
    assert argv[:3] == ["/py", "-m", "vllm.entrypoints.openai.api_server"]
    assert _flag(argv, "--model") == str(tiny_path) and _flag(argv, "--served-model-name") == "tiny"
    assert _flag(argv, "--logprobs-mode") == "processed_logprobs" and "--enable-prefix-caching" in argv
    assert _flag(argv, "--max-model-len") == str(window)
    assert _flag(argv, "--max-num-batched-tokens") == str(CPU_BATCH_WINDOWS * window)  # no split prefill on CPU
    small = server_command(tiny_path, python="/py", host="h", port=1, name="t", max_model_len=512, cpu=False,
                           extra=["--enforce-eager"])
    assert _flag(small, "--max-model-len") == "512" and "--max-num-batched-tokens" not in small
    assert small[-1] == "--enforce-eager"
    mine = server_command(tiny_path, python="/py", host="h", port=1, name="t", extra=["--max-num-batched-tokens", "99"])
    assert mine.count("--max-num-batched-tokens") == 1 and _flag(mine, "--max-num-batched-tokens") == "99"


def test_environment_is_offline_and_sizes_the_cpu_kv_cache():
    env = server_env(cpu=True, base={"PATH": "/bin"})
    assert env["HF_HUB_OFFLINE"] == "1" and env["VLLM_NO_USAGE_STATS"] == "1" and env["VLLM_CPU_KVCACHE_SPACE"]
    assert server_env(cpu=True, base={"VLLM_CPU_KVCACHE_SPACE": "9"})["VLLM_CPU_KVCACHE_SPACE"] == "9"
    assert "VLLM_CPU_KVCACHE_SPACE" not in server_env(cpu=False, base={})


def test_bad_inputs_name_the_input(tiny_path, tmp_path):
    with pytest.raises(VLLMServerError, match="--port 0"):
        server_command(tiny_path, python="/py", host="h", port=0, name="t")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(VLLMServerError, match="max_position_embeddings"):
        server_command(tmp_path, python="/py", host="h", port=1, name="t")
    runner = CliRunner()
    bad_engine = runner.invoke(app, ["policy", "serve", "--model", str(tiny_path), "--engine", "tgi"])
    assert bad_engine.exit_code == 2 and "--engine 'tgi'" in bad_engine.output
    missing = runner.invoke(app, ["policy", "serve", "--model", str(tiny_path), "--engine", "vllm", "--port", "18002",
                                  "--vllm-python", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "cannot run it" in missing.output


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_interpreter_without_vllm_is_refused(tiny_path):
    result = CliRunner().invoke(app, ["policy", "serve", "--model", str(tiny_path), "--engine", "vllm",
                                      "--port", "18003", "--vllm-python", sys.executable])
    assert result.exit_code == 2
    assert f"--vllm-python {sys.executable}: cannot import vllm" in result.output and ".ci/vllm" in result.output
