from __future__ import annotations

import json

import pytest
from label_testdata import ROWS, write_jsonl
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.label.schema import check_labels


@pytest.mark.slow
def test_label_tasks_and_report_end_to_end(tmp_path, taxonomy, embedder) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [*ROWS[:2], "{not json", {"instance_id": "bad", "repo": "a/b"}, "", ROWS[2], [1, 2]])
    out = tmp_path / "out" / "labeled.jsonl"
    runner = CliRunner()
    res = runner.invoke(app, ["label", "tasks", str(src), "--backend", "offline", "--out", str(out)])
    assert res.exit_code == 1, res.output  # rows were skipped, but the others are written
    assert f"{src}:3: invalid JSON" in res.output
    assert f"{src}:4: missing or empty required field(s) problem_statement" in res.output
    assert f"{src}:7: expected a JSON object" in res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == ["t-1", "t-2", "t-3"]
    for r, src_row in zip(rows, [ROWS[0], ROWS[1], ROWS[2]]):
        assert {k: r[k] for k in src_row} == src_row
        assert set(r["labels"]) == {"task_type", "domain", "scope", "complexity", "time", "code_language", "task_spec_type", "dependency_context"}
        assert set(r["labels"]["task_type"]) == {"l1", "l2", "rationale"}
        assert check_labels(r["labels"], taxonomy) == []
        assert r["route"] in ("A", "B", "C", None)
    rep = runner.invoke(app, ["label", "report", str(out), "--markdown"])
    assert rep.exit_code == 0, rep.output
    assert "| route | rows |" in rep.output and "**task_type** (L1)" in rep.output and "3 labelled rows" in rep.output
    js = runner.invoke(app, ["label", "report", str(out), "--json"])
    dist = json.loads(js.output.strip().splitlines()[-1])
    assert dist["n"] == 3 and sum(dist["routes"].values()) == 3
    assert sum(dist["axes"]["scope"]["overall"].values()) == 3
    table = runner.invoke(app, ["label", "report", str(out)])
    assert table.exit_code == 0 and "complexity" in table.output


def test_label_tasks_clean_input_exits_zero_and_bad_backend(tmp_path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", ROWS)
    runner = CliRunner()
    ok = runner.invoke(app, ["label", "tasks", str(src), "--no-embed", "--out", str(tmp_path / "o.jsonl")])
    assert ok.exit_code == 0, ok.output
    assert "labeled 4 row(s)" in ok.output
    bad = runner.invoke(app, ["label", "tasks", str(src), "--backend", "gpt", "--out", str(tmp_path / "o2.jsonl")])
    assert bad.exit_code != 0 and "offline" in bad.output
    missing = runner.invoke(app, ["label", "report", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_label_tasks_unreachable_llm_and_report_of_non_objects(tmp_path, monkeypatch) -> None:
    import socket

    import swetrain.label.llm as llm_mod

    monkeypatch.setattr(llm_mod.time, "sleep", lambda s: None)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    src = write_jsonl(tmp_path / "in.jsonl", ROWS[:1])
    out = tmp_path / "o.jsonl"
    res = CliRunner().invoke(app, ["label", "tasks", str(src), "--backend", "llm", "--base-url",
                                   f"http://127.0.0.1:{port}/v1", "--cache-dir", str(tmp_path / "c"), "--out", str(out)])
    assert res.exit_code == 1 and "cannot reach the endpoint" in res.output and not out.exists()
    assert res.exception is None or isinstance(res.exception, SystemExit)
    listed = tmp_path / "list.jsonl"
    listed.write_text("[1, 2]\n")
    rep = CliRunner().invoke(app, ["label", "report", str(listed)])
    assert rep.exit_code == 2 and "list.jsonl:1: expected a JSON object, got list" in rep.output


def test_label_tasks_keeps_existing_labels_unless_relabel(tmp_path) -> None:
    from swetrain.tasks.builtin import load_builtin

    route_b = [t for t in load_builtin() if t.route == "B"][:2]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(t.to_row()) + "\n" for t in route_b))
    runner = CliRunner()
    out = tmp_path / "out.jsonl"
    res = runner.invoke(app, ["label", "tasks", str(src), "--out", str(out), "--backend", "heuristic", "--no-embed"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["route"] for r in rows] == ["B", "B"] and all("labels_predicted" in r for r in rows)
    assert [r["labels"] for r in rows] == [t.labels for t in route_b]
    res = runner.invoke(app, ["label", "tasks", str(src), "--out", str(out), "--backend", "heuristic", "--no-embed", "--relabel"])
    assert res.exit_code == 0, res.output
    assert all("labels_predicted" not in json.loads(line) for line in out.read_text().splitlines())
