"""The trajectory record: one executed attempt of one chain on one task, token-exact.

Token arrays are aligned (same length): ``token_ids`` is the prompt, then every assistant turn's
generated ids verbatim, then every observation's ids; ``assistant_mask[t] == 1`` exactly on the ids
the policy generated in this trajectory; ``segment_ids[t]`` is the 1-based assistant turn of a
generated id and 0 elsewhere; ``behavior_logprobs[t]`` is the behaviour policy's log-prob of a
generated id and 0.0 elsewhere. ``invalid[k]`` flags assistant turn k+1 (segment k+1) as an invalid
tool call / malformed thinking message (FC-SWE's -5 advantage override applies to its tokens).
Failure-context tokens of a recovery attempt are part of the prompt, so they are never trainable.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from swetrain.env.verdict import Verdict

# Columns stored as JSON text in Parquet (nested, free-form values).
_JSON_COLUMNS = ("messages", "timings", "invalid_reasons", "verdict")

#: Why an attempt ended (``Trajectory.stop_reason``, the Parquet column of the same name):
#: ``submitted`` (the agent called ``finish``), or a limit: ``context`` (the next call would not fit
#: the effective context limit, see ``agent.loop.effective_context_limit``), ``turns``
#: (``max_turns``), ``tokens`` (``max_output_tokens``), ``wall`` (``max_wall_s``). Every reason is
#: stored and scored alike: the patch at that point is verified.
TERMINATION_REASONS = ("submitted", "context", "turns", "tokens", "wall")
# Names written by earlier versions, read back as the current ones.
_LEGACY_TERMINATION = {"finish": "submitted", "context_limit": "context", "max_turns": "turns", "wall_time": "wall"}


def termination_reason(value: str) -> str:
    """``value`` in the current vocabulary (earlier names such as ``context_limit`` mapped)."""
    return _LEGACY_TERMINATION.get(value, value)


@dataclass
class Trajectory:
    instance_id: str
    chain: int = 0
    attempt: int = 1  # r, 1-based
    active: bool = True  # q_{c,r}: stored trajectories were executed, so True
    context_variant: str = "none"
    context: str | None = None  # the failure context copied into the prompt (None on attempt 1)
    messages: list[dict[str, Any]] = field(default_factory=list)
    token_ids: list[int] = field(default_factory=list)
    assistant_mask: list[int] = field(default_factory=list)
    segment_ids: list[int] = field(default_factory=list)
    behavior_logprobs: list[float] = field(default_factory=list)
    invalid: list[bool] = field(default_factory=list)  # one per assistant turn
    invalid_reasons: list[list[str]] = field(default_factory=list)  # error codes per assistant turn
    patch: str = ""
    verdict: Verdict | None = None
    resolved: bool = False
    input_tokens: int = 0  # prompt tokens fed to the policy, summed over calls
    output_tokens: int = 0  # generated tokens
    num_turns: int = 0
    stop_reason: str = ""  # termination reason: one of TERMINATION_REASONS
    timings: dict[str, float] = field(default_factory=dict)
    policy_version: int = 0
    prompt_len: int = 0
    seed: int | None = None

    # ------------------------------------------------------------------ derived views
    @property
    def reward(self) -> float:
        """Trajectory-local reward r_{c,r} = y_{c,r} (FC-SWE): 1 iff this attempt's patch resolved."""
        return 1.0 if self.resolved else 0.0

    @property
    def invalid_token_mask(self) -> list[int]:
        """1 on generated ids of invalid assistant turns (where the -5 override applies)."""
        bad = {k + 1 for k, flag in enumerate(self.invalid) if flag}
        return [1 if s in bad else 0 for s in self.segment_ids]

    def generated_ids(self, turn: int) -> list[int]:
        """Ids generated in assistant turn ``turn`` (1-based), in order."""
        return [t for t, s in zip(self.token_ids, self.segment_ids) if s == turn]

    def check(self) -> None:
        """Raise ValueError if the aligned arrays disagree (guards every stored row)."""
        n = len(self.token_ids)
        for name in ("assistant_mask", "segment_ids", "behavior_logprobs"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"trajectory {self.instance_id}/{self.chain}/{self.attempt}: {name} has "
                                 f"{len(getattr(self, name))} entries for {n} token ids")
        for t, (m, s) in enumerate(zip(self.assistant_mask, self.segment_ids)):
            if (m == 1) != (s > 0):
                raise ValueError(f"trajectory {self.instance_id}: token {t} has mask {m} but segment {s}")
        if any(self.assistant_mask[: self.prompt_len]):
            raise ValueError(f"trajectory {self.instance_id}: prompt tokens are marked trainable")
        if len(self.invalid) != self.num_turns:
            raise ValueError(f"trajectory {self.instance_id}: {len(self.invalid)} invalid flags for {self.num_turns} turns")
        if self.segment_ids and max(self.segment_ids) > self.num_turns:
            raise ValueError(f"trajectory {self.instance_id}: segment id above num_turns")

    # ------------------------------------------------------------------ rows
    def to_row(self) -> dict[str, Any]:
        """A flat dict for Parquet: token arrays as lists, nested values as JSON text."""
        row: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "verdict":
                value = value.model_dump_json() if value is not None else None
            elif f.name in _JSON_COLUMNS:
                value = json.dumps(value, ensure_ascii=False)
            row[f.name] = value
        row["reward"] = self.reward
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Trajectory:
        """Inverse of :meth:`to_row` (accepts numpy arrays from pandas, ignores unknown columns)."""
        kwargs: dict[str, Any] = {}
        names = {f.name for f in fields(cls)}
        for name, value in row.items():
            if name not in names:
                continue
            if hasattr(value, "tolist"):
                value = value.tolist()
            if name == "verdict":
                value = Verdict.model_validate_json(value) if value else None
            elif name in _JSON_COLUMNS:
                value = json.loads(value) if isinstance(value, str) else value
            kwargs[name] = value
        for key in ("token_ids", "assistant_mask", "segment_ids"):
            if key in kwargs:
                kwargs[key] = [int(x) for x in kwargs[key]]
        if "behavior_logprobs" in kwargs:
            kwargs["behavior_logprobs"] = [float(x) for x in kwargs["behavior_logprobs"]]
        if "invalid" in kwargs:
            kwargs["invalid"] = [bool(x) for x in kwargs["invalid"]]
        if kwargs.get("seed") is not None:
            kwargs["seed"] = int(kwargs["seed"])
        if isinstance(kwargs.get("stop_reason"), str):
            kwargs["stop_reason"] = termination_reason(kwargs["stop_reason"])
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.model_dump(mode="json") if self.verdict is not None else None
        return d
