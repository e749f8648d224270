"""Builds token-exact trajectories in the agent's chat format with the real tokenizer (no model)."""

from __future__ import annotations

from swetrain.agent.format import ChatFormat, tool_call_text
from swetrain.agent.trajectory import Trajectory

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "Run a shell command in the repository.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    },
    {
        "type": "function",
        "function": {"name": "finish", "description": "Submit.", "parameters": {"type": "object", "properties": {}}},
    },
]


def make_trajectory(
    tokenizer,
    tools,
    instance_id: str,
    turns: list[tuple[str, str | None]],
    *,
    chain: int = 0,
    attempt: int = 1,
    resolved: bool = False,
    invalid: list[bool] | None = None,
    context: str | None = None,
) -> Trajectory:
    """``turns``: (assistant text, observation or None for the last turn)."""
    fmt = ChatFormat(tokenizer, tools=tools)
    user = f"Resolve the issue {instance_id}." + (f"\n\n{context}" if context else "")
    ids = fmt.prompt_ids(fmt.initial_messages(user))
    prompt_len = len(ids)
    mask = [0] * len(ids)
    seg = [0] * len(ids)
    lps = [0.0] * len(ids)
    for k, (text, obs) in enumerate(turns, start=1):
        gen = fmt.encode(text) + [fmt.eot_id]
        ids += gen
        mask += [1] * len(gen)
        seg += [k] * len(gen)
        lps += [-1.0] * len(gen)
        tail = fmt.observation_ids([{"role": "tool", "content": obs}], ended_with_eot=True) if obs else fmt.closing_ids(ended_with_eot=True)
        ids += tail
        mask += [0] * len(tail)
        seg += [0] * len(tail)
        lps += [0.0] * len(tail)
    return Trajectory(
        instance_id=instance_id,
        chain=chain,
        attempt=attempt,
        token_ids=ids,
        assistant_mask=mask,
        segment_ids=seg,
        behavior_logprobs=lps,
        invalid=invalid if invalid is not None else [False] * len(turns),
        num_turns=len(turns),
        resolved=resolved,
        prompt_len=prompt_len,
        context=context,
    )


def fix_turns(line: str) -> list[tuple[str, str | None]]:
    return [
        (tool_call_text("execute_bash", {"command": "pytest -x -q"}), "FAILED test_a - assert 1 == 2"),
        (tool_call_text("execute_bash", {"command": f"sed -i '3s/.*/{line}/' a.py"}), "ok"),
        (tool_call_text("finish", {}), None),
    ]
