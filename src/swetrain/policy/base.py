"""The policy protocol shared by every backend (hf, openai-compatible server, vllm).

Prompts are *token ids*, never text: the agent loop owns the exact token sequence (prompt,
generated ids, observation ids) so that what the trainer scores is exactly what was generated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class GenerationConfig:
    max_new_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # sample among the k most likely tokens (0: no top-k cut)
    stop_token_ids: list[int] = field(default_factory=list)  # generation ends after emitting one
    seed: int | None = None

    def batch_key(self) -> tuple:
        """What calls must share to run in one batch: every sampling setting but the seed."""
        return (self.max_new_tokens, float(self.temperature), float(self.top_p), int(self.top_k),
                tuple(self.stop_token_ids))


@dataclass
class Generation:
    """One sampled continuation: ids exactly as sampled, with their behaviour log-probs."""

    token_ids: list[int]
    logprobs: list[float]  # log pi_behavior(token_t | prefix), same length as token_ids
    text: str
    finish_reason: str  # "stop" (emitted a stop token / EOS) or "length"


@runtime_checkable
class Policy(Protocol):
    """Generate continuations of token-id prompts and score token ids under the current weights."""

    tokenizer: Any  # a transformers PreTrainedTokenizerBase
    version: int  # bumped on every weight sync
    # Context window in tokens (prompt + generated ids of one call), None when unknown/unbounded.
    # The agent loop keeps every prompt within ``max_context - generation budget``.
    max_context: int | None

    def generate(self, prompts: list[list[int]], config: GenerationConfig) -> list[Generation]:
        """Sample one continuation per prompt (batched)."""
        ...

    def score(self, sequences: list[list[int]], starts: list[int] | None = None) -> list[list[float]]:
        """Log-probs of sequence[t] given sequence[:t] for t in [start, len) (start >= 1; default 1)."""
        ...

    def sync_weights(self, state_dict: dict[str, Any]) -> None:
        """Load new weights (from the trainer) and bump ``version``."""
        ...

