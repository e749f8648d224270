"""``TokenBuffer``: the aligned token columns of one attempt, built up as the agent loop runs.

The four columns of a :class:`~swetrain.agent.trajectory.Trajectory` -- ``token_ids``,
``assistant_mask``, ``segment_ids``, ``behavior_logprobs`` -- always have the same length. A buffer
grows them together: context ids (the prompt, an observation) get mask 0, segment 0 and log-prob
0.0; the ids of assistant turn ``k`` get mask 1, segment ``k`` and their behaviour log-probs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class TokenBuffer:
    """Token ids with their assistant mask, segment (assistant turn) ids and behaviour log-probs."""

    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    segments: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    def append(self, ids: Sequence[int], *, turn: int = 0, logprobs: Sequence[float] | None = None) -> None:
        """Append ``ids``: generated in assistant turn ``turn`` (1-based) with their ``logprobs``,
        or, with ``turn`` 0, context the policy did not generate (no log-probs).

        ``ids`` is extended in place, so a prompt handed to the policy as ``buffer.ids`` is the
        buffer's own list.
        """
        if turn < 0:
            raise ValueError(f"turn must be >= 0, got {turn}")
        if turn == 0:
            if logprobs is not None:
                raise ValueError("context ids have no behaviour log-probs")
            self.mask += [0] * len(ids)
            self.logprobs += [0.0] * len(ids)
        else:
            if logprobs is None or len(logprobs) != len(ids):
                got = "no" if logprobs is None else len(logprobs)
                raise ValueError(f"{got} log-probs for {len(ids)} generated ids of turn {turn}")
            self.mask += [1] * len(ids)
            self.logprobs += [float(x) for x in logprobs]
        self.segments += [turn] * len(ids)
        self.ids += ids
