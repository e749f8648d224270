"""``run_episode``: one attempt of the agent on one task, token-exact (see ``agent/format.py``).

The loop: render the prompt (system + tools + issue [+ failure context]), then per turn generate
with the policy, append the generated ids verbatim (mask 1, segment = turn, behaviour log-probs),
parse the message, run its tool calls (or answer an invalid message with an error observation),
append the observation's template ids (mask 0), until the agent calls ``finish`` or a limit is hit.
The patch is then ``workspace.diff()`` and, with a verifier, the Verdict of that patch.

Every attempt ends with a termination reason (``Trajectory.stop_reason``, one of
``agent.trajectory.TERMINATION_REASONS``): ``submitted``, ``context``, ``turns``, ``tokens`` or
``wall``. A limit is not an error: the attempt is verified and stored like any other (a failed one,
unless the patch so far resolves the task). The context limit is
:func:`effective_context_limit`: the configured ``max_context_tokens`` or, when smaller, the
policy's window (``policy.max_context``) minus the generation budget of a call, so no generate call
can overflow the model. A prompt that does not fit even before the first turn ends the attempt at
once (reason ``context``, no turn, the untouched workspace's empty patch).

Errors of the environment itself (a sandbox that cannot start, a tool runner that raises, a
verifier crash, an ``infra_failure`` verdict) raise :class:`InfraError`: they are never scored as
model failures; the rollout engine retries them.
"""

from __future__ import annotations

import hashlib
import threading
import time
import weakref
from dataclasses import dataclass, replace
from typing import Any

from swetrain.agent.format import ChatFormat, user_message
from swetrain.agent.parse import parse_message
from swetrain.agent.trajectory import TERMINATION_REASONS, Trajectory  # noqa: F401 - re-exported
from swetrain.policy.base import GenerationConfig


class InfraError(RuntimeError):
    """The environment (not the model) failed: retry, never score as a model failure."""


@dataclass
class EpisodeLimits:
    """Limits of one attempt. Defaults suit CPU runs; :meth:`paper` gives FC-SWE's settings."""

    max_turns: int = 30
    max_context_tokens: int = 16384
    max_tokens_per_call: int = 512
    max_wall_s: float = 900.0
    max_observation_chars: int = 6000
    min_tokens_per_call: int = 8  # below this much room left in the context, the episode ends
    max_output_tokens: int | None = None  # generated tokens per attempt (None: no limit; reason "tokens")

    @classmethod
    def paper(cls) -> EpisodeLimits:
        """FC-SWE: 64K context, at most 100 model-tool interactions per trajectory."""
        return cls(max_turns=100, max_context_tokens=65536, max_tokens_per_call=4096, max_wall_s=3600.0)

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_context_tokens", "max_tokens_per_call", "max_observation_chars", "min_tokens_per_call"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"EpisodeLimits.{name} must be >= 1, got {getattr(self, name)!r}")
        if self.max_wall_s <= 0:
            raise ValueError(f"EpisodeLimits.max_wall_s must be > 0, got {self.max_wall_s!r}")
        if self.max_output_tokens is not None and int(self.max_output_tokens) < 1:
            raise ValueError(f"EpisodeLimits.max_output_tokens must be >= 1 or None, got {self.max_output_tokens!r}")


def generation_budget(limits: EpisodeLimits, gen_config: GenerationConfig | None = None) -> int:
    """Most tokens one generate call may produce: ``max_tokens_per_call``, or the generation
    config's ``max_new_tokens`` when one is given and smaller."""
    if gen_config is None:
        return int(limits.max_tokens_per_call)
    return min(int(limits.max_tokens_per_call), int(gen_config.max_new_tokens))


def policy_window(policy: Any) -> int | None:
    """The policy's context window in tokens (``policy.max_context``), None when it has none/unknown."""
    value = getattr(policy, "max_context", None)
    return int(value) if value else None


def effective_context_limit(configured: int, window: int | None, gen_budget: int) -> int:
    """The context limit of an attempt: ``min(configured, window - gen_budget)``.

    ``configured`` is ``EpisodeLimits.max_context_tokens``, ``window`` the policy's context window
    (None: unknown, the configured limit alone applies), ``gen_budget`` the tokens one call may
    generate (:func:`generation_budget`). The trajectory (prompt, generated ids, observations) never
    grows past it, so a prompt plus a full generation always fits the model. May be <= 0 (a window
    smaller than one generation): every attempt then ends at once with reason ``context``.
    """
    if window is None:
        return int(configured)
    return min(int(configured), int(window) - int(gen_budget))


def attempt_seed(seed: int, instance_id: str, chain: int, attempt: int) -> int:
    """A stable 31-bit seed per (run seed, task, chain, attempt), identical in every process."""
    digest = hashlib.sha256(f"{seed}|{instance_id}|{chain}|{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x3FFFFFFF


def turn_seed(base: int, turn: int) -> int:
    """Generation seed of turn ``turn`` (0-based) of an attempt seeded ``base``."""
    return base + turn


_FORMATS: weakref.WeakKeyDictionary[Any, ChatFormat] = weakref.WeakKeyDictionary()
_FORMATS_LOCK = threading.Lock()


def chat_format_for(policy: Any, tools: list[dict] | None = None) -> ChatFormat:
    """The (cached) :class:`ChatFormat` of a policy's tokenizer with the env's tools."""
    if tools is not None:
        return ChatFormat(policy.tokenizer, tools=tools)
    with _FORMATS_LOCK:
        fmt = _FORMATS.get(policy.tokenizer) if _weakrefable(policy.tokenizer) else None
        if fmt is None:
            fmt = ChatFormat(policy.tokenizer)
            if _weakrefable(policy.tokenizer):
                _FORMATS[policy.tokenizer] = fmt
        return fmt


def _weakrefable(obj: Any) -> bool:
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit - limit * 2 // 3
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


def run_episode(
    task: Any,
    workspace: Any,
    policy: Any,
    context: str | None = None,
    limits: EpisodeLimits | None = None,
    *,
    verifier: Any = None,
    gen_config: GenerationConfig | None = None,
    chat_format: ChatFormat | None = None,
    chain: int = 0,
    attempt: int = 1,
    context_variant: str = "none",
    seed: int | None = None,
    tool_runner: Any = None,
    edit_match: str = "exact",
) -> Trajectory:
    """Run one attempt; return its :class:`Trajectory` (with the Verdict when ``verifier`` is given).

    ``seed`` seeds generation turn t with ``seed + t`` (None: unseeded sampling).
    ``gen_config`` supplies temperature/top_p; its ``max_new_tokens`` is capped by the limits.
    ``edit_match`` (exact | tolerant) is how the tools' ``str_replace`` matches (``env/edit_match.py``).
    """
    limits = limits or EpisodeLimits()
    base_cfg = gen_config or GenerationConfig()
    fmt = chat_format or chat_format_for(policy)
    per_call = generation_budget(limits, gen_config)
    context_limit = effective_context_limit(limits.max_context_tokens, policy_window(policy), per_call)
    if tool_runner is None:
        from swetrain.env.tools import ToolRunner

        try:
            tool_runner = ToolRunner(workspace, edit_match=edit_match)
        except Exception as exc:  # noqa: BLE001 - any tool-runner setup failure is infra
            raise InfraError(f"tool runner for {task.instance_id}: {exc}") from exc
    t_start = time.monotonic()
    timings = {"generate_s": 0.0, "tools_s": 0.0, "verify_s": 0.0, "diff_s": 0.0}

    messages = fmt.initial_messages(user_message(task, context))
    ids = fmt.prompt_ids(messages)
    prompt_len = len(ids)
    mask = [0] * prompt_len
    segs = [0] * prompt_len
    lps = [0.0] * prompt_len
    invalid: list[bool] = []
    reasons: list[list[str]] = []
    input_tokens = output_tokens = 0
    turn = 0
    stop_reason = ""
    ended_with_eot = True  # state of the last assistant turn

    while True:
        if turn >= limits.max_turns:
            stop_reason = "turns"
            break
        if time.monotonic() - t_start >= limits.max_wall_s:
            stop_reason = "wall"
            break
        budget = min(per_call, context_limit - len(ids))
        if budget < limits.min_tokens_per_call:
            stop_reason = "context"
            break
        if limits.max_output_tokens is not None:
            left = int(limits.max_output_tokens) - output_tokens
            if left < limits.min_tokens_per_call:
                stop_reason = "tokens"
                break
            budget = min(budget, left)
        cfg = replace(
            base_cfg,
            max_new_tokens=budget,
            stop_token_ids=list(fmt.stop_token_ids),
            seed=turn_seed(seed, turn) if seed is not None else base_cfg.seed,
        )
        t0 = time.monotonic()
        gen = policy.generate([ids], cfg)[0]
        timings["generate_s"] += time.monotonic() - t0
        gen_ids = list(gen.token_ids)
        if len(gen.logprobs) != len(gen_ids):
            raise ValueError(f"policy returned {len(gen.logprobs)} log-probs for {len(gen_ids)} token ids")
        if len(gen_ids) > budget:
            raise ValueError(f"policy generated {len(gen_ids)} tokens, more than max_new_tokens={budget}")
        input_tokens += len(ids)
        output_tokens += len(gen_ids)
        turn += 1
        ids += gen_ids
        mask += [1] * len(gen_ids)
        segs += [turn] * len(gen_ids)
        lps += [float(x) for x in gen.logprobs]

        text, ended_with_eot = fmt.decode_generated(gen_ids)
        parsed = parse_message(text, fmt.tools)
        invalid.append(parsed.invalid)
        reasons.append(parsed.error_codes)
        messages.append(
            {
                "role": "assistant",
                "content": text,
                "turn": turn,
                "invalid": parsed.invalid,
                "errors": [str(e) for e in parsed.errors],
                "finish_reason": gen.finish_reason,
            }
        )

        observations: list[dict] = []
        done = False
        if parsed.invalid:
            role = "user" if parsed.error_codes == ["no_tool_call"] else "tool"
            observations.append({"role": role, "content": parsed.error_observation(), "turn": turn, "error": True})
        else:
            for call in parsed.tool_calls:
                t0 = time.monotonic()
                try:
                    result = tool_runner.call(call.name, call.arguments)
                except Exception as exc:  # noqa: BLE001 - a crashing tool runner is an infra failure
                    raise InfraError(f"tool {call.name} crashed on {task.instance_id}: {exc}") from exc
                finally:
                    timings["tools_s"] += time.monotonic() - t0
                observations.append(
                    {
                        "role": "tool",
                        "name": call.name,
                        "arguments": call.arguments,
                        "content": _clip(str(result.observation), limits.max_observation_chars),
                        "ok": bool(result.ok),
                        "turn": turn,
                    }
                )
                if result.done:
                    done = True
                    break
        messages.extend(observations)
        if done:
            stop_reason = "submitted"
            break
        obs_ids = fmt.observation_ids(
            [{"role": o["role"], "content": o["content"]} for o in observations], ended_with_eot=ended_with_eot
        )
        if len(ids) + len(obs_ids) + limits.min_tokens_per_call > context_limit:
            stop_reason = "context"
            break
        ids += obs_ids
        mask += [0] * len(obs_ids)
        segs += [0] * len(obs_ids)
        lps += [0.0] * len(obs_ids)

    t0 = time.monotonic()
    try:
        patch = workspace.diff()
    except Exception as exc:  # noqa: BLE001
        raise InfraError(f"workspace.diff() failed for {task.instance_id}: {exc}") from exc
    timings["diff_s"] = time.monotonic() - t0
    verdict = None
    if verifier is not None:
        t0 = time.monotonic()
        try:
            verdict = verifier.verify(task, patch)
        except Exception as exc:  # noqa: BLE001
            raise InfraError(f"verifier crashed on {task.instance_id}: {exc}") from exc
        timings["verify_s"] = time.monotonic() - t0
        if verdict.infra_failure:
            raise InfraError(f"verifier infra failure on {task.instance_id}: {verdict.infra_reason}")
    timings["total_s"] = time.monotonic() - t_start

    traj = Trajectory(
        instance_id=task.instance_id,
        chain=chain,
        attempt=attempt,
        active=True,
        context_variant=context_variant,
        context=context,
        messages=messages,
        token_ids=ids,
        assistant_mask=mask,
        segment_ids=segs,
        behavior_logprobs=lps,
        invalid=invalid,
        invalid_reasons=reasons,
        patch=patch,
        verdict=verdict,
        resolved=bool(verdict.resolved) if verdict is not None else False,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        num_turns=turn,
        stop_reason=stop_reason,
        timings=timings,
        policy_version=int(getattr(policy, "version", 0)),
        prompt_len=prompt_len,
        seed=seed,
    )
    traj.check()
    return traj
