"""Category metrics of the report against hand-computed tables."""

from __future__ import annotations

import json

import pytest

from swetrain.experts.report import build_report, write_markdown, write_plots

EVAL = {"A": ["a1", "a2"], "B": ["b1", "b2"]}
UNASSIGNED = ["u1"]
EVALS = {
    "base": {"a1": 0.0, "a2": 0.5, "b1": 0.0, "b2": 0.0, "u1": 1.0},
    "expert_A": {"a1": 1.0, "a2": 0.5, "b1": 0.0, "b2": 0.0, "u1": 0.0},
    "expert_B": {"a1": 0.0, "a2": 0.0, "b1": 1.0, "b2": 0.0, "u1": 1.0},
    "mopd": {"a1": 0.5, "a2": 0.5, "b1": 1.0, "b2": 0.0, "u1": 1.0},
}


def test_report_by_hand(tmp_path):
    r = build_report(["A", "B"], EVAL, UNASSIGNED, EVALS, n_boot=500, seed=0)
    m = r["models"]
    # base: A (0 + .5)/2 = .25, B 0, full (0 + .5 + 0 + 0 + 1)/5 = .3
    assert m["base"]["by_route"] == {"A": 0.25, "B": 0.0} and m["base"]["full"] == pytest.approx(0.3)
    # routed experts: A by expert_A (1, .5), B by expert_B (1, 0), unassigned by base (1)
    assert m["routed_experts"]["per_task"] == {"a1": 1.0, "a2": 0.5, "b1": 1.0, "b2": 0.0, "u1": 1.0}
    assert m["routed_experts"]["by_route"] == {"A": 0.75, "B": 0.5} and m["routed_experts"]["full"] == pytest.approx(0.7)
    mo = r["metrics"]["mopd"]
    # mopd: A .5, B .5, full .6 -> gains A .25, B .5, full .3; G_sim .25; SSG .05
    assert mo["gains"] == pytest.approx({"A": 0.25, "B": 0.5})
    assert mo["full_gain"] == pytest.approx(0.3) and mo["g_sim"] == pytest.approx(0.25) and mo["ssg"] == pytest.approx(0.05)
    # recovery: mopd gain / routed expert gain: A .25/.5 = .5, B .5/.5 = 1
    assert mo["recovery"] == pytest.approx({"A": 0.5, "B": 1.0})
    # an expert that did not move from the base gives an undefined recovery (None in JSON)
    assert r["metrics"]["base"]["recovery"] == {"A": 0.0, "B": 0.0}
    b = r["bootstrap"]["mopd"]
    assert b["full"]["mean_diff"] == pytest.approx(0.3) and b["full"]["low"] <= 0.3 <= b["full"]["high"]
    assert b["A"]["mean_diff"] == pytest.approx(0.25)
    assert set(r["models"]) == {"base", "expert_A", "expert_B", "mopd", "routed_experts"}
    json.dumps(r, allow_nan=False)  # contract: plain JSON
    r["stages"] = {"A": [{"stage": "initial RL", "score": 0.5}]}
    r["mopd_curve"] = [{"step": 1, "kl": 0.1, "score": 0.0}, {"step": 2, "kl": 0.05, "score": 0.5}]
    plots = write_plots(r, tmp_path)
    assert all(p.is_file() and p.stat().st_size > 1000 for p in plots) and len(plots) == 4
    write_markdown(r, tmp_path / "report.md", plots)
    text = (tmp_path / "report.md").read_text()
    assert "| mopd | 50.0 | 50.0 | 60.0 |" in text and "50%" in text


def test_recovery_undefined_when_expert_did_not_move():
    evals = {k: dict(v) for k, v in EVALS.items()}
    evals["expert_A"] = dict(evals["base"])
    r = build_report(["A", "B"], EVAL, UNASSIGNED, evals, n_boot=100)
    assert r["metrics"]["mopd"]["recovery"]["A"] is None
    json.dumps(r, allow_nan=False)


def test_missing_expert_evaluation():
    evals = {k: v for k, v in EVALS.items() if k != "expert_B"}
    with pytest.raises(ValueError, match="no evaluation of expert_B"):
        build_report(["A", "B"], EVAL, UNASSIGNED, evals)
