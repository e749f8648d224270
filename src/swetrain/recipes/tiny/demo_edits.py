"""Rewrite the shipped demonstrations' ``str_replace`` turn to the minimal unique edit.

The demonstrations were searched when :func:`~swetrain.agent.scripted_repair.edit_strings` still
copied the whole changed line (15-40 tokens) into ``old_str``; a tiny model copies at ~0.7 per
token, so such an edit almost never applied (issue 16, docs/training.md). New searches write the
minimal span; this module converts the shipped file without re-running the ~40-minute search:

1. the file the demonstration edited is rebuilt from the built-in repository's clean copy with the
   lines its grep observation showed (every built-in task is a single-line mutation of it);
2. the rebuild is checked: the recorded ``old_str`` occurs once, and the editor snippet the
   demonstration recorded after its edit is reproduced exactly from the rebuilt file;
3. :func:`~swetrain.agent.scripted_repair.edit_strings` gives the minimal edit, which must produce
   the very same file; the assistant turn and the editor's snippet are replaced.

A row that fails a check is kept unchanged (and counted). ``python -m
swetrain.recipes.tiny.demo_edits [--demos FILE]`` rewrites the file atomically.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

_SHOWN = re.compile(r"^(\d+)[:-](.*)$", re.M)


def _tool_call(content: str) -> dict[str, Any] | None:
    from swetrain.agent.parse import parse_message

    msg = parse_message(content)
    return msg.tool_calls[0].arguments if len(msg.tool_calls) == 1 and not msg.errors else None


def rebuilt_source(row: dict[str, Any], repos_dir: Path | None = None) -> str | None:
    """The edited file as the demonstration saw it, or None when it cannot be rebuilt."""
    from swetrain.tasks.builtin import REPOS_DIR

    plan = row.get("plan") or {}
    repo = str(row.get("repo", "")).rsplit("/", 1)[-1]
    path = (repos_dir or REPOS_DIR) / repo / str(plan.get("path", ""))
    tools = [m["content"] for m in row["messages"] if m["role"] == "tool"]
    if not repo or not path.is_file() or len(tools) < 2:
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    for m in _SHOWN.finditer(tools[1]):  # the grep observation
        n = int(m.group(1))
        if not 1 <= n <= len(lines):
            return None
        lines[n - 1] = m.group(2)
    return "\n".join(lines) + "\n"


def _snippet(text: str, old: str, new: str, path: str) -> str:
    from swetrain.env.tools import replace_once

    return replace_once(text, old, new, f"/testbed/{path}")[1]


def minimize_row(row: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``(row with the minimal edit, "ok")`` or ``(row unchanged, why not)``."""
    from swetrain.agent.format import tool_call_text
    from swetrain.agent.scripted_repair import edit_strings

    msgs = row["messages"]
    at = next((i for i, m in enumerate(msgs) if m["role"] == "assistant" and '"str_replace"' in m["content"]), None)
    if at is None or at + 1 >= len(msgs) or msgs[at + 1]["role"] != "tool":
        return row, "no str_replace turn"
    args = _tool_call(msgs[at]["content"])
    if args is None:
        return row, "unparsable str_replace turn"
    old, new, path = args.get("old_str"), args.get("new_str"), args.get("path")
    text = rebuilt_source(row)
    if text is None or not isinstance(old, str) or not isinstance(new, str) or text.count(old) != 1:
        return row, "file not rebuilt"
    if _snippet(text, old, new, path) != msgs[at + 1]["content"]:
        return row, "rebuilt file does not reproduce the recorded snippet"
    target = text.replace(old, new, 1)
    changed = [i for i, (a, b) in enumerate(zip(text.splitlines(), target.splitlines()), 1) if a != b]
    if len(changed) != 1 or len(text.splitlines()) != len(target.splitlines()):
        return row, "not a single-line edit"
    line = changed[0]
    mold, mnew = edit_strings(text, line, target.splitlines()[line - 1])
    if text.replace(mold, mnew, 1) != target:
        return row, "minimal edit gives another file"
    out = json.loads(json.dumps(row))
    out["messages"][at]["content"] = tool_call_text(
        "file_editor", {"command": "str_replace", "path": path, "old_str": mold, "new_str": mnew})
    out["messages"][at + 1]["content"] = _snippet(text, mold, mnew, path)
    if isinstance(out.get("plan"), dict):
        out["plan"].update(old=mold, new=mnew, line=line)
    return out, "ok"


def minimize_file(path: str | os.PathLike) -> dict[str, Any]:
    """Rewrite a demonstrations file in place (atomically); counts of rewritten and kept rows."""
    from swetrain.recipes.tiny.warmstart import load_demos

    path = Path(path)
    rows, why = [], {}
    for row in load_demos(path):
        new, reason = minimize_row(row)
        rows.append(new)
        if reason != "ok":
            why[row.get("instance_id", "?")] = reason
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)
    return {"rows": len(rows), "rewritten": len(rows) - len(why), "kept": why}


def main(argv: list[str] | None = None) -> int:
    import argparse

    from swetrain.recipes.tiny.warmstart import DEMOS_FILE

    parser = argparse.ArgumentParser(prog="python -m swetrain.recipes.tiny.demo_edits")
    parser.add_argument("--demos", default=str(DEMOS_FILE))
    args = parser.parse_args(argv)
    print(json.dumps(minimize_file(args.demos)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
