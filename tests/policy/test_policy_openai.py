"""The openai backend against swetrain's own server on 127.0.0.1 (a real HTTP server, real model)."""

import json
import urllib.error
import urllib.request

import pytest
import torch

from swetrain.policy.base import GenerationConfig, Policy
from swetrain.policy.openai_client import OpenAIPolicy, ServerError, parse_token_id
from swetrain.policy.server import start_in_thread, stop


@pytest.fixture(scope="module")
def served(hf_policy, tiny_path):
    server, url = start_in_thread(hf_policy, model_name="tiny")
    yield url
    stop(server)


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_models_endpoint_and_client_discovery(served, tiny_path):
    with urllib.request.urlopen(served + "/models", timeout=30) as r:
        listing = json.loads(r.read())
    assert listing["data"][0]["id"] == "tiny"
    client = OpenAIPolicy(served, tokenizer_path=tiny_path)
    assert client.model == "tiny" and isinstance(client, Policy)
    assert client.max_context == listing["data"][0]["max_model_len"] == 8192  # the served model's window


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_client_matches_hf_policy(served, tiny_path, hf_policy, chat_prompt, temperature):
    client = OpenAIPolicy(served, "tiny", tiny_path)
    prompts = [chat_prompt(hf_policy.tokenizer, "hi"), chat_prompt(hf_policy.tokenizer, "run the tests " * 9)]
    cfg = GenerationConfig(max_new_tokens=16, temperature=temperature, seed=7)
    remote = client.generate(prompts, cfg)
    local = hf_policy.generate(prompts, cfg)
    for r, l in zip(remote, local):
        assert r.token_ids == l.token_ids
        assert r.text == l.text and r.finish_reason == l.finish_reason
        assert r.logprobs == pytest.approx(l.logprobs, abs=1e-4)


def test_raw_completion_reply_is_vllm_shaped(served, hf_policy, chat_prompt):
    prompt = chat_prompt(hf_policy.tokenizer, "hello")
    stop_at = hf_policy.generate([prompt], GenerationConfig(max_new_tokens=6, temperature=0))[0].token_ids[2]
    status, reply = post(
        served + "/completions",
        {"model": "tiny", "prompt": prompt, "max_tokens": 6, "temperature": 0, "logprobs": 1,
         "stop_token_ids": [stop_at], "return_tokens_as_token_ids": True},
    )
    assert status == 200
    choice = reply["choices"][0]
    ids = [parse_token_id(t) for t in choice["logprobs"]["tokens"]]
    assert ids == choice["token_ids"] and ids[-1] == stop_at and choice["finish_reason"] == "stop"
    assert reply["usage"]["completion_tokens"] == len(ids)
    assert len(choice["logprobs"]["token_logprobs"]) == len(ids)


def test_score_through_echo_matches_local(served, tiny_path, hf_policy, chat_prompt):
    client = OpenAIPolicy(served, "tiny", tiny_path)
    seqs = [chat_prompt(hf_policy.tokenizer, "a"), chat_prompt(hf_policy.tokenizer, "bcd " * 10)]
    remote = client.score(seqs, [3, 5])
    local = hf_policy.score(seqs, [3, 5])
    for r, l in zip(remote, local):
        assert r == pytest.approx(l, abs=1e-4)
    with pytest.raises(ValueError, match="temperature"):
        client.score(seqs, temperature=0.5)


def test_concurrent_requests_are_batched_identically(served, tiny_path, hf_policy, chat_prompt):
    client = OpenAIPolicy(served, "tiny", tiny_path, max_concurrency=8)
    prompts = [chat_prompt(hf_policy.tokenizer, "q" * k) for k in range(1, 9)]
    cfg = GenerationConfig(max_new_tokens=8, temperature=1.0, seed=100)
    remote = client.generate(prompts, cfg)
    local = hf_policy.generate(prompts, cfg)
    assert [g.token_ids for g in remote] == [g.token_ids for g in local]


def test_engine_chains_call_the_client_concurrently(served, tiny_path, hf_policy, chat_prompt):
    """The rollout engine does not serialise an OpenAI client: threads calling it at once get
    the same results as one call after another (the server batches them)."""
    from concurrent.futures import ThreadPoolExecutor

    from swetrain.rollout.engine import RolloutEngine

    client = OpenAIPolicy(served, "tiny", tiny_path)
    assert RolloutEngine(client, backend="local", workers=3)._local_policy() is client
    prompts = [chat_prompt(hf_policy.tokenizer, "w" * k) for k in range(1, 5)]
    cfg = GenerationConfig(max_new_tokens=8, temperature=1.0, seed=3)
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda p: client.generate([p], cfg)[0].token_ids, prompts))
    assert together == [client.generate([p], cfg)[0].token_ids for p in prompts]


def test_bad_requests_get_clear_400s(served):
    cases = [
        ({"prompt": [1, 2], "max_tokens": 0}, "max_tokens"),
        ({"prompt": [1, 10**8]}, "token id"),
        ({"prompt": {"x": 1}}, "prompt"),
        ({"prompt": [1, 2], "top_p": 2}, "top_p"),
        ({"prompt": [1, 2], "n": 3}, "'n'"),
        ({"prompt": [1, 2], "model": "other"}, "not served"),
    ]
    for body, needle in cases:
        status, reply = post(served + "/completions", body)
        assert status == 400, body
        assert needle in reply["error"]["message"], (body, reply)
    status, reply = post(served + "/nowhere", {})
    assert status == 404


def test_chat_completions_render_the_template(served, hf_policy):
    status, reply = post(
        served + "/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 0, "logprobs": True},
    )
    assert status == 200
    choice = reply["choices"][0]
    prompt = hf_policy.tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=True)
    ids = list(prompt["input_ids"] if hasattr(prompt, "keys") else prompt)
    local = hf_policy.generate([ids], GenerationConfig(max_new_tokens=5, temperature=0))[0]
    assert choice["token_ids"] == local.token_ids and choice["message"]["content"] == local.text


def test_sync_weights_over_http(tiny_path, chat_prompt):
    from swetrain.policy.hf import HFPolicy

    policy = HFPolicy(tiny_path, device="cpu")
    server, url = start_in_thread(policy, model_name="tiny")
    try:
        client = OpenAIPolicy(url, "tiny", tiny_path)
        prompt = chat_prompt(policy.tokenizer, "hi")
        before = client.score([prompt + [9, 10]])[0]
        torch.manual_seed(1)
        new = {k: v + 0.05 * torch.randn_like(v) for k, v in policy.model.state_dict().items()}
        client.sync_weights(new)
        assert client.version == policy.version == 1
        after = client.score([prompt + [9, 10]])[0]
        assert max(abs(a - b) for a, b in zip(before, after)) > 1e-3
        with pytest.raises(ServerError, match="400"):
            client.sync_weights({"bogus.weight": torch.zeros(2)})
    finally:
        stop(server)


def test_unreachable_server_and_bad_url(tiny_path):
    with pytest.raises(ValueError, match="base_url"):
        OpenAIPolicy("localhost:1/v1", "m", tiny_path)
    with pytest.raises(ServerError, match="cannot reach"):
        OpenAIPolicy("http://127.0.0.1:9/v1", None, tiny_path, timeout=5)


def test_slow_or_garbled_server_gives_server_error():
    """A response that never comes, or a 200 that is not JSON, is a ServerError (not a raw OSError)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            if self.path.endswith("/completions") and b"slow" in self.server.mode:
                threading.Event().wait(1.5)
            data = b"<html>bad gateway</html>"
            try:
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        client = OpenAIPolicy(f"http://127.0.0.1:{srv.server_address[1]}/v1", "m", tokenizer=object(), timeout=0.3)
        srv.mode = b"slow"
        with pytest.raises(ServerError, match="no answer within 0.3 s"):
            client.generate([[1, 2, 3]], GenerationConfig(max_new_tokens=4))
        srv.mode = b""
        with pytest.raises(ServerError, match="reply is not JSON"):
            client.generate([[1, 2, 3]], GenerationConfig(max_new_tokens=4))
    finally:
        srv.shutdown()
        srv.server_close()
