"""`label audit --labels`: every injected violation is caught, one line each; provenance is recorded."""

from __future__ import annotations

import copy
import json

import pytest
from label_testdata import ROWS, write_jsonl
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.label.audit import audit_labels_file
from swetrain.label.labeler import Labeler
from swetrain.label.provenance import taxonomy_hash


@pytest.fixture(scope="module")
def labeled(taxonomy) -> list[dict]:
    return Labeler("offline", taxonomy=taxonomy, use_embeddings=False).label_rows(ROWS)


def test_labels_carry_provenance(labeled, taxonomy) -> None:
    prov = labeled[0]["label_provenance"]
    assert prov["backend"] == "offline" and prov["backend_version"] == "heuristic-v1"
    assert prov["taxonomy_sha256"] == taxonomy_hash(taxonomy) and prov["labeled_at"].endswith("Z")


INJECT = {
    "unknown L1": (lambda r: r["labels"]["task_type"].update(l1="wizardry"), "task_type.l1 'wizardry' is not a declared L1"),
    "L2 outside L1": (lambda r: r["labels"]["domain"].update(l2=["orm_models"]) if r["labels"]["domain"]["l1"] != "web_backend"
                      else r["labels"]["domain"].update(l2=["scientific_numerical"]), "is not a child of"),
    "unknown scale": (lambda r: r.update(labels={**r["labels"], "time": "forever"}), "time 'forever' is not one of"),
    "missing rationale": (lambda r: r["labels"]["task_type"].update(rationale=""), "missing rationale for task_type"),
    "route not from domain": (lambda r: r.update(route="B" if r["route"] != "B" else "A"), "does not follow domain L1"),
    "other taxonomy": (lambda r: r["label_provenance"].update(taxonomy_sha256="0123456789abcdef"), "another taxonomy version"),
    "no provenance": (lambda r: r.pop("label_provenance"), "no label_provenance"),
    "no labels": (lambda r: r.pop("labels"), "no labels"),
}


@pytest.mark.parametrize("name", list(INJECT))
def test_audit_catches_each_injected_violation(name, labeled, taxonomy, tmp_path) -> None:
    clean = write_jsonl(tmp_path / "clean.jsonl", labeled)
    assert audit_labels_file(clean, taxonomy) == []
    rows = copy.deepcopy(labeled)
    inject, message = INJECT[name]
    inject(rows[1])
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    problems = audit_labels_file(bad, taxonomy)
    assert len(problems) == 1, problems
    assert message in problems[0] and f"{bad}:2" in problems[0]


def test_cli_audit_labels_exit_codes_and_one_error_per_foreign_taxonomy(labeled, tmp_path) -> None:
    runner = CliRunner()
    clean = write_jsonl(tmp_path / "clean.jsonl", labeled)
    res = runner.invoke(app, ["label", "audit", "--labels", str(clean)])
    assert res.exit_code == 0 and "labels OK" in res.output
    rows = copy.deepcopy(labeled)
    for r in rows:
        r["label_provenance"]["taxonomy_sha256"] = "feedfacefeedface"
    old = write_jsonl(tmp_path / "old.jsonl", rows)
    res = runner.invoke(app, ["label", "audit", "--labels", str(old)])
    assert res.exit_code == 1
    lines = [x for x in res.output.splitlines() if x.startswith("VIOLATION")]
    assert len(lines) == 1 and f"{len(rows)} row(s) labeled with another taxonomy version" in lines[0]
    res = runner.invoke(app, ["label", "audit", "--labels", str(tmp_path / "absent.jsonl")])
    assert res.exit_code == 1 and "file does not exist" in res.output


def test_labels_file_is_written_atomically_or_not_at_all(tmp_path, monkeypatch) -> None:
    """An unreachable endpoint fails before anything is written; an existing output stays intact."""
    import socket

    src = write_jsonl(tmp_path / "in.jsonl", ROWS[:1])
    out = tmp_path / "out.jsonl"
    out.write_text("previous\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr("time.sleep", lambda s: None)
    res = CliRunner().invoke(app, ["label", "tasks", str(src), "--backend", "llm", "--base-url", f"http://127.0.0.1:{port}/v1",
                                   "--out", str(out), "--cache-dir", str(tmp_path / "c")])
    assert res.exit_code == 1 and res.output.count("error:") == 1 and "cannot reach the endpoint" in res.output
    assert out.read_text() == "previous\n" and [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []
    json.dumps(res.output)
