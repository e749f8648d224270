"""report.md and the PNG plots are written with the numbers they are given."""

from __future__ import annotations

from swetrain.eval.report import write_report


def test_write_report(tmp_path):
    summary = {
        "before": {"resolved_at_1": 0.25, "resolved_at_2": 0.375, "conditional_recovery": 1 / 6},
        "after": {"resolved_at_1": 0.5, "resolved_at_2": 0.625, "conditional_recovery": 0.25},
        "steps": 2,
        "base_checkpoint": "/base",
        "trained_checkpoint": "/trained",
        "eval_tasks": 8,
        "eval_chains": 1,
    }
    metrics = [
        {"step": 1, "reward/mean": 0.2, "rollout/resolved@1": 0.25, "loss": 0.1, "grad_norm": 1.0, "time/step_s": 3.0},
        {"step": 2, "reward/mean": 0.4, "rollout/resolved@1": 0.5, "loss": -0.05, "grad_norm": 0.5, "time/step_s": 2.5},
    ]
    path = write_report(tmp_path, summary=summary, metrics=metrics, config={"recipe": "fcswe"}, notes=["a note"])
    text = path.read_text()
    assert "| Resolved@1 | 25.0% | 50.0% | +25.0 pp |" in text
    assert "| Conditional recovery | 16.7% | 25.0% | +8.3 pp |" in text
    assert "| 2 | 0.400 | 0.500 |" in text and "a note" in text
    for png in ("reward.png", "resolved_before_after.png"):
        data = (tmp_path / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
        assert f"]({png})" in text
