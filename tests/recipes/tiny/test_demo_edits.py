"""The shipped demonstrations edit with the minimal unique span, and the converter is checked."""

from __future__ import annotations

import json

from swetrain.agent.parse import parse_message
from swetrain.recipes.tiny.demo_edits import minimize_file, minimize_row, rebuilt_source
from swetrain.recipes.tiny.warmstart import DEMOS_FILE, load_demos


def _edit(row: dict) -> tuple[int, dict]:
    at = next(i for i, m in enumerate(row["messages"]) if '"str_replace"' in m["content"] and m["role"] == "assistant")
    return at, parse_message(row["messages"][at]["content"]).tool_calls[0].arguments


def test_shipped_demonstrations_edit_a_short_unique_span():
    rows = load_demos(DEMOS_FILE)
    short = rebuilt = 0
    for row in rows:
        _, args = _edit(row)
        short += "\n" not in args["old_str"] and len(args["old_str"]) <= 24
        text = rebuilt_source(row)  # None for a row whose file cannot be rebuilt (kept as searched)
        if text is None:
            continue
        rebuilt += 1
        assert text.count(args["old_str"]) == 1, row["instance_id"]
        # already minimal: converting again changes nothing
        again, reason = minimize_row(row)
        assert reason != "ok" or again["messages"] == row["messages"], row["instance_id"]
    assert rebuilt >= 0.9 * len(rows) and short >= 0.9 * len(rows)


def test_a_whole_line_edit_is_rewritten_to_the_same_file(tmp_path):
    from swetrain.agent.format import tool_call_text

    row = next(r for r in load_demos(DEMOS_FILE) if r["instance_id"] == "builtin__calcium-comparison_flip-5acc2b19")
    at, args = _edit(row)
    assert (args["old_str"], args["new_str"]) == ('!= "!"', '== "!"')
    # the row as the search wrote it before: the whole line
    old = json.loads(json.dumps(row))
    old["messages"][at]["content"] = tool_call_text("file_editor", {
        "command": "str_replace", "path": args["path"],
        "old_str": '        if self.tok.text != "!":', "new_str": '        if self.tok.text == "!":'})
    new, reason = minimize_row(old)
    assert reason == "ok" and new["messages"] == row["messages"]
    # a row whose recorded snippet the rebuilt file does not reproduce is kept as it is
    broken = json.loads(json.dumps(old))
    broken["messages"][at + 1]["content"] += "\n999 extra"
    assert minimize_row(broken) == (broken, "rebuilt file does not reproduce the recorded snippet")
    path = tmp_path / "demos.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps(broken) + "\n")
    info = minimize_file(path)
    assert info["rewritten"] == 1 and list(info["kept"].values()) == ["rebuilt file does not reproduce the recorded snippet"]
    assert [json.loads(x) for x in path.read_text().splitlines()] == [row, broken]
