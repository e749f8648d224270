"""``run_episode``: one attempt of the agent on one task, token-exact (see ``agent/format.py``).

The loop: render the prompt (system + tools + issue [+ failure context]), then per turn generate
with the policy, append the generated ids verbatim (mask 1, segment = turn, behaviour log-probs),
parse the message, run its tool calls (or answer an invalid message with an error observation),
append the observation's template ids (mask 0), until the agent calls ``finish`` or a limit is hit.
The patch is then ``workspace.diff()`` and, with a verifier, the Verdict of that patch. Each of
these steps is one method of ``_Attempt`` (the state of one attempt); the token columns grow
together in a :class:`~swetrain.agent.tokens.TokenBuffer`.

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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from swetrain.agent.format import ChatFormat, user_message
from swetrain.agent.parse import ParsedMessage, parse_message
from swetrain.agent.tokens import TokenBuffer
from swetrain.agent.trajectory import TERMINATION_REASONS, Trajectory  # noqa: F401 - re-exported
from swetrain.env.interface import WorkspaceBackend
from swetrain.env.verdict import Verdict
from swetrain.policy.base import Generation, GenerationConfig, Policy


class InfraError(RuntimeError):
    """The environment (not the model) failed: retry, never score as a model failure."""


class PatchVerifier(Protocol):
    """What scores an attempt's patch (:class:`swetrain.env.verifier.Verifier`: the task's hidden
    tests in a fresh workspace)."""

    def verify(self, task: Any, patch: str) -> Verdict:
        """The Verdict of ``patch`` on ``task``."""
        ...


#: builds the workspace of one chain for a task (the rollout engine's ``workspace_factory``)
WorkspaceFactory = Callable[[Any], WorkspaceBackend]


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


def policy_window(policy: Policy) -> int | None:
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


def chat_format_for(policy: Policy, tools: list[dict] | None = None) -> ChatFormat:
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
    workspace: WorkspaceBackend,
    policy: Policy,
    context: str | None = None,
    limits: EpisodeLimits | None = None,
    *,
    verifier: PatchVerifier | None = None,
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
    fmt = chat_format or chat_format_for(policy)
    per_call = generation_budget(limits, gen_config)
    if tool_runner is None:
        tool_runner = _tool_runner(task, workspace, edit_match)
    run = _Attempt(task, policy, fmt, limits, tool_runner, gen_config or GenerationConfig(), seed, per_call,
                   effective_context_limit(limits.max_context_tokens, policy_window(policy), per_call))
    run.start(user_message(task, context))
    stop_reason = run.take_turns()
    patch, verdict = _patch_and_verdict(task, workspace, verifier, run.timings)
    run.timings["total_s"] = time.monotonic() - run.started

    traj = Trajectory(
        instance_id=task.instance_id,
        chain=chain,
        attempt=attempt,
        active=True,
        context_variant=context_variant,
        context=context,
        messages=run.messages,
        token_ids=run.tokens.ids,
        assistant_mask=run.tokens.mask,
        segment_ids=run.tokens.segments,
        behavior_logprobs=run.tokens.logprobs,
        invalid=run.invalid,
        invalid_reasons=run.reasons,
        patch=patch,
        verdict=verdict,
        resolved=bool(verdict.resolved) if verdict is not None else False,
        input_tokens=run.input_tokens,
        output_tokens=run.output_tokens,
        num_turns=run.turn,
        stop_reason=stop_reason,
        timings=run.timings,
        policy_version=int(getattr(policy, "version", 0)),
        prompt_len=run.prompt_len,
        seed=seed,
    )
    traj.check()
    return traj


def _tool_runner(task: Any, workspace: WorkspaceBackend, edit_match: str) -> Any:
    """The agent's tools on ``workspace``; a runner that cannot be set up is an infra failure."""
    from swetrain.env.tools import ToolRunner

    try:
        return ToolRunner(workspace, edit_match=edit_match)
    except Exception as exc:  # noqa: BLE001 - any tool-runner setup failure is infra
        raise InfraError(f"tool runner for {task.instance_id}: {exc}") from exc


@dataclass
class _Attempt:
    """The state of one attempt while its turns run: messages, token columns, counters, timings."""

    task: Any
    policy: Policy
    fmt: ChatFormat
    limits: EpisodeLimits
    tool_runner: Any
    base_cfg: GenerationConfig
    seed: int | None
    per_call: int
    context_limit: int
    started: float = field(default_factory=time.monotonic)
    timings: dict[str, float] = field(
        default_factory=lambda: {"generate_s": 0.0, "tools_s": 0.0, "verify_s": 0.0, "diff_s": 0.0})
    messages: list[dict] = field(default_factory=list)
    tokens: TokenBuffer = field(default_factory=TokenBuffer)
    prompt_len: int = 0
    invalid: list[bool] = field(default_factory=list)
    reasons: list[list[str]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    turn: int = 0
    ended_with_eot: bool = True  # state of the last assistant turn

    def start(self, user_content: str) -> None:
        """Render the prompt (system + tools + the user message) as the first ids."""
        self.messages = self.fmt.initial_messages(user_content)
        self.tokens.append(self.fmt.prompt_ids(self.messages))
        self.prompt_len = len(self.tokens)

    def take_turns(self) -> str:
        """Generate, parse, run tools and append observations until the agent submits or a limit
        ends the attempt; the termination reason."""
        while True:
            reason, budget = self.next_budget()
            if reason is not None:
                return reason
            gen = self.generate(budget)
            parsed = self.record_assistant(gen)
            observations, done = self.observe(parsed)
            self.messages.extend(observations)
            if done:
                return "submitted"
            if not self.append_observations(observations):
                return "context"

    def next_budget(self) -> tuple[str | None, int]:
        """(the limit that ends the attempt now, or None; the tokens the next call may generate)."""
        limits = self.limits
        if self.turn >= limits.max_turns:
            return "turns", 0
        if time.monotonic() - self.started >= limits.max_wall_s:
            return "wall", 0
        budget = min(self.per_call, self.context_limit - len(self.tokens))
        if budget < limits.min_tokens_per_call:
            return "context", 0
        if limits.max_output_tokens is not None:
            left = int(limits.max_output_tokens) - self.output_tokens
            if left < limits.min_tokens_per_call:
                return "tokens", 0
            budget = min(budget, left)
        return None, budget

    def generate(self, budget: int) -> Generation:
        """One policy call for the next assistant turn; its ids are appended to the tokens."""
        cfg = replace(
            self.base_cfg,
            max_new_tokens=budget,
            stop_token_ids=list(self.fmt.stop_token_ids),
            seed=turn_seed(self.seed, self.turn) if self.seed is not None else self.base_cfg.seed,
        )
        t0 = time.monotonic()
        gen = self.policy.generate([self.tokens.ids], cfg)[0]
        self.timings["generate_s"] += time.monotonic() - t0
        gen_ids = list(gen.token_ids)
        if len(gen.logprobs) != len(gen_ids):
            raise ValueError(f"policy returned {len(gen.logprobs)} log-probs for {len(gen_ids)} token ids")
        if len(gen_ids) > budget:
            raise ValueError(f"policy generated {len(gen_ids)} tokens, more than max_new_tokens={budget}")
        self.input_tokens += len(self.tokens)
        self.output_tokens += len(gen_ids)
        self.turn += 1
        self.tokens.append(gen_ids, turn=self.turn, logprobs=gen.logprobs)
        return gen

    def record_assistant(self, gen: Generation) -> ParsedMessage:
        """Decode and parse the turn just generated; record it as an assistant message."""
        text, self.ended_with_eot = self.fmt.decode_generated(list(gen.token_ids))
        parsed = parse_message(text, self.fmt.tools)
        self.invalid.append(parsed.invalid)
        self.reasons.append(parsed.error_codes)
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "turn": self.turn,
                "invalid": parsed.invalid,
                "errors": [str(e) for e in parsed.errors],
                "finish_reason": gen.finish_reason,
            }
        )
        return parsed

    def observe(self, parsed: ParsedMessage) -> tuple[list[dict], bool]:
        """The observation messages answering a turn (its tools' results, or the error of an
        invalid message), and whether the agent submitted."""
        if parsed.invalid:
            role = "user" if parsed.error_codes == ["no_tool_call"] else "tool"
            return [{"role": role, "content": parsed.error_observation(), "turn": self.turn, "error": True}], False
        observations: list[dict] = []
        for call in parsed.tool_calls:
            result = self.call_tool(call.name, call.arguments)
            observations.append(
                {
                    "role": "tool",
                    "name": call.name,
                    "arguments": call.arguments,
                    "content": _clip(str(result.observation), self.limits.max_observation_chars),
                    "ok": bool(result.ok),
                    "turn": self.turn,
                }
            )
            if result.done:
                return observations, True
        return observations, False

    def call_tool(self, name: str, arguments: Any) -> Any:
        """Run one tool call; a crashing tool runner is an infra failure."""
        t0 = time.monotonic()
        try:
            return self.tool_runner.call(name, arguments)
        except Exception as exc:  # noqa: BLE001 - a crashing tool runner is an infra failure
            raise InfraError(f"tool {name} crashed on {self.task.instance_id}: {exc}") from exc
        finally:
            self.timings["tools_s"] += time.monotonic() - t0

    def append_observations(self, observations: list[dict]) -> bool:
        """Append the observations' template ids; False (nothing appended) when they and the next
        call's minimum would not fit the context limit."""
        obs_ids = self.fmt.observation_ids(
            [{"role": o["role"], "content": o["content"]} for o in observations], ended_with_eot=self.ended_with_eot
        )
        if len(self.tokens) + len(obs_ids) + self.limits.min_tokens_per_call > self.context_limit:
            return False
        self.tokens.append(obs_ids)
        return True


def _patch_and_verdict(task: Any, workspace: WorkspaceBackend, verifier: PatchVerifier | None,
                       timings: dict[str, float]) -> tuple[str, Verdict | None]:
    """The attempt's patch (``workspace.diff()``) and, with a verifier, its Verdict; a diff or
    verifier that fails, or an ``infra_failure`` verdict, is an infra failure."""
    t0 = time.monotonic()
    try:
        patch = workspace.diff()
    except Exception as exc:  # noqa: BLE001
        raise InfraError(f"workspace.diff() failed for {task.instance_id}: {exc}") from exc
    timings["diff_s"] = time.monotonic() - t0
    if verifier is None:
        return patch, None
    t0 = time.monotonic()
    try:
        verdict = verifier.verify(task, patch)
    except Exception as exc:  # noqa: BLE001
        raise InfraError(f"verifier crashed on {task.instance_id}: {exc}") from exc
    timings["verify_s"] = time.monotonic() - t0
    if verdict.infra_failure:
        raise InfraError(f"verifier infra failure on {task.instance_id}: {verdict.infra_reason}")
    return patch, verdict
