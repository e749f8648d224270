"""`label eval GOLD PRED` prints per-axis accuracy, macro-F1 and confusion; `label report --gold` plots."""

from __future__ import annotations

import copy
import json

from label_testdata import write_jsonl
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.label.metrics import coverage_curve, evaluate, macro_f1

LAB = {"task_type": {"l1": "bug-fix", "l2": ["off_by_one"], "rationale": "r"},
       "domain": {"l1": "data_science", "l2": ["scientific_numerical"], "rationale": "r"},
       "scope": "single_file", "complexity": "local_reasoning", "time": "small_1h", "code_language": "python",
       "task_spec_type": "specific", "dependency_context": "codebase"}


def _rows():
    gold, pred = [], []
    for i in range(4):
        g = copy.deepcopy(LAB)
        p = copy.deepcopy(LAB)
        if i == 3:
            p["domain"] = {"l1": "web_backend", "l2": ["orm_models"], "rationale": "r"}
        gold.append({"instance_id": f"i{i}", "labels": g})
        pred.append({"instance_id": f"i{i}", "labels": p, "route": "A", "label_confidence": {"domain.l1": 0.9 - 0.2 * i, "route": 0.9}})
    return gold, pred


def test_metrics_accuracy_macro_f1_confusion_and_curve() -> None:
    gold, pred = _rows()
    res = evaluate(gold, pred)
    dm = res["axes"]["domain.l1"]
    assert dm["accuracy"] == 0.75 and dm["confusion"]["labels"] == ["data_science", "web_backend"]
    assert dm["confusion"]["matrix"] == [[3, 1], [0, 0]] and dm["top_confusions"] == [("data_science", "web_backend", 1)]
    assert res["axes"]["route"]["accuracy"] == 1.0  # both domains are route A
    curve = {p["threshold"]: p for p in dm["coverage_curve"]}
    assert curve[0.0]["coverage"] == 1.0 and curve[0.5]["coverage"] == 0.75 and curve[0.5]["accuracy"] == 1.0
    assert macro_f1(["a", "a", "b"], ["a", "b", "b"]) == (2 / 3 + 2 / 3) / 2
    assert coverage_curve([True], [0.1], [0.5])[0]["accuracy"] is None


def test_cli_eval_and_report_plots(tmp_path) -> None:
    gold, pred = _rows()
    g = write_jsonl(tmp_path / "gold.jsonl", gold)
    p = write_jsonl(tmp_path / "pred.jsonl", pred[:3] + [{**pred[3], "instance_id": "unknown"}])
    runner = CliRunner()
    res = runner.invoke(app, ["label", "eval", str(g), str(p)])
    assert res.exit_code == 0, res.output
    assert "per-axis accuracy (3 rows)" in res.output and "confusion domain.l1" in res.output and "macro-F1" in res.output
    assert "1 gold row(s) have no prediction" in res.output
    js = runner.invoke(app, ["label", "eval", str(g), str(p), "--json"])
    assert json.loads(js.stdout.strip().splitlines()[-1])["axes"]["task_type.l1"]["accuracy"] == 1.0
    rep = runner.invoke(app, ["label", "report", str(p), "--gold", str(g), "--plots", str(tmp_path / "plots"), "--markdown"])
    assert rep.exit_code == 0, rep.output
    assert (tmp_path / "plots" / "confusion_domain_l1.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "abstain_curve.png").exists()
    bad = write_jsonl(tmp_path / "bad.jsonl", ["{oops"])
    res = runner.invoke(app, ["label", "eval", str(g), str(bad)])
    assert res.exit_code == 2 and "bad.jsonl:1: invalid JSON" in res.output and res.output.count("error:") == 1
    res = runner.invoke(app, ["label", "eval"])
    assert res.exit_code == 2 and "give GOLD and PRED files, or --cv" in res.output
