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


LIB_OK = '''"""Small helpers."""


def clamp(x, lo, hi):
    """Clamp x into [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def total(items):
    """Sum of the items."""
    out = 0
    for item in items:
        out += item
    return out


def last(items):
    """The last item."""
    return items[-1]
'''

LIB_TESTS = '''from lib import clamp, last, total


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_total():
    assert total([1, 2, 3]) == 6


def test_last():
    assert last([1, 2, 3]) == 3
'''

BUG_FUNCTIONS = {"flip": "clamp", "arith": "total", "index": "last"}
BUGS = {
    "flip": ("    if x > hi:\n", "    if x <= hi:\n"),
    "arith": ("        out += item\n", "        out -= item\n"),
    "index": ("    return items[-1]\n", "    return items[-2]\n"),
}


def make_bug_task(folder, bug: str, instance_id: str | None = None):
    """A real git repository with one injected bug and its failing tests already in the repo."""
    from pathlib import Path

    from swetrain.env.gitutil import git, init_snapshot
    from swetrain.tasks.record import Task

    folder = Path(folder)
    good, bad = BUGS[bug]
    work = folder / "src-tree"
    (work / "tests").mkdir(parents=True, exist_ok=True)
    (work / "lib.py").write_text(LIB_OK.replace(good, bad))
    (work / "tests" / "test_lib.py").write_text(LIB_TESTS)
    (work / "conftest.py").write_text("")
    (work / ".gitignore").write_text("__pycache__/\n")
    repo = folder / "repo"
    base = init_snapshot(work, repo, message="base")
    (repo / "lib.py").write_text(LIB_OK)
    gold = git(repo, "diff").stdout.decode()
    git(repo, "checkout", "-q", "--", ".")
    f2p = {"flip": ["test_clamp_high", "test_clamp_inside"], "arith": ["test_total"], "index": ["test_last"]}[bug]
    allt = ["test_clamp_low", "test_clamp_high", "test_clamp_inside", "test_total", "test_last"]
    return Task(
        instance_id=instance_id or f"lib__{bug}",
        repo="swetrain-test/lib",
        base_commit=base,
        problem_statement=f"`lib.{BUG_FUNCTIONS[bug]}` misbehaves ({bug}); see the failing tests.",
        patch=gold,
        FAIL_TO_PASS=[f"tests/test_lib.py::{t}" for t in f2p],
        PASS_TO_PASS=[f"tests/test_lib.py::{t}" for t in allt if t not in f2p],
        source="repo",
    ).with_base_dir(folder)
