"""The ``openai`` backend: a ``Policy`` over an OpenAI-compatible ``/v1/completions`` endpoint.

Works against swetrain's own server (``swetrain policy serve``) and against vLLM/SGLang servers:
prompts are sent as token ids, one request per prompt (concurrently) with seed ``seed + i``,
``logprobs=1`` and ``return_tokens_as_token_ids=true`` so that the sampled ids come back exactly
(from ``choices[].token_ids`` when the server returns them, else parsed from ``"token_id:<id>"``
tokens). The text is decoded locally with the same rule as ``HFPolicy`` (ids without a final stop
token, special tokens kept), so both backends return identical ``Generation`` objects.

Behaviour log-probs are whatever the server reports for the sampled token. swetrain's server and
``HFPolicy`` report log_softmax(logits / T); start vLLM with ``--logprobs-mode processed_logprobs``
to get the same convention (its default, ``raw_logprobs``, ignores the temperature).
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from swetrain.policy.base import Generation, GenerationConfig


class ServerError(RuntimeError):
    """The server answered with an error or something that is not a completion."""


class OpenAIPolicy:
    """``Policy`` backed by an OpenAI-compatible server (token-id prompts, returned token ids).

    Every call is a set of independent HTTP requests, so the rollout engine lets its chains call
    it concurrently (``thread_safe``) and the server batches them (vLLM, SGLang, ``swetrain policy
    serve``); serialising the calls would leave a server with one request at a time.
    """

    thread_safe = True

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        tokenizer_path: str | os.PathLike | None = None,
        *,
        timeout: float = 600.0,
        max_concurrency: int = 16,
        api_key: str | None = None,
        tokenizer: Any = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url={base_url!r}: expected http(s)://HOST:PORT/v1")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_concurrency = max(1, int(max_concurrency))
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if tokenizer is None:
            if tokenizer_path is None:
                raise ValueError("OpenAIPolicy needs tokenizer_path (the served model's tokenizer folder)")
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
        self.tokenizer = tokenizer
        self.model = model or self._first_model()
        self.version = self._server_version()
        self.max_context = self._model_window()

    # ------------------------------------------------------------------ HTTP
    def _request(self, method: str, route: str, payload: Any = None, *, raw: bytes | None = None) -> Any:
        """JSON request to ``base_url + route`` (route like ``/completions``)."""
        url = self.base_url + route
        data = raw if raw is not None else (json.dumps(payload).encode() if payload is not None else None)
        headers = {"Content-Type": "application/octet-stream" if raw is not None else "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:500]
            raise ServerError(f"{method} {url}: HTTP {exc.code}: {detail}") from None
        except urllib.error.URLError as exc:
            raise ServerError(f"{method} {url}: cannot reach the server ({exc.reason})") from None
        except TimeoutError:  # waiting for or reading the response (urllib wraps only the sending)
            raise ServerError(f"{method} {url}: no answer within {self.timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException) as exc:
            raise ServerError(f"{method} {url}: connection failed ({exc!r})") from None
        except ValueError as exc:  # a 200 whose body is not JSON (e.g. a proxy's HTML page)
            raise ServerError(f"{method} {url}: reply is not JSON ({exc})") from None

    def _root_url(self) -> str:
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    def _first_model(self) -> str:
        listing = self._request("GET", "/models")
        try:
            return listing["data"][0]["id"]
        except (KeyError, IndexError, TypeError):
            raise ServerError(f"{self.base_url}/models lists no model: {listing!r:.200}") from None

    def _model_window(self) -> int | None:
        """The served model's ``max_model_len`` from ``/models`` (vLLM, SGLang and swetrain's
        server list it), None when the server does not say."""
        try:
            listing = self._request("GET", "/models")
            for card in listing.get("data") or []:
                if card.get("id") == self.model and card.get("max_model_len"):
                    return int(card["max_model_len"])
        except (ServerError, AttributeError, TypeError, ValueError):
            pass
        return None

    def _server_version(self) -> int:
        try:
            request = urllib.request.Request(self._root_url() + "/swetrain/version")
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return int(json.loads(response.read())["version"])
        except Exception:  # not a swetrain server: versions are counted locally
            return 0

    # -------------------------------------------------------------- generate
    def _complete(self, prompt: list[int], config: GenerationConfig, seed: int | None) -> Generation:
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": config.max_new_tokens,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "logprobs": 1,
            "return_tokens_as_token_ids": True,
            "return_token_ids": True,
            "skip_special_tokens": False,
        }
        if seed is not None:
            body["seed"] = seed
        if config.top_k:  # vLLM/SGLang/our server read it; -1 and absent both mean no cut
            body["top_k"] = config.top_k
        if config.stop_token_ids:
            body["stop_token_ids"] = list(config.stop_token_ids)
        reply = self._request("POST", "/completions", body)
        try:
            choice = reply["choices"][0]
            lps = [float(x) for x in choice["logprobs"]["token_logprobs"]]
            ids = choice.get("token_ids")
            if ids is None:
                ids = [parse_token_id(t) for t in choice["logprobs"]["tokens"]]
            finish = choice.get("finish_reason") or "length"
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ServerError(f"unexpected completion reply ({exc}): {json.dumps(reply)[:300]}") from None
        if len(ids) != len(lps):
            raise ServerError(f"completion reply has {len(ids)} token ids but {len(lps)} log-probs")
        ids = [int(t) for t in ids]
        reason = "stop" if finish == "stop" else "length"
        shown = ids[:-1] if reason == "stop" and ids else ids
        text = self.tokenizer.decode(shown, skip_special_tokens=False)
        return Generation(token_ids=ids, logprobs=lps, text=text, finish_reason=reason)

    def generate(self, prompts: list[list[int]], config: GenerationConfig | None = None) -> list[Generation]:
        """One request per prompt (concurrently), seed ``config.seed + i`` for prompt ``i``."""
        from swetrain.policy.hf import validate_config

        config = config or GenerationConfig()
        validate_config(config)
        for i, prompt in enumerate(prompts):
            if not prompt or not all(isinstance(t, int) for t in prompt):
                raise ValueError(f"prompts[{i}]: expected a non-empty list of token ids")
        seeds = [None if config.seed is None else config.seed + i for i in range(len(prompts))]
        if len(prompts) <= 1:
            return [self._complete(p, config, s) for p, s in zip(prompts, seeds)]
        with ThreadPoolExecutor(min(self.max_concurrency, len(prompts))) as pool:
            return list(pool.map(lambda ps: self._complete(ps[0], config, ps[1]), zip(prompts, seeds)))

    # ----------------------------------------------------------------- score
    def _score_one(self, sequence: list[int], start: int) -> list[float]:
        body = {
            "model": self.model,
            "prompt": sequence,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": 1,
            "echo": True,
            "return_tokens_as_token_ids": True,
        }
        reply = self._request("POST", "/completions", body)
        try:
            values = reply["choices"][0]["logprobs"]["token_logprobs"][: len(sequence)]
        except (KeyError, IndexError, TypeError) as exc:
            raise ServerError(f"unexpected echo reply ({exc}): {json.dumps(reply)[:300]}") from None
        if len(values) != len(sequence):
            raise ServerError(f"echo reply scored {len(values)} of {len(sequence)} prompt tokens")
        return [float(v) for v in values[start:]]

    def score(
        self, sequences: list[list[int]], starts: list[int] | None = None, *, temperature: float = 1.0
    ) -> list[list[float]]:
        """Prompt log-probs through ``echo`` (temperature 1 only: servers score the raw model)."""
        from swetrain.policy.hf import check_starts

        if temperature != 1.0:
            raise ValueError(f"temperature={temperature!r}: the openai backend scores at temperature 1 only")
        starts = check_starts(sequences, starts)
        with ThreadPoolExecutor(max(1, min(self.max_concurrency, len(sequences)))) as pool:
            return list(pool.map(lambda ss: self._score_one(ss[0], ss[1]), zip(sequences, starts)))

    # --------------------------------------------------------------- weights
    def sync_weights(self, state_dict: dict[str, Any]) -> None:
        """Send weights to a swetrain server (``/swetrain/sync_weights``, safetensors body).

        Other servers (vLLM, SGLang) have no standard endpoint for this: restart them on a saved
        checkpoint, or use the in-process ``vllm`` backend.
        """
        from safetensors.torch import save as save_safetensors

        blob = save_safetensors({k: v.detach().cpu().contiguous().clone() for k, v in state_dict.items()})
        url = self._root_url() + "/swetrain/sync_weights"
        request = urllib.request.Request(url, data=blob, method="POST", headers={"Content-Type": "application/octet-stream"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                self.version = int(json.loads(response.read())["version"])
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise NotImplementedError(
                    f"{self._root_url()} has no /swetrain/sync_weights (not a swetrain server): restart it on a "
                    "saved checkpoint or use the in-process 'vllm' backend"
                ) from None
            raise ServerError(f"POST {url}: HTTP {exc.code}: {exc.read().decode(errors='replace')[:500]}") from None


def parse_token_id(token: str) -> int:
    """``"token_id:123"`` -> 123 (vLLM's ``return_tokens_as_token_ids`` format)."""
    if not isinstance(token, str) or not token.startswith("token_id:"):
        raise ValueError(f"token {token!r} is not in 'token_id:<id>' form (enable return_tokens_as_token_ids)")
    return int(token.split(":", 1)[1])
