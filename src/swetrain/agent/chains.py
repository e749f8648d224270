"""FC-SWE recovery chains and the failure context C(x, patch, verify).

A chain c on task x runs up to R attempts. Attempt 1 always runs (q_{c,1} = 1); attempt r+1 runs
iff attempt r ran and failed (q_{c,r+1} = q_{c,r} * (1 - y_{c,r})). Before a recovery attempt the
workspace is reset to the task's initial state, and the prompt of attempt r+1 is
h_{c,r+1} = C(x, patch(tau_{c,r}), verify(tau_{c,r})): the issue x followed by the failure
evidence built here. The evidence sits in the prompt, so its tokens are never trainable.

Context variants (the paper's ablation, Fig. 4b): ``patch+verifier`` (FC-SWE), ``patch-only``
(the failed patch without the verifier's diagnostics) and ``none`` (fresh retry: same issue, no
evidence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from swetrain.agent.loop import EpisodeLimits, InfraError, PatchVerifier, attempt_seed, run_episode
from swetrain.agent.trajectory import Trajectory
from swetrain.env.interface import WorkspaceBackend
from swetrain.policy.base import GenerationConfig, Policy

CONTEXT_VARIANTS = ("patch+verifier", "patch-only", "none")
CONTEXT_HEADER = "## Previous attempt"


def _check_variant(variant: str) -> str:
    if variant not in CONTEXT_VARIANTS:
        raise ValueError(f"context variant {variant!r} is not one of {', '.join(CONTEXT_VARIANTS)}")
    return variant


def _count_tokens(text: str, tokenizer: Any) -> int:
    if tokenizer is None:
        return (len(text) + 3) // 4  # ~4 characters per token without a tokenizer
    return len(tokenizer.encode(text, add_special_tokens=False))


def truncate_middle(text: str, budget_tokens: int, tokenizer: Any = None, what: str = "text") -> str:
    """``text`` cut to about ``budget_tokens`` tokens, keeping head and tail and saying what was cut.

    With a tokenizer the cut is made on token boundaries; without one, 4 characters count as a token.
    """
    if budget_tokens < 1:
        raise ValueError(f"budget_tokens must be >= 1, got {budget_tokens}")
    if _count_tokens(text, tokenizer) <= budget_tokens:
        return text
    head_n = budget_tokens // 2
    tail_n = budget_tokens - head_n
    if tokenizer is None:
        head, tail = text[: head_n * 4], text[len(text) - tail_n * 4 :]
        cut_tokens = _count_tokens(text, None) - budget_tokens
    else:
        ids = tokenizer.encode(text, add_special_tokens=False)
        head = tokenizer.decode(ids[:head_n])
        tail = tokenizer.decode(ids[len(ids) - tail_n :])
        cut_tokens = len(ids) - head_n - tail_n
    cut_lines = max(text.count("\n") - head.count("\n") - tail.count("\n"), 0)
    return f"{head}\n[... {what} truncated: {cut_tokens} tokens ({cut_lines} lines) cut from the middle ...]\n{tail}"


def _verifier_section(verdict: Any) -> str:
    lines = [f"Verifier status: {verdict.status} (resolved: {'yes' if verdict.resolved else 'no'})"]
    if not verdict.patch_applied:
        lines.append("The patch could not be applied" + (f": {verdict.error}" if verdict.error else "."))
    elif verdict.error:
        lines.append(f"Patch rejected: {verdict.error}")
    failing = [t for t in verdict.tests if t.status not in ("PASSED", "XFAIL")]
    if failing:
        lines.append("Failing tests:")
        lines += [f"- {t.test_id} [{t.kind}]: {t.status}" for t in failing]
    if verdict.diagnostics.strip():
        lines += ["", verdict.diagnostics.strip()]
    else:
        tracebacks = [f"{t.test_id}:\n{t.traceback.strip()}" for t in failing if t.traceback.strip()]
        if tracebacks:
            lines += ["", *tracebacks]
    return "\n".join(lines)


def build_failure_context(
    task: Any,
    patch: str,
    verdict: Any,
    budget_tokens: int = 2048,
    variant: str = "patch+verifier",
    tokenizer: Any = None,
) -> str | None:
    """The failure evidence of C(x, patch, verify) appended after the issue x in a recovery prompt.

    Returns None for ``variant="none"`` (fresh retry). The failed patch and the verifier's
    diagnostics are each truncated (head and tail kept, the cut announced) so the whole evidence
    stays within ``budget_tokens`` (counted with ``tokenizer`` when given). ``task`` is accepted for
    the C(x, ...) signature; the issue text itself is rendered by the prompt builder.
    """
    _check_variant(variant)
    if variant == "none":
        return None
    if budget_tokens < 64:
        raise ValueError(f"failure-context budget_tokens must be >= 64, got {budget_tokens}")
    header = (
        f"{CONTEXT_HEADER}\n"
        "A previous attempt at this issue did not resolve it. The repository has been reset to its "
        "original state; its changes are NOT applied now."
    )
    include_verifier = variant == "patch+verifier" and verdict is not None
    fixed = _count_tokens(header, tokenizer) + 32
    room = max(budget_tokens - fixed, 32)
    patch_budget = room // 2 if include_verifier else room
    if patch.strip():
        patch_text = truncate_middle(patch.rstrip("\n"), patch_budget, tokenizer, what="patch")
        parts = [header, "", "### Failed patch", "```diff", patch_text, "```"]
    else:
        parts = [header, "", "### Failed patch", "(the previous attempt changed no files)"]
    if include_verifier:
        diag_budget = room - min(_count_tokens(patch, tokenizer), patch_budget)
        diag = truncate_middle(_verifier_section(verdict), max(diag_budget, 32), tokenizer, what="verifier output")
        parts += ["", "### Verifier output", diag]
    parts += ["", "Use this evidence to produce a patch that resolves the issue."]
    return "\n".join(parts)


@dataclass
class RecoveryChain:
    """Up to ``max_attempts`` attempts; attempt r+1 iff attempt r ran and failed (FC-SWE)."""

    max_attempts: int = 2
    context_variant: str = "patch+verifier"
    context_budget_tokens: int = 2048
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    edit_match: str = "exact"  # str_replace matching of the tools: exact | tolerant (env/edit_match.py)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"RecoveryChain.max_attempts must be >= 1, got {self.max_attempts}")
        _check_variant(self.context_variant)

    def run(
        self,
        task: Any,
        workspace: WorkspaceBackend,
        policy: Policy,
        verifier: PatchVerifier | None,
        *,
        chain: int = 0,
        seed: int = 0,
        gen_config: GenerationConfig | None = None,
    ) -> list[Trajectory]:
        """Run the chain; return the executed attempts in order (non-executed ones have no row).

        ``workspace`` must be fresh (the task's initial state); it is reset before each recovery
        attempt. A verifier is required: recovery is triggered by its verdict. Infra failures
        raise :class:`InfraError` and end the chain without scoring it.
        """
        if verifier is None:
            raise ValueError("RecoveryChain.run needs a verifier: recovery is triggered by verdicts")
        out: list[Trajectory] = []
        context: str | None = None
        for attempt in range(1, self.max_attempts + 1):
            if attempt > 1:
                try:
                    workspace.reset()
                except Exception as exc:  # noqa: BLE001
                    raise InfraError(f"workspace reset failed for {task.instance_id}: {exc}") from exc
            traj = run_episode(
                task,
                workspace,
                policy,
                context,
                self.limits,
                verifier=verifier,
                gen_config=gen_config,
                chain=chain,
                attempt=attempt,
                context_variant=self.context_variant,
                seed=attempt_seed(seed, task.instance_id, chain, attempt),
                edit_match=self.edit_match,
            )
            out.append(traj)
            if traj.resolved:
                break
            context = build_failure_context(
                task,
                traj.patch,
                traj.verdict,
                self.context_budget_tokens,
                self.context_variant,
                tokenizer=getattr(policy, "tokenizer", None),
            )
        return out
