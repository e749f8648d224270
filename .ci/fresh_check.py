"""Checks of the fresh-install step (.ci/fresh): a quickstart run directory made right after README
command 1's install measured a policy, not an environment that cannot run tests.

    python .ci/fresh_check.py RUN_DIR

Exit 1 with one line per problem; prints what it counted.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

RUNNER_OUTPUT = re.compile(r"(\d+ (passed|failed|errors?)\b|collected \d+ items?|short test summary|= (FAILURES|ERRORS) =)")
BROKEN = re.compile(r"No module named pytest|No module named 'pytest'")
SUMMARY_KEYS = ("before", "after", "paired", "steps", "eval_tasks", "failures", "curriculum", "timings_s")


def main(run: Path) -> int:
    from swetrain.rollout.store import TrajectoryStore

    problems: list[str] = []
    summary_path = run / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    missing = [k for k in SUMMARY_KEYS if k not in summary]
    if not summary_path.is_file() or missing:
        problems.append(f"{summary_path}: missing keys {missing or 'file'}")
    episodes = with_runner = broken = 0
    for store_dir in sorted({p.parent.parent for p in run.rglob("trajectories/part-*.parquet")}):
        for traj in TrajectoryStore(store_dir).read_all():
            episodes += 1
            text = "\n".join(str(m.get("content", "")) for m in traj.messages if m.get("role") != "assistant")
            with_runner += bool(RUNNER_OUTPUT.search(text))
            broken += bool(BROKEN.search(text))
    if not episodes:
        problems.append(f"{run}: no stored episode")
    if broken:
        problems.append(f"{broken} of {episodes} episodes show 'No module named pytest' (the task environment is broken)")
    if not with_runner:
        problems.append(f"none of {episodes} episodes shows test-runner output")
    infra = summary.get("failures", {})
    print(f"fresh check: {episodes} episodes, {with_runner} with test-runner output, {broken} broken; failures {infra}")
    for p in problems:
        print(f"FAIL: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
