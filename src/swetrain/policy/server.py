"""swetrain's own small OpenAI-compatible server, serving any ``HFPolicy`` (stdlib HTTP only).

It speaks the subset of the vLLM/OpenAI completions API that token-exact RL needs, so the
``openai`` client backend works the same against it and against a real vLLM/SGLang server:

* ``GET  /v1/models``
* ``POST /v1/completions``: ``prompt`` as token ids (``[1, 2, 3]``), a list of them, a string or a
  list of strings; ``max_tokens``, ``temperature``, ``top_p``, ``top_k``, ``seed``, ``logprobs`` (the sampled
  token's log-prob; ``top_logprobs`` lists only the sampled token), ``stop_token_ids``,
  ``return_tokens_as_token_ids`` (tokens reported as ``"token_id:<id>"``, as vLLM does), ``echo``
  (prompt log-probs, first one ``null``). Each choice also carries ``token_ids`` (vLLM's
  ``return_token_ids``). Several prompts in one request sample with seeds ``seed + i``.
* ``POST /v1/chat/completions``: ``messages`` (+ ``tools``) rendered with the model's chat
  template; returns the raw assistant text (tool-call parsing is the agent's job) and ``token_ids``.
* ``POST /swetrain/sync_weights``: a safetensors blob of weights (swetrain extension, used by
  ``OpenAIPolicy.sync_weights``); ``GET /swetrain/version``.

Concurrent requests are gathered by one worker thread into batched ``generate`` calls (requests
with the same sampling settings share a left-padded batch; each keeps its own seed).
Log-probs follow ``swetrain.policy.hf``: log_softmax(logits / temperature) before top-p.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from swetrain.policy.base import Generation, GenerationConfig, Policy

log = logging.getLogger(__name__)

MAX_BATCH = 32


class RequestError(ValueError):
    """A bad request: reported to the client as HTTP 400 with the message."""


@dataclass
class _Job:
    prompt: list[int]
    config: GenerationConfig
    seed: int | None
    future: Future = field(default_factory=Future)

    def key(self) -> tuple:
        c = self.config
        return (c.max_new_tokens, c.temperature, c.top_p, c.top_k, tuple(sorted(c.stop_token_ids)))


class Batcher:
    """One worker thread that turns concurrent generate jobs into batched ``generate`` calls."""

    def __init__(self, policy: Policy, max_batch: int = MAX_BATCH) -> None:
        self.policy = policy
        self.max_batch = max_batch
        self.lock = threading.Lock()  # held while the model runs (generate, score, weight sync)
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="swetrain-batcher", daemon=True)
        self._thread.start()

    def submit(self, prompts: list[list[int]], config: GenerationConfig, seeds: list[int | None]) -> list[Generation]:
        jobs = [_Job(p, config, s) for p, s in zip(prompts, seeds)]
        for job in jobs:
            self._queue.put(job)
        return [job.future.result() for job in jobs]

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            jobs = [first]
            while len(jobs) < self.max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._queue.put(None)
                    break
                jobs.append(nxt)
            groups: dict[tuple, list[_Job]] = {}
            for job in jobs:
                groups.setdefault(job.key(), []).append(job)
            for group in groups.values():
                try:
                    with self.lock:
                        gens = self.policy.generate(
                            [j.prompt for j in group], group[0].config, seeds=[j.seed for j in group]
                        )
                    for job, gen in zip(group, gens):
                        job.future.set_result(gen)
                except Exception as exc:  # reported to each waiting request
                    for job in group:
                        if not job.future.done():
                            job.future.set_exception(exc)


def _number(body: dict, name: str, default: Any, kind: type, low: float | None = None) -> Any:
    value = body.get(name, default)
    if value is None:
        return default
    if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
        raise RequestError(f"'{name}' must be an integer, got {value!r}")
    if kind is float and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        raise RequestError(f"'{name}' must be a number, got {value!r}")
    if low is not None and value < low:
        raise RequestError(f"'{name}' must be >= {low}, got {value!r}")
    return kind(value)


class PolicyServer:
    """The request logic, independent of HTTP plumbing (easy to test and to embed)."""

    def __init__(self, policy: Policy, model_name: str) -> None:
        self.policy = policy
        self.model_name = model_name
        self.batcher = Batcher(policy)

    # ---------------------------------------------------------------- helpers
    def _prompts(self, prompt: Any) -> list[list[int]]:
        tok = self.policy.tokenizer
        if isinstance(prompt, str):
            return [tok.encode(prompt, add_special_tokens=False)]
        if isinstance(prompt, list) and prompt and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
            return [list(prompt)]
        if isinstance(prompt, list) and prompt:
            out = []
            for item in prompt:
                if isinstance(item, str):
                    out.append(tok.encode(item, add_special_tokens=False))
                elif isinstance(item, list) and item and all(isinstance(t, int) and not isinstance(t, bool) for t in item):
                    out.append(list(item))
                else:
                    raise RequestError(f"'prompt' items must be strings or non-empty lists of token ids, got {item!r:.60}")
            return out
        raise RequestError(f"'prompt' must be a string, token ids or a list of those, got {prompt!r:.60}")

    def _sampling(self, body: dict, default_max: int) -> GenerationConfig:
        if body.get("stream"):
            raise RequestError("'stream' is not supported by the swetrain server")
        if _number(body, "n", 1, int) != 1:
            raise RequestError("'n' must be 1 (send the prompt several times with different seeds)")
        stop_ids = body.get("stop_token_ids") or []
        if not isinstance(stop_ids, list) or not all(isinstance(t, int) for t in stop_ids):
            raise RequestError(f"'stop_token_ids' must be a list of integers, got {stop_ids!r:.60}")
        if body.get("stop"):
            raise RequestError("'stop' strings are not supported; use 'stop_token_ids'")
        config = GenerationConfig(
            max_new_tokens=_number(body, "max_tokens", default_max, int, 1),
            temperature=_number(body, "temperature", 1.0, float, 0),
            top_p=_number(body, "top_p", 1.0, float),
            top_k=max(_number(body, "top_k", 0, int), 0),  # vLLM's -1 = no cut
            stop_token_ids=list(stop_ids),
            seed=_number(body, "seed", None, int),
        )
        if not 0 < config.top_p <= 1:
            raise RequestError(f"'top_p' must be in (0, 1], got {config.top_p!r}")
        return config

    def _token_label(self, token_id: int, as_ids: bool) -> str:
        if as_ids:
            return f"token_id:{token_id}"
        return self.policy.tokenizer.decode([token_id], skip_special_tokens=False)

    def _logprobs_block(self, ids: list[int], lps: list[float | None], as_ids: bool) -> dict:
        tokens = [self._token_label(t, as_ids) for t in ids]
        offsets, pos = [], 0
        for label in tokens:
            offsets.append(pos)
            pos += 0 if as_ids else len(label)
        return {
            "tokens": tokens,
            "token_logprobs": lps,
            "top_logprobs": [None if lp is None else {label: lp} for label, lp in zip(tokens, lps)],
            "text_offset": offsets,
        }

    def _generate(self, prompts: list[list[int]], config: GenerationConfig) -> list[Generation]:
        from swetrain.policy.hf import validate_ids

        try:
            validate_ids(prompts, self.policy.vocab_size, "prompt")
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        limit = getattr(self.policy, "max_positions", None)
        for p in prompts:
            if limit and len(p) >= limit:
                raise RequestError(f"prompt of {len(p)} tokens exceeds the model context of {limit}")
        seeds = [None if config.seed is None else config.seed + i for i in range(len(prompts))]
        return self.batcher.submit(prompts, config, seeds)

    # -------------------------------------------------------------- endpoints
    def models(self) -> dict:
        return {
            "object": "list",
            "data": [
                {
                    "id": self.model_name,
                    "object": "model",
                    "created": 0,
                    "owned_by": "swetrain",
                    "max_model_len": getattr(self.policy, "max_positions", None),
                }
            ],
        }

    def completions(self, body: dict) -> dict:
        self._check_model(body)
        prompts = self._prompts(body.get("prompt"))
        config = self._sampling(body, default_max=16)
        want_logprobs = body.get("logprobs") is not None and body.get("logprobs") is not False
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        echo = bool(body.get("echo"))
        gens = self._generate(prompts, config)
        prompt_lps: list[list[float]] = []
        if echo and want_logprobs:
            with self.batcher.lock:
                prompt_lps = self.policy.score(prompts) if prompts else []
        choices = []
        for i, (prompt, gen) in enumerate(zip(prompts, gens)):
            ids, lps = list(gen.token_ids), list(gen.logprobs)
            text = gen.text
            if echo:
                text = self.policy.tokenizer.decode(prompt, skip_special_tokens=False) + text
            choice: dict[str, Any] = {
                "index": i,
                "text": text,
                "logprobs": None,
                "finish_reason": gen.finish_reason,
                "stop_reason": gen.token_ids[-1] if gen.finish_reason == "stop" else None,
                "token_ids": ids,
                "prompt_token_ids": prompt,
            }
            if want_logprobs:
                shown_ids = (prompt + ids) if echo else ids
                shown_lps: list[float | None] = ([None] + prompt_lps[i] + lps) if echo else lps
                choice["logprobs"] = self._logprobs_block(shown_ids, shown_lps, as_ids)
            choices.append(choice)
        n_prompt = sum(len(p) for p in prompts)
        n_out = sum(len(g.token_ids) for g in gens)
        return {
            "id": f"cmpl-{uuid.uuid4().hex}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": choices,
            "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_out, "total_tokens": n_prompt + n_out},
        }

    def chat_completions(self, body: dict) -> dict:
        self._check_model(body)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError("'messages' must be a non-empty list of chat messages")
        try:
            rendered = self.policy.tokenizer.apply_chat_template(
                messages, tools=body.get("tools"), add_generation_prompt=True, tokenize=True
            )
        except Exception as exc:
            raise RequestError(f"'messages' could not be rendered with the chat template: {exc}") from None
        prompt = list(rendered["input_ids"] if hasattr(rendered, "keys") else rendered)
        config = self._sampling(body, default_max=256)
        gen = self._generate([prompt], config)[0]
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": gen.text},
            "finish_reason": gen.finish_reason,
            "token_ids": list(gen.token_ids),
            "logprobs": None,
        }
        if body.get("logprobs"):
            choice["logprobs"] = {
                "content": [
                    {"token": f"token_id:{t}", "logprob": lp, "top_logprobs": []}
                    for t, lp in zip(gen.token_ids, gen.logprobs)
                ]
            }
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": len(gen.token_ids),
                "total_tokens": len(prompt) + len(gen.token_ids),
            },
        }

    def sync_weights(self, blob: bytes) -> dict:
        from safetensors.torch import load as load_safetensors

        try:
            state = load_safetensors(blob)
        except Exception as exc:
            raise RequestError(f"body is not a safetensors blob: {exc}") from None
        with self.batcher.lock:
            try:
                self.policy.sync_weights(state)
            except (KeyError, ValueError) as exc:
                raise RequestError(f"sync_weights: {exc}") from None
        return {"version": self.policy.version}

    def _check_model(self, body: dict) -> None:
        model = body.get("model")
        if model is not None and model != self.model_name:
            raise RequestError(f"model {model!r} is not served here (this server serves {self.model_name!r})")


def _handler_class(app: PolicyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:  # route access logs to logging
            log.debug("%s " + fmt, self.address_string(), *args)

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": status}})

        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            path = self.path.split("?")[0].rstrip("/")
            if path == "/v1/models":
                self._send(200, app.models())
            elif path == "/swetrain/version":
                self._send(200, {"version": app.policy.version})
            elif path == "/health":
                self._send(200, {"status": "ok"})
            else:
                self._error(404, f"no route GET {path}")

        def do_POST(self) -> None:  # noqa: N802
            path = self.path.split("?")[0].rstrip("/")
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                if path == "/swetrain/sync_weights":
                    self._send(200, app.sync_weights(raw))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError as exc:
                    raise RequestError(f"request body is not JSON: {exc}") from None
                if not isinstance(body, dict):
                    raise RequestError("request body must be a JSON object")
                if path == "/v1/completions":
                    self._send(200, app.completions(body))
                elif path == "/v1/chat/completions":
                    self._send(200, app.chat_completions(body))
                else:
                    self._error(404, f"no route POST {path}")
            except RequestError as exc:
                self._error(400, str(exc))
            except ValueError as exc:  # validation errors from the policy
                self._error(400, str(exc))
            except Exception as exc:  # keep serving; report the failure
                log.exception("request %s failed", path)
                self._error(int(HTTPStatus.INTERNAL_SERVER_ERROR), f"{type(exc).__name__}: {exc}")

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(policy: Policy, host: str = "127.0.0.1", port: int = 0, model_name: str = "swetrain") -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) for ``policy``; ``port=0`` picks a free port.

    The bound address is ``server.server_address``; call ``serve_forever()`` (in a thread if you
    like) and ``shutdown()`` + ``server_close()`` to stop. ``server.app`` is the ``PolicyServer``.
    """
    app = PolicyServer(policy, model_name)
    server = _Server((host, port), _handler_class(app))
    server.app = app  # type: ignore[attr-defined]
    return server


def start_in_thread(policy: Policy, host: str = "127.0.0.1", port: int = 0, model_name: str = "swetrain"):
    """Start serving in a daemon thread; returns ``(server, base_url)``, base_url ending in ``/v1``."""
    server = make_server(policy, host, port, model_name)
    thread = threading.Thread(target=server.serve_forever, name="swetrain-server", daemon=True)
    thread.start()
    bound_host, bound_port = server.server_address[:2]
    return server, f"http://{bound_host}:{bound_port}/v1"


def stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()
    server.app.batcher.close()  # type: ignore[attr-defined]
